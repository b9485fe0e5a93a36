import { describe, expect, it } from 'vitest';
import { chargeCall } from '../../../shared/pricing/charge.js';
import { runModels } from '../../../shared/compare/run-models.js';
import { ADAPTERS } from '../../../shared/providers/adapters.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import type { Endpoint, ModelCall, ModelReply } from '../../../shared/providers/types.js';
import { modelCall } from '../../support/model-calls.js';
import { suiteSimulator } from '../../support/simulator.js';

const sim = await suiteSimulator();

function endpoint(call: ModelCall): Endpoint {
  return { baseUrl: sim.baseUrl(call.entry.provider), region: 'us-east-1', simulated: true };
}

function send(call: ModelCall): Promise<ModelReply> {
  return ADAPTERS[call.entry.protocol].prepare(call, endpoint(call)).send(AbortSignal.timeout(10_000));
}

async function stream(call: ModelCall, signal = AbortSignal.timeout(10_000)): Promise<{ reply: ModelReply; deltas: string[] }> {
  const deltas: string[] = [];
  const reply = await ADAPTERS[call.entry.protocol].prepare(call, endpoint(call), (text) => deltas.push(text)).send(signal);
  return { reply, deltas };
}

async function streamFailure(call: ModelCall, signal?: AbortSignal): Promise<UpstreamError> {
  const error = await stream(call, signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

/** A system text long enough to be cached by every vendor that caches (simulator tokens are 4 characters). */
const LONG_SYSTEM = `Reference: ${'cacheable context '.repeat(700)}`;
const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };

/** One call per protocol and dialect, reasoning, cache and structured output included. */
const CASES: { name: string; call: () => ModelCall }[] = [
  { name: 'OpenAI Responses, reasoning', call: () => modelCall('fam_c-5.4', { tuning: { reasoningEffort: 'high' } }) },
  { name: 'OpenAI Responses, structured', call: () => modelCall('fam_c-5.4-mini', { responseSchema: SCHEMA }) },
  { name: 'Anthropic with thinking', call: () => modelCall('fam_a-opus-4-6', { tuning: { thinkingBudget: 2048 } }) },
  { name: 'Anthropic with a cached system', call: () => modelCall('fam_a-sonnet-4-6', { system: [{ type: 'text', text: LONG_SYSTEM, cache_control: { type: 'ephemeral' } }] }) },
  { name: 'Gemini thinking', call: () => modelCall('fam_b-2.5-flash', { tuning: { thinkingBudget: 1024 } }) },
  { name: 'Gemini structured', call: () => modelCall('fam_b-2.5-flash', { responseSchema: SCHEMA }) },
  { name: 'xAI reasoning', call: () => modelCall('fam_d-4.3', { tuning: { reasoningEffort: 'high' } }) },
  { name: 'Cerebras', call: () => modelCall('fam_e-gpt-oss-120b') },
  { name: 'DeepSeek reasoning_content, cached', call: () => modelCall('fam_f-v4-pro', { system: [{ type: 'text', text: LONG_SYSTEM }] }) },
  { name: 'Mistral', call: () => modelCall('fam_g-large') },
  { name: 'Groq gpt-oss', call: () => modelCall('fam_i-gpt-oss-120b') },
  { name: 'Bedrock', call: () => modelCall('fam_h-pro', { system: [{ type: 'text', text: LONG_SYSTEM, cache_control: { type: 'ephemeral' } }] }) },
  { name: 'Bedrock structured (forced tool)', call: () => modelCall('fam_h-lite', { responseSchema: SCHEMA }) },
];

describe('Method: ProtocolAdapter.prepare with an onDelta, a streamed call (against the simulator)', () => {
  it.each(CASES)('$name: deltas make the output, usage priced as the whole answer, twice (cache warm)', async ({ call }) => {
    sim.reset();
    const whole = [await send(call()), await send(call())];
    sim.reset();
    const streamed = [await stream(call()), await stream(call())];
    for (const [i, { reply, deltas }] of streamed.entries()) {
      const expected = whole[i] as ModelReply;
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe(reply.output);
      if (call().responseSchema) expect(JSON.parse(reply.output)).toEqual(JSON.parse(expected.output));
      else expect(reply.output).toBe(expected.output);
      expect(reply.usage).toBeDefined();
      expect(reply.usage).toEqual(expected.usage);
      expect(reply.finishReason).toBe(expected.finishReason);
      expect(chargeCall(call(), reply.usage, reply.output, 0)).toEqual(chargeCall(call(), expected.usage, expected.output, 0));
    }
  });

  it('covers every usage class somewhere: cached reads, cache writes, reasoning', async () => {
    const seen = { cachedInputTokens: false, cacheWriteTokens: false, reasoningTokens: false };
    for (const { call } of CASES) {
      sim.reset();
      for (const { reply } of [await stream(call()), await stream(call())]) {
        for (const key of Object.keys(seen) as (keyof typeof seen)[]) if ((reply.usage?.[key] ?? 0) > 0) seen[key] = true;
      }
    }
    expect(seen).toEqual({ cachedInputTokens: true, cacheWriteTokens: true, reasoningTokens: true });
  });

  it('never streams thinking: the simulator sent reasoning text the deltas do not hold', async () => {
    const { reply, deltas } = await stream(modelCall('fam_f-v4-pro'));
    expect(reply.usage?.reasoningTokens).toBeGreaterThan(0);
    expect(deltas.join('')).toBe(reply.output);
    expect(reply.output).not.toMatch(/<think>|Weighing the request/);
    const anthropic = await stream(modelCall('fam_a-opus-4-6', { tuning: { thinkingBudget: 2048 } }));
    expect(anthropic.deltas.join('')).not.toMatch(/Weighing the request/);
  });

  it('sends Groq structured output whole, as Groq streams no json_schema call: no delta of its own, the answer and usage of the call made whole, a warning', async () => {
    const call = () => modelCall('fam_i-gpt-oss-120b', { responseSchema: SCHEMA });
    sim.reset();
    const whole = await send(call());
    sim.reset();
    const { reply, deltas } = await stream(call());
    expect(deltas).toEqual([]);
    expect(sim.calls().map((c) => (c.body as Record<string, unknown>)['stream'])).toEqual([false]);
    expect(JSON.parse(reply.output)).toEqual(JSON.parse(whole.output));
    expect(reply.usage).toEqual(whole.usage);
    expect(reply.warnings).toContain("Groq does not stream structured output: fam_i-gpt-oss-120b's answer was read whole, not streamed");
    expect(whole.warnings).toEqual([]);
  });

  it('asks chat vendors for usage only where the dialect takes stream_options', async () => {
    await stream(modelCall('fam_e-gpt-oss-120b'));
    await stream(modelCall('fam_g-large'));
    const bodies = sim.calls().map((c) => c.body as Record<string, unknown>);
    expect(bodies[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(bodies[1]).toMatchObject({ stream: true });
    expect(bodies[1]).not.toHaveProperty('stream_options');
  });

  it.each(['openai', 'anthropic', 'google', 'groq', 'bedrock'])('maps a vendor error answer (%s) as send does', async (provider) => {
    const call = CASES.map((c) => c.call()).find((c) => c.entry.provider === provider) as ModelCall;
    sim.setFault({ kind: 'status', status: 429, retryAfter: '2' });
    const error = await streamFailure(call);
    expect(error.code).toBe('upstream_rate_limited');
    expect(error.retryable).toBe(true);
  });

  it.each(CASES.filter((_, i) => i % 2 === 0))('$name: a stream without its usage resolves with usage undefined', async ({ call }) => {
    sim.setFault({ kind: 'no-usage' });
    const { reply, deltas } = await stream(call());
    expect(reply.usage).toBeUndefined();
    expect(deltas.join('')).toBe(reply.output);
    expect(reply.output).not.toBe('');
  });

  it.each(CASES)('$name: a stream cut in the middle (ended cleanly, without its final event) fails, carrying the text it delivered', async ({ call }) => {
    sim.setFault({ kind: 'malformed' });
    const deltas: string[] = [];
    const error = await ADAPTERS[call().entry.protocol]
      .prepare(call(), endpoint(call()), (text) => deltas.push(text))
      .send(AbortSignal.timeout(10_000))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(UpstreamError);
    const failure = error as UpstreamError;
    expect(failure.code).toBe('upstream_malformed_response');
    expect(failure.retryable).toBe(false);
    expect(failure.details.partial?.output).toBe(deltas.join(''));
    // No final usage. Gemini's stream carries its running count: the simulator's early chunks, as Gemini's
    // can, count the prompt only, which is no usage of the text streamed, and is kept as the estimate's hint.
    expect(failure.details.partial?.usage).toBeUndefined();
    if (call().entry.protocol === 'gemini-generate-content') expect(failure.details.partial?.hints).toMatchObject({ inputTokens: expect.any(Number) });
  });

  it.each(CASES.filter((_, i) => i % 2 === 0))('$name: a 200 stream without a single event is a malformed answer', async ({ call }) => {
    sim.setFault({ kind: 'empty' });
    expect((await streamFailure(call())).code).toBe('upstream_malformed_response');
  });

  it.each(CASES.filter((_, i) => i % 3 === 0))('$name: an abort mid-stream ends the request and carries the partial output', async ({ call }) => {
    sim.setFault({ kind: 'slow-stream', delayMs: 20 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const modelCallValue = call();
    const streaming = ADAPTERS[modelCallValue.entry.protocol]
      .prepare(modelCallValue, endpoint(modelCallValue), (text) => {
        deltas.push(text);
        controller.abort(new Error('caller went away'));
      })
      .send(controller.signal);
    const error = await streaming.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('timeout');
    // The text so far, and no usage (what the readers that count reasoning add is their hints).
    expect((error as UpstreamError).details.partial).toMatchObject({ output: deltas.join('') });
    expect((error as UpstreamError).details.partial?.usage).toBeUndefined();
    expect(deltas.length).toBe(1);
  });
});

describe("Function: runModels, a stream stopped at the request's output budget (every protocol's adapter, against the simulator)", () => {
  it.each(CASES)('$name: stopped where its deltas reach the budget, completed, its deltas joined its output, charged', async ({ call }) => {
    sim.reset();
    // Chunks 20 ms apart: the stop lands mid-stream, not after the vendor had sent it all.
    sim.setFault({ kind: 'slow-stream', delayMs: 20 });
    const modelCallValue = call();
    const deltas: string[] = [];
    const [result] = await runModels(
      [{ model: { requestedId: modelCallValue.entry.id, entry: modelCallValue.entry, tuning: modelCallValue.tuning }, call: modelCallValue, warnings: [] }],
      {
        route: (entry) => ({ adapter: ADAPTERS[entry.protocol], endpoint: endpoint(modelCallValue) }),
        deadlineAt: Date.now() + 10_000,
        onDelta: (_index, text) => deltas.push(text),
        outputLimitBytes: 12,
      },
    );
    expect(result).toMatchObject({ status: 'completed' });
    expect(result!.output).toBe(deltas.join(''));
    expect(Buffer.byteLength(result!.output)).toBeLessThanOrEqual(12);
    expect(result!.warnings).toContainEqual(expect.stringMatching(/^The output was cut/));
    expect(result!.providerCost ?? result!.estimatedCost).toBeGreaterThan(0);
  });
});
