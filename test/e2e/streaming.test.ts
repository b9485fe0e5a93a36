import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import type { JudgingWorkflow } from '../../shared/judging/workflow-types.js';
import { body } from '../support/fixtures.js';
import { gate } from '../support/gate.js';
import { postEvents, type SseEvent } from '../support/events.js';
import { balanceOf, openTestAccount, until } from '../support/accounts.js';
import { post, useTestHost } from '../support/local.js';

// A short keep-alive, so that an idle stream's comment is seen without waiting 15 s; a
// deadline beyond the test timeout, so that a hanging call only a disconnect can end fails the test.
const host = useTestHost({ SSE_KEEPALIVE_MS: '50', DEMO_CREDITS: '1000', REQUEST_DEADLINE_MS: '120000' });

const names = (events: SseEvent[]) => events.map((e) => e.event);

describe('POST /api/v1/prompt with Accept: text/event-stream', () => {
  it('streams deltas and a result per model, then done with the whole answer, byte for byte the JSON body', async () => {
    const models = ['fam_c-5.4', 'claude-opus-4-6', 'fam_b-3.1-pro'];
    const answer = await postEvents(host(), body({ models }));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('no-store, no-transform');
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

  it("streams Groq's structured output as one delta, since Groq streams no json_schema call, beside a model that streams it", async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const models = ['fam_i-gpt-oss-120b', 'fam_c-5.4-mini'];
    const { status, events } = await postEvents(host(), body({ models, response_schema: schema }));
    expect(status).toBe(200);
    const deltas = (index: number) => events.filter((e) => e.event === 'delta' && e.json.index === index).map((e) => e.json.text as string);
    const result = (index: number) => events.find((e) => e.event === 'result' && e.json.index === index)!.json.result;
    expect(result(0)).toMatchObject({ modelId: 'fam_i-gpt-oss-120b', status: 'completed' });
    expect(deltas(0)).toEqual([result(0).output]);
    expect(JSON.parse(result(0).output)).toEqual({ answer: expect.any(String) });
    expect(result(0).warnings).toContain("Groq does not stream structured output: fam_i-gpt-oss-120b's answer was read whole, not streamed");
    expect(result(1)).toMatchObject({ modelId: 'fam_c-5.4-mini', status: 'completed' });
    expect(deltas(1).length).toBeGreaterThan(1);
    expect(result(1).warnings ?? []).not.toContain(expect.stringContaining('does not stream'));
  });

  it('streams for an Accept sent on two lines as for the one line they make (RFC 9110: it read only the last)', async () => {
    const contentType = (accept: string | string[]) =>
      new Promise<string | undefined>((resolve, reject) => {
        const request = httpRequest(`${host().url}/api/v1/prompt`, {
          method: 'POST',
          headers: { authorization: `Bearer ${host().demo.apiKey}`, 'content-type': 'application/json', accept },
        });
        request.on('error', reject);
        request.on('response', (response) => {
          response.resume();
          response.on('end', () => resolve(response.headers['content-type']));
        });
        request.end(JSON.stringify(body({ models: ['fam_c-5.4'] })));
      });
    const streams = 'text/event-stream; charset=utf-8';
    expect(await contentType(['text/event-stream', 'text/html'])).toBe(streams);
    expect(await contentType('text/event-stream, text/html')).toBe(streams);
    expect(await contentType(['text/html', 'application/json'])).toMatch(/^application\/json/);
  });

  it("answers the README's event-stream example with the creditsUsed its done event shows", async () => {
    // The curl of the README's streaming example: its body, and the done line it shows.
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const example = readme.slice(readme.indexOf("-H 'Accept: text/event-stream'"));
    const payload = JSON.parse(/-d '(\{[^']*\})'/.exec(example)![1]!);
    const shown = Number(/event: done\ndata: \{.*"creditsUsed":([\d.]+)\}/.exec(example)![1]);
    const answer = await postEvents(host(), payload);
    expect(answer.events.at(-1)!.event).toBe('done');
    expect(answer.events.at(-1)!.json.creditsUsed).toBe(shown);
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

  it("sends a failed model's result with its error while the others complete", async () => {
    host().simulator.setFault({ kind: 'status', status: 400, provider: 'google' });
    const { events } = await postEvents(host(), body({ models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'] }));
    const results = new Map(events.filter((e) => e.event === 'result').map((e) => [e.json.index, e.json.result]));
    expect(results.get(2)).toMatchObject({ modelId: 'fam_b-3.1-pro', status: 'failed', output: '', error: { code: expect.any(String), upstreamStatus: 400 } });
    expect(results.get(0)).toMatchObject({ status: 'completed' });
    expect(results.get(1)).toMatchObject({ status: 'completed' });
    expect(events.some((e) => e.event === 'delta' && e.json.index === 2)).toBe(false);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.json.results).toEqual([0, 1, 2].map((i) => results.get(i)));
  });

  it('fails a model whose vendor stream ends before its final event, charges the text it delivered, and completes the others', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    // Anthropic's stream stops halfway through its bytes and the connection closes cleanly: no message_stop.
    host().simulator.setFault({ kind: 'malformed', provider: 'anthropic' });
    const { events } = await postEvents(host(), body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'] }), { headers: auth });
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    const [completed, cut] = done.json.results;
    expect(completed).toMatchObject({ modelId: 'fam_c-5.4', status: 'completed' });
    expect(cut).toMatchObject({ modelId: 'fam_a-opus-4-6', status: 'failed', output: '', providerCost: null, error: { code: 'upstream_malformed_response' } });
    expect(cut.error.message).toContain('message_stop');
    // Its text went out as deltas before the cut, and is what it is charged for (no usage arrived: the estimate).
    const delivered = events.filter((e) => e.event === 'delta' && e.json.index === 1).map((e) => e.json.text);
    expect(delivered.join('')).not.toBe('');
    expect(cut.estimatedCost).toBeGreaterThan(0);
    const settlements = (await host().gateway.ledger.list(accountId)).filter((entry) => entry.kind === 'settle');
    expect(settlements).toHaveLength(1);
    expect(settlements[0]!.chargedMicro).toBe(Math.round(done.json.creditsUsed * 1e6));
    expect(settlements[0]!.chargedMicro).toBeGreaterThan(Math.round(completed.providerCost * 100 * 1e6));
    expect(await balanceOf(host(), accountId)).toBe(100_000_000 - settlements[0]!.chargedMicro!);
  });

  it('streams a judged request: the results when the workflow returns them, each evaluation, the ranking, then done', async () => {
    const { events } = await postEvents(host(), body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'], judges: ['fam_c-4.1'] }));
    expect(names(events)).not.toContain('delta');
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    const evaluationCount = done.json.evaluations.length;
    expect(evaluationCount).toBeGreaterThan(0);
    expect(names(events)).toEqual(['result', 'result', ...Array(evaluationCount).fill('evaluation'), 'ranking', 'done']);
    const results = events.filter((e) => e.event === 'result').map((e) => e.json);
    expect(results.map((r) => r.index)).toEqual([0, 1]);
    const evaluations = events.filter((e) => e.event === 'evaluation').map((e) => e.json.evaluation);
    const ranking = events.find((e) => e.event === 'ranking')!.json;
    const { promptLogId, creditsUsed } = done.json;
    expect(done.data).toBe(
      JSON.stringify({ promptLogId, results: results.map((r) => r.result), evaluations, ranking: ranking.ranking, judgeStatistics: ranking.judgeStatistics, creditsUsed }),
    );
  });

  it('keeps refusals ordinary JSON answers with their status: 400 for a bad body, 402 for a short balance; nothing is called', async () => {
    const bad = await postEvents(host(), { models: ['fam_c-5.4'] });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/json/);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', details: [expect.objectContaining({ field: expect.stringContaining('prompt') })] });
    const { accountId, auth } = await openTestAccount(host(), 0);
    const poor = await postEvents(host(), body(), { headers: auth });
    expect(poor.status).toBe(402);
    expect(poor.headers.get('content-type')).toMatch(/^application\/json/);
    expect(poor.body.estimatedCreditsRequired).toBeGreaterThan(0);
    expect(await balanceOf(host(), accountId)).toBe(0);
    expect(host().simulator.calls()).toHaveLength(0);
  });

  it('ends with an error event when the run fails after the stream started, and charges nothing', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    // The judge workflow's execution fails, as a failed Step Functions execution would.
    const workflow = (host().gateway.prompts as unknown as { deps: { judging: { workflow: JudgingWorkflow } } }).deps.judging.workflow;
    vi.spyOn(workflow, 'run').mockRejectedValue(new Error('execution failed'));
    const answer = await postEvents(host(), body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'], judges: ['fam_c-4.1'] }), { headers: auth });
    expect(answer.status).toBe(200);
    expect(names(answer.events)).toEqual(['error']);
    expect(answer.events[0]!.json).toEqual({ error: { code: 'internal_error', message: expect.any(String) } });
    expect(await balanceOf(host(), accountId)).toBe(100_000_000);
    expect((await host().gateway.accounts.get(accountId))!.reservations).toEqual({});
  });

  it('stops the model calls of a caller who disconnects, charges what they used once, and closes the reservation', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    // Anthropic never answers: only the caller's disconnect can end its call (the deadline is past the test's timeout).
    host().simulator.setFault({ kind: 'hang', provider: 'anthropic' });
    const answer = await postEvents(host(), body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'] }), {
      headers: auth,
      stopAfter: (item) => 'event' in item && item.event === 'result' && item.json.index === 0,
    });
    expect(answer.events.map((e) => e.event)).toContain('delta');
    expect(names(answer.events)).not.toContain('done');
    // postEvents returned once the host finished the request: the hanging call was stopped, not waited out.
    const settlements = (await host().gateway.ledger.list(accountId)).filter((entry) => entry.kind === 'settle');
    expect(settlements).toHaveLength(1);
    const log = (await host().gateway.promptLogs.get(settlements[0]!.requestId!))!;
    const [completed, cancelled] = log.models;
    expect(completed).toMatchObject({ modelId: 'fam_c-5.4', status: 'completed' });
    // No usage arrived for the stopped call: charged the missing-usage estimate of its input.
    expect(cancelled).toMatchObject({ modelId: 'fam_a-opus-4-6', status: 'cancelled', errorCode: 'cancelled', providerCost: null });
    expect(cancelled!.estimatedCost).toBeGreaterThan(0);
    const chargedMicro = settlements[0]!.chargedMicro!;
    expect(chargedMicro).toBe(log.creditsUsedMicro);
    expect(chargedMicro).toBeGreaterThan(Math.round(completed!.providerCost! * 100 * 1e6));
    expect(await balanceOf(host(), accountId)).toBe(100_000_000 - chargedMicro);
    expect(await host().gateway.credits.ledgerSum(accountId)).toBe(100_000_000 - chargedMicro);
    expect((await host().gateway.accounts.get(accountId))!.reservations).toEqual({});
  });

  it('sends no call for a caller who disconnects while its reserve is in flight: the local host sees it leave before the 200', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    const gateway = host().gateway;
    // The reserve held until the caller has gone; the signal the run listens on, caught.
    const held = gate();
    const reserve = gateway.credits.reserve.bind(gateway.credits);
    let reserving = false;
    vi.spyOn(gateway.credits, 'reserve').mockImplementation(async (...args) => {
      reserving = true;
      await held.opened;
      return reserve(...args);
    });
    const start = gateway.prompts.start.bind(gateway.prompts);
    let signal: AbortSignal | undefined;
    vi.spyOn(gateway.prompts, 'start').mockImplementation((accountId, request, options = {}) => {
      signal = options.signal;
      return start(accountId, request, options);
    });
    const calls = host().simulator.calls().length;
    const request = httpRequest(`${host().url}/api/v1/prompt`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', accept: 'text/event-stream' } });
    request.on('error', () => undefined);
    request.end(JSON.stringify(body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'] })));
    await until(() => reserving);
    request.destroy();
    await until(() => signal?.aborted === true);
    held.open();
    // The request, from its handler to the writes after its answer, has ended.
    await until(() => host().inFlight() === 0);
    await host().settled();
    expect(host().simulator.calls()).toHaveLength(calls);
    const settlements = (await gateway.ledger.list(accountId)).filter((entry) => entry.kind === 'settle');
    expect(settlements.map((entry) => entry.chargedMicro)).toEqual([0]);
    const log = (await gateway.promptLogs.get(settlements[0]!.requestId!))!;
    expect(log.models.map((model) => [model.status, model.errorCode])).toEqual([
      ['cancelled', 'cancelled'],
      ['cancelled', 'cancelled'],
    ]);
    expect(await balanceOf(host(), accountId)).toBe(100_000_000);
    expect((await gateway.accounts.get(accountId))!.reservations).toEqual({});
  });

  it('sends no call for pipelined callers gone while their reserves are in flight, the second one too (its own response hears no close)', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    const gateway = host().gateway;
    const held = gate();
    const reserve = gateway.credits.reserve.bind(gateway.credits);
    let reserving = 0;
    vi.spyOn(gateway.credits, 'reserve').mockImplementation(async (...args) => {
      reserving++;
      await held.opened;
      return reserve(...args);
    });
    const start = gateway.prompts.start.bind(gateway.prompts);
    const signals: AbortSignal[] = [];
    vi.spyOn(gateway.prompts, 'start').mockImplementation((accountId, request, options = {}) => {
      if (options.signal) signals.push(options.signal);
      return start(accountId, request, options);
    });
    const calls = host().simulator.calls().length;
    const payload = JSON.stringify(body({ models: ['fam_c-5.4'] }));
    const one = `POST /api/v1/prompt HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
    const socket = connect(Number(new URL(host().url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(one + one);
    await until(() => reserving === 2);
    socket.destroy();
    await until(() => signals.length === 2 && signals.every((signal) => signal.aborted));
    held.open();
    await until(() => host().inFlight() === 0);
    await host().settled();
    expect(host().simulator.calls()).toHaveLength(calls);
    const settlements = (await gateway.ledger.list(accountId)).filter((entry) => entry.kind === 'settle');
    expect(settlements.map((entry) => entry.chargedMicro)).toEqual([0, 0]);
    expect(await balanceOf(host(), accountId)).toBe(100_000_000);
  });

  it('hears a dozen requests pipelined on one socket with one listener on it (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const warned = (warning: Error) => warnings.push(warning);
    process.on('warning', warned);
    try {
      const payload = JSON.stringify(body({ models: ['fam_c-5.4'] }));
      const one = `POST /api/v1/prompt HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${host().demo.apiKey}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
      const socket = connect(Number(new URL(host().url).port), '127.0.0.1');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      socket.write(one.repeat(12));
      await until(() => (received.match(/HTTP\/1\.1 200/g) ?? []).length === 12);
      socket.destroy();
      await host().settled();
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', warned);
    }
  });

  it('stops a model that is part way through its stream when the caller disconnects, and charges it once', async () => {
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    // Anthropic's frames come 1 s apart: its first text arrives after a few, and the rest of its
    // stream (more text, then usage) takes seconds more, so a cancelled result can only come from the disconnect.
    host().simulator.setFault({ kind: 'slow-stream', delayMs: 1_000, provider: 'anthropic' });
    const answer = await postEvents(host(), body({ models: ['fam_a-opus-4-6'] }), {
      headers: auth,
      stopAfter: (item) => 'event' in item && item.event === 'delta',
    });
    expect(names(answer.events)).toEqual(['delta']);
    const settlements = (await host().gateway.ledger.list(accountId)).filter((entry) => entry.kind === 'settle');
    expect(settlements).toHaveLength(1);
    const log = (await host().gateway.promptLogs.get(settlements[0]!.requestId!))!;
    expect(log.models[0]).toMatchObject({ modelId: 'fam_a-opus-4-6', status: 'cancelled', providerCost: null });
    expect(log.models[0]!.estimatedCost).toBeGreaterThan(0);
    expect(await balanceOf(host(), accountId)).toBe(100_000_000 - settlements[0]!.chargedMicro!);
    expect((await host().gateway.accounts.get(accountId))!.reservations).toEqual({});
  });

  it("lets a call that was about to end when its caller disconnected end, charged its vendor's final usage (hidden reasoning included)", async () => {
    // OpenAI Responses reports usage only in its final event. The JSON answer gives the whole text; the streamed
    // caller leaves as soon as it has all of it, while the final event is still 200 ms away.
    const request = body({ models: ['fam_c-5.4'], model_tuning: { 'fam_c-5.4': { reasoningEffort: 'high' } } });
    const whole = (await post(host(), request)).body.results[0];
    expect(whole.usage.reasoningTokensOut).toBeGreaterThan(0);
    host().simulator.setFault({ kind: 'slow-stream', delayMs: 200, provider: 'openai' });
    const { accountId, auth } = await openTestAccount(host(), 100_000_000);
    let text = '';
    const answer = await postEvents(host(), request, {
      headers: auth,
      stopAfter: (item) => 'event' in item && item.event === 'delta' && (text += item.json.text) === whole.output,
    });
    expect(names(answer.events)).not.toContain('result');
    const settlements = (await host().gateway.ledger.list(accountId)).filter((entry) => entry.kind === 'settle');
    const log = (await host().gateway.promptLogs.get(settlements[0]!.requestId!))!;
    expect(log.models[0]).toMatchObject({ modelId: 'fam_c-5.4', status: 'completed', providerCost: whole.providerCost });
    expect(settlements[0]!.chargedMicro).toBe(log.creditsUsedMicro);
  });

  it('sends a keep-alive comment while nothing else is sent', async () => {
    host().simulator.setFault({ kind: 'hang', provider: 'openai' });
    const answer = await postEvents(host(), body({ models: ['fam_c-5.4'] }), { stopAfter: (item) => 'comment' in item });
    expect(answer.comments).toEqual(['keep-alive']);
    expect(answer.events).toEqual([]);
    expect(answer.raw).toBe(': keep-alive\n\n');
  });

  it('answers 409 to the same Idempotency-Key while the first streams, and streams the stored answer to a replay', async () => {
    const key = { 'idempotency-key': `sse-${Date.now()}` };
    const request = body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'] });
    host().simulator.pause();
    const first = postEvents(host(), request, { headers: key });
    await until(() => host().simulator.calls().length === 2);
    // Raw fetches: the helpers would wait for the paused stream to settle.
    for (const accept of ['application/json', 'text/event-stream']) {
      const second = await fetch(`${host().url}/api/v1/prompt`, {
        method: 'POST',
        headers: { authorization: `Bearer ${host().demo.apiKey}`, 'content-type': 'application/json', accept, ...key },
        body: JSON.stringify(request),
      });
      expect(second.status).toBe(409);
      expect(((await second.json()) as any).error.code).toBe('idempotency_in_progress');
    }
    host().simulator.resume();
    const original = await first;
    const done = original.events.at(-1)!;
    expect(done.event).toBe('done');
    const calls = host().simulator.calls().length;

    const replay = await postEvents(host(), request, { headers: key });
    expect(names(replay.events)).toEqual(['result', 'result', 'done']);
    expect(replay.events.map((e) => e.json.index).slice(0, 2)).toEqual([0, 1]);
    expect(replay.events.at(-1)!.data).toBe(done.data);
    expect(host().simulator.calls()).toHaveLength(calls);
  });
});
