import { describe, expect, it } from 'vitest';
import { planCall } from '../../shared/compare/model-call.js';
import { runModels } from '../../shared/compare/run-models.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import type { Router } from '../../shared/providers/router.js';
import { gate } from '../support/gate.js';
import { suiteSimulator } from '../support/simulator.js';

const sim = await suiteSimulator();

/** One model of each wire protocol: chat completions, Responses, Messages, generateContent, Converse (signed by the SDK). */
const ONE_PER_PROTOCOL = ['fam_d-4.3', 'fam_c-5.4-mini', 'fam_a-haiku-4-5', 'fam_b-3.5-flash', 'fam_h-micro'];

const route: Router = (entry) => ({ adapter: ADAPTERS[entry.protocol], endpoint: { baseUrl: sim.baseUrl(entry.provider), region: 'us-east-1', simulated: true } });

function calls() {
  const request = validatePromptRequest({ prompt: 'Name a prime number.', models: ONE_PER_PROTOCOL });
  return request.models.map((model) => planCall(request, model));
}

describe('Function: runModels with every adapter, sent once ready (how the fan-out waits for the reserve)', () => {
  it('prepares each call, sends none before `ready` resolves, then sends each once', async () => {
    const ready = gate();
    let readyOpen = false;
    const prepared: string[] = [];
    const allPrepared = gate();
    const sent: { model: string; readyOpen: boolean }[] = [];
    // Each adapter as it is, its calls' preparations and sends recorded as they happen.
    const recording: Router = (entry) => {
      const { adapter, endpoint } = route(entry);
      return {
        endpoint,
        adapter: {
          ...adapter,
          prepare: (call, at, onDelta) => {
            const preparedCall = adapter.prepare(call, at, onDelta);
            prepared.push(entry.id);
            if (prepared.length === ONE_PER_PROTOCOL.length) allPrepared.open();
            return {
              ...preparedCall,
              send: (signal) => {
                sent.push({ model: entry.id, readyOpen });
                return preparedCall.send(signal);
              },
            };
          },
        },
      };
    };
    const running = runModels(calls(), { route: recording, deadlineAt: Date.now() + 20_000, ready: ready.opened });
    // Every call prepared while the reserve is pending: none may have gone out yet.
    await allPrepared.opened;
    expect(sent).toEqual([]);
    readyOpen = true;
    ready.open();
    const results = await running;
    expect(prepared.sort()).toEqual([...ONE_PER_PROTOCOL].sort());
    // Each sent once, every one after `ready`.
    expect(sent.map((s) => s.model).sort()).toEqual([...ONE_PER_PROTOCOL].sort());
    expect(sent.every((s) => s.readyOpen)).toBe(true);
    expect(results.map((r) => r.status)).toEqual(ONE_PER_PROTOCOL.map(() => 'completed'));
    expect(results.every((r) => r.output !== '')).toBe(true);
    expect(sim.calls()).toHaveLength(ONE_PER_PROTOCOL.length);
  });

  it('sends nothing when `ready` rejects, and fails every call', async () => {
    const results = await runModels(calls(), { route, deadlineAt: Date.now() + 20_000, ready: Promise.reject(new Error('402: not reserved')) });
    expect(results.map((r) => r.status)).toEqual(ONE_PER_PROTOCOL.map(() => 'failed'));
    expect(sim.calls()).toHaveLength(0);
  });
});
