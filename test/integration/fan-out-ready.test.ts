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
    const running = runModels(calls(), { route, deadlineAt: Date.now() + 20_000, ready: ready.opened });
    // Time for a call sent too early to reach the simulator (a store answering the reserve).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const receivedBeforeReady = sim.calls().length;
    ready.open();
    const results = await running;
    expect(receivedBeforeReady).toBe(0);
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
