import { describe, expect, it } from 'vitest';
import { body } from '../support/fixtures.js';
import { postEvents, type SseEvent } from '../support/events.js';
import { balanceOf, openTestAccount } from '../support/accounts.js';
import { post, useTestHost } from '../support/local.js';

const host = useTestHost();

const names = (events: SseEvent[]) => events.map((e) => e.event);

describe('POST /api/v1/prompt with Accept: text/event-stream', () => {
  it('streams deltas and a result per model, then done with the whole answer, byte for byte the JSON body', async () => {
    const models = ['fam_c-5.4', 'claude-opus-4-6', 'fam_b-3.1-pro'];
    const answer = await postEvents(host(), body({ models }));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('x-accel-buffering')).toBe('no');
    const { events } = answer;
    expect(events.at(-1)!.event).toBe('done');
    expect(names(events).filter((n) => n === 'done')).toHaveLength(1);
    // Only deltas and results before done, each model's deltas before its result.
    expect(new Set(names(events.slice(0, -1)))).toEqual(new Set(['delta', 'result']));
    const done = events.at(-1)!;
    const results = events.filter((e) => e.event === 'result');
    expect(results.map((e) => e.json.index).sort()).toEqual([0, 1, 2]);
    for (const [index, modelId] of models.entries()) {
      const resultAt = events.findIndex((e) => e.event === 'result' && e.json.index === index);
      const deltas = events.filter((e, at) => e.event === 'delta' && e.json.index === index && at < resultAt);
      expect(events.filter((e) => e.event === 'delta' && e.json.index === index)).toHaveLength(deltas.length);
      expect(deltas.length).toBeGreaterThanOrEqual(1);
      for (const delta of deltas) expect(delta.json).toEqual({ index, modelId, text: expect.any(String) });
      const result = events[resultAt]!.json.result;
      expect(result).toMatchObject({ modelId, status: 'completed' });
      expect(deltas.map((d) => d.json.text).join('')).toBe(result.output);
    }
    // done is the JSON answer, built from the very results the result events carried.
    const { promptLogId, creditsUsed } = done.json;
    const byIndex = [...results].sort((a, b) => a.json.index - b.json.index).map((e) => e.json.result);
    expect(done.data).toBe(JSON.stringify({ promptLogId, results: byIndex, evaluations: [], creditsUsed }));
  });

  it('charges the stream as the JSON call: the balance moves by the creditsUsed that done carries, and the reservation closes', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    const answer = await postEvents(host(), body(), { headers: auth });
    const done = answer.events.at(-1)!;
    expect(done.event).toBe('done');
    expect(await balanceOf(host(), accountId)).toBe(100_000_000 - Math.round(done.json.creditsUsed * 1e6));
    const account = await host().gateway.accounts.get(accountId);
    expect(account!.reservations).toEqual({});
    const log = await host().gateway.promptLogs.get(done.json.promptLogId);
    expect(log).toBeDefined();
  });

  it('answers a JSON call with the same body shape as the done event', async () => {
    host().simulator.setLatency(0);
    const json = await post(host(), body({ models: ['fam_c-5.4'] }));
    const stream = await postEvents(host(), body({ models: ['fam_c-5.4'] }));
    const done = stream.events.at(-1)!.json;
    const strip = (answer: any) => ({ ...answer, promptLogId: 'x', results: answer.results.map((r: any) => ({ ...r, latencyMs: 0 })) });
    expect(strip(done)).toEqual(strip(json.body));
  });
});
