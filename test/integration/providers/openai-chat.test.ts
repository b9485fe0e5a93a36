import { describe, it, expect } from 'vitest';
import { countTokens } from '../../../infra/local/simulator/server.js';
import { THINKING_OPENING } from '../../../infra/local/simulator/openai-chat/index.js';
import { resolveModel } from '../../../shared/catalog/index.js';
import type { ProviderId } from '../../../shared/catalog/types.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { openaiChat } from '../../../shared/providers/openai-chat/index.js';
import { dialectFor } from '../../../shared/providers/openai-chat/dialects.js';
import { jsonRequest, postJson } from '../../../shared/providers/http.js';
import { fromErrorResponse } from '../../../shared/providers/openai-chat/errors.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import type { Endpoint, ModelCall, ModelReply } from '../../../shared/providers/types.js';
import { suiteSimulator } from '../../support/simulator.js';

const API_KEY = 'sk-integration-secret';
/** 75 simulator tokens: a warm cache reports its first 64 as read from cache (xAI, DeepSeek, Mistral). */
const LONG_SYSTEM = `${'You compare HTTP caching strategies for a platform team. '.repeat(5).trim()} Be concise and concrete.`;
const PROMPT = 'Compare ETags with Cache-Control max-age.';
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['winner', 'reason'],
  properties: { winner: { type: 'string', enum: ['etag', 'max-age'] }, reason: { type: 'string' } },
};

const sim = await suiteSimulator();

function call(id: string, overrides: Partial<ModelCall> = {}): ModelCall {
  // The vendor model each ID names, retired or not: what this adapter sends it.
  const entry = resolveModel(id, 0);
  if (!entry) throw new Error(`no catalog entry ${id}`);
  return { entry, system: [], history: [], prompt: PROMPT, attachments: [], maxTokens: 1000, tuning: {}, ...overrides };
}

function endpoint(provider: ProviderId): Endpoint {
  return { baseUrl: sim.baseUrl(provider), apiKey: API_KEY, simulated: true };
}

function send(c: ModelCall): Promise<ModelReply> {
  return openaiChat.prepare(c, endpoint(c.entry.provider)).send(AbortSignal.timeout(5_000));
}

async function failure(c: ModelCall, signal = AbortSignal.timeout(5_000)): Promise<UpstreamError> {
  const error = await openaiChat
    .prepare(c, endpoint(c.entry.provider))
    .send(signal)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

function upstream(): { path: string; body: Record<string, unknown>; headers: Record<string, string | undefined> } {
  const last = sim.calls().at(-1);
  if (!last) throw new Error('no upstream call');
  return { path: last.path, body: last.body as Record<string, unknown>, headers: last.headers };
}

/** The simulator's prompt count: 4 per message plus the text tokens (85 per image). */
function promptTokens(...texts: string[]): number {
  return texts.reduce((sum, text) => sum + 4 + countTokens(text), 0);
}

const systemTokens = countTokens(LONG_SYSTEM);
const warmCache = Math.floor(systemTokens / 64) * 64;

describe('Adapter: openaiChat against the simulator', () => {
  it('sends xAI grok-4.3 its reasoning effort and counts the reasoning tokens reported beside completion_tokens', async () => {
    const c = call('fam_d-4.3', { system: [{ type: 'text', text: LONG_SYSTEM }], temperature: 0.3, tuning: { reasoningEffort: 'high' } });
    const reply = await send(c);

    const { path, body, headers } = upstream();
    expect(path).toBe('/xai/v1/chat/completions');
    expect(headers['authorization']).toBe('[redacted]');
    expect(body).toEqual({
      model: 'grok-4.3',
      messages: [
        { role: 'system', content: LONG_SYSTEM },
        { role: 'user', content: PROMPT },
      ],
      max_completion_tokens: 1000,
      temperature: 0.3,
      reasoning_effort: 'high',
      stream: false,
    });
    expect(reply.output).toContain('Simulated answer from grok-4.3');
    expect(reply.warnings).toEqual([]);
    expect(reply.usage).toEqual({
      inputTokens: promptTokens(LONG_SYSTEM, PROMPT),
      cachedInputTokens: warmCache,
      cacheWriteTokens: 0,
      outputTokens: countTokens(reply.output) + 512,
      reasoningTokens: 512,
    });
    const usage = reply.usage!;
    const { prices } = c.entry;
    expect(providerCost(prices, usage)).toBe(
      Math.round(((usage.inputTokens - warmCache) * prices.input + warmCache * prices.cachedInput! + usage.outputTokens * prices.output) * 1e6) / 1e12,
    );
  });

  it('keeps reasoning_effort away from grok-4.20-0309-reasoning, which would answer 400, and warns', async () => {
    const reply = await send(call('fam_d-4.20-0309-reasoning', { tuning: { reasoningEffort: 'low' } }));
    expect(upstream().body).not.toHaveProperty('reasoning_effort');
    expect(reply.warnings).toEqual(['reasoningEffort was not applied: xAI does not accept reasoning_effort for grok-4.20-0309-reasoning, which reasons at its own fixed level']);
    expect(reply.usage?.reasoningTokens).toBe(192);
  });

  it('sends Cerebras gpt-oss its effort and a temperature within 1.5; reasoning text stays out of the output', async () => {
    const reply = await send(call('fam_e-gpt-oss-120b', { temperature: 1.9, topP: 0.9, tuning: { reasoningEffort: 'low' } }));
    expect(upstream().body).toEqual({
      model: 'gpt-oss-120b',
      messages: [{ role: 'user', content: PROMPT }],
      max_completion_tokens: 1000,
      temperature: 1.5,
      top_p: 0.9,
      reasoning_effort: 'low',
      stream: false,
    });
    expect(reply.warnings).toEqual(['temperature 1.9 is above the Cerebras maximum of 1.5; 1.5 was sent']);
    expect(reply.output.startsWith('Simulated answer from gpt-oss-120b')).toBe(true);
    expect(reply.output).not.toContain(THINKING_OPENING);
    // Cerebras counts the 64 reasoning tokens inside completion_tokens and reports no reasoning_tokens.
    expect(reply.usage).toEqual({
      inputTokens: promptTokens(PROMPT),
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: countTokens(reply.output) + 64,
    });
  });

  it('sends DeepSeek max_tokens without the sampling it ignores, and maps cache hits and thinking tokens', async () => {
    const c = call('fam_f-v4-pro', {
      system: [{ type: 'text', text: LONG_SYSTEM }],
      history: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
      ],
      temperature: 0.7,
      maxTokens: 4000,
    });
    const reply = await send(c);
    expect(upstream().body).toEqual({
      model: 'deepseek-v4-pro',
      messages: [
        { role: 'system', content: LONG_SYSTEM },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: PROMPT },
      ],
      max_tokens: 4000,
      stream: false,
    });
    expect(reply.warnings).toEqual(['temperature was not applied: DeepSeek ignores it in thinking mode, which its V4 models use by default']);
    expect(reply.output).not.toContain(THINKING_OPENING);
    expect(reply.usage).toEqual({
      inputTokens: promptTokens(LONG_SYSTEM, 'Hi', 'Hello.', PROMPT),
      cachedInputTokens: warmCache,
      cacheWriteTokens: 0,
      outputTokens: countTokens(reply.output) + 512,
      reasoningTokens: 512,
    });
  });

  it('sends Mistral a temperature within 1.5, which it refuses above (422)', async () => {
    const reply = await send(call('fam_l', { temperature: 1.9 }));
    expect(upstream().body).toMatchObject({ model: 'codestral-2508', temperature: 1.5 });
    expect(reply.warnings).toEqual(['temperature 1.9 is above the Mistral maximum of 1.5; 1.5 was sent']);
    const refused = await fetch(`${sim.baseUrl('mistral')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'codestral-2508', messages: [{ role: 'user', content: 'Hi' }], temperature: 1.9 }),
    });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ detail: [{ loc: ['body', 'temperature'], msg: 'Input should be less than or equal to 1.5' }] });
  });

  it('sends Mistral max_tokens and the image URL as a string, and maps cached prompt tokens', async () => {
    const image = { name: 'plot.jpg', type: 'image/jpeg' as const, base64: '/9j/4AAQSkZJRg==' };
    const reply = await send(call('fam_g-large', { system: [{ type: 'text', text: LONG_SYSTEM }], attachments: [image], topP: 0.8 }));
    expect(upstream().body).toEqual({
      model: 'mistral-large-2512',
      messages: [
        { role: 'system', content: LONG_SYSTEM },
        {
          role: 'user',
          content: [
            { type: 'text', text: PROMPT },
            { type: 'image_url', image_url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' },
          ],
        },
      ],
      max_tokens: 1000,
      top_p: 0.8,
      stream: false,
    });
    expect(reply.usage).toEqual({
      inputTokens: promptTokens(LONG_SYSTEM, PROMPT) + 85,
      cachedInputTokens: warmCache,
      cacheWriteTokens: 0,
      outputTokens: countTokens(reply.output),
    });
  });

  it('sends Groq gpt-oss the strict json_schema and gets schema-shaped output without the reasoning text', async () => {
    const reply = await send(call('fam_i-gpt-oss-120b', { responseSchema: SCHEMA }));
    expect(upstream().body).toEqual({
      model: 'openai/gpt-oss-120b',
      messages: [{ role: 'user', content: PROMPT }],
      max_completion_tokens: 1000,
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: SCHEMA, strict: true } },
      stream: false,
    });
    expect(reply.output).not.toContain(THINKING_OPENING);
    const parsed = JSON.parse(reply.output) as { winner: string };
    expect(['etag', 'max-age']).toContain(parsed.winner);
    expect(reply.usage).toEqual({
      inputTokens: promptTokens(PROMPT),
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: countTokens(reply.output) + 192,
      reasoningTokens: 192,
    });
  });

  it('sends Groq gpt-oss a schema with an optional property in best-effort mode, which it accepts, with a warning', async () => {
    const optional = { ...SCHEMA, required: ['winner'] };
    const reply = await send(call('fam_i-gpt-oss-120b', { responseSchema: optional }));

    expect(upstream().body['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: optional, strict: false } });
    expect(JSON.parse(reply.output)).toHaveProperty('winner');
    expect(reply.warnings).toContain(
      "response_schema was sent to fam_i-gpt-oss-120b without strict enforcement: Groq's strict mode needs every property listed in required and additionalProperties false at each object level, and takes only some of JSON Schema's keywords (/properties/reason does not fit)",
    );
  });

  it('answers a best-effort Groq call whose answer Groq refused as not fitting the schema with that answer, not a failure with nothing', async () => {
    const optional = { ...SCHEMA, required: ['winner'] };
    const error = {
      message: "Failed to generate JSON. Please adjust your prompt. See 'failed_generation' for more details.",
      type: 'invalid_request_error',
      code: 'json_validate_failed',
      failed_generation: '{"winner": "edge"}',
    };
    sim.setFault({ kind: 'status', status: 400, provider: 'groq', body: { error } });
    const reply = await send(call('fam_i-gpt-oss-120b', { responseSchema: optional }));
    // It had failed as upstream_error 400, the output and the best-effort warning lost.
    expect(reply.output).toBe('{"winner": "edge"}');
    expect(reply.usage).toBeUndefined();
    expect(reply.warnings).toContain("Groq refused its own answer as not fitting the schema (json_validate_failed): shown as it came, with the gateway's check");
    expect(reply.warnings).toContainEqual(expect.stringContaining('without strict enforcement'));
  });

  it.each([
    ['a Groq call that asked for no schema', 'fam_i-gpt-oss-120b', 'groq', false],
    ['a schema call to a vendor that documents no refused generations (Cerebras)', 'fam_e-gpt-oss-120b', 'cerebras', true],
  ])('fails %s answered 400 json_validate_failed: a failed_generation there is no answer (it had been one, charged)', async (_name, model, provider, withSchema) => {
    const error = { message: 'Failed to generate JSON.', type: 'invalid_request_error', code: 'json_validate_failed', failed_generation: 'not json at all' };
    sim.setFault({ kind: 'status', status: 400, provider, body: { error } });
    const failure = await send(call(model, withSchema ? { responseSchema: { ...SCHEMA, required: ['winner'] } } : {})).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ code: 'upstream_error', details: { upstreamStatus: 400 } });
    expect((failure as UpstreamError).details.refusedAnswer).toBeUndefined();
  });

  it('sends DeepSeek, which refuses successive turns of one role, one message per run of them', async () => {
    const history = [
      { role: 'user' as const, content: 'Some context.' },
      { role: 'user' as const, content: 'More context.' },
      { role: 'assistant' as const, content: 'Noted.' },
      { role: 'user' as const, content: 'One more thing.' },
    ];
    const reply = await send(call('fam_f-v4-pro', { history }));

    expect(reply.output).toMatch(/^Simulated answer from deepseek-v4-pro/);
    expect(upstream().body['messages']).toEqual([
      { role: 'user', content: 'Some context.\n\nMore context.' },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: `One more thing.\n\n${PROMPT}` },
    ]);
  });

  it.each([
    ['fam_d-4.3', 'Simulated upstream error 429'],
    ['fam_e-gpt-oss-120b', 'Simulated upstream error 429'],
    ['fam_f-v4-flash', 'Simulated upstream error 429'],
    ['fam_k-8b', 'Requests rate limit exceeded'],
    ['fam_i-gpt-oss-120b', 'Simulated upstream error 429'],
  ])('maps a 429 from %s to a retryable error with the vendor message and Retry-After', async (id, message) => {
    const c = call(id);
    sim.setFault({ kind: 'status', status: 429, retryAfter: '2', provider: c.entry.provider });
    const error = await failure(c);
    expect(error).toMatchObject({ code: 'upstream_rate_limited', message, retryable: true });
    expect(error.details).toMatchObject({ upstreamStatus: 429, retryAfterMs: 2000 });
    expect(error.message).not.toContain(API_KEY);
  });

  it.each(['fam_d-4.20-0309-non-reasoning', 'fam_e-gpt-oss-120b', 'fam_f-v4-pro', 'fam_g-small', 'fam_i-gpt-oss-20b'])(
    'maps a 400 from %s to a non-retryable upstream_error',
    async (id) => {
      const c = call(id);
      sim.setFault({ kind: 'status', status: 400, provider: c.entry.provider });
      const error = await failure(c);
      expect(error).toMatchObject({ code: 'upstream_error', message: 'Simulated upstream error 400', retryable: false });
      expect(error.details.upstreamStatus).toBe(400);
    },
  );

  it.each([
    ['fam_i-gpt-oss-20b', 498, 'Simulated upstream error 498'],
    ['fam_f-v4-pro', 503, 'Server overloaded, please try again later.'],
    ['fam_e-gpt-oss-120b', 500, 'Simulated upstream error 500'],
  ])('maps %s status %i to a retryable error', async (id, status, message) => {
    const c = call(id);
    sim.setFault({ kind: 'status', status, provider: c.entry.provider });
    const error = await failure(c);
    expect(error).toMatchObject({ code: status === 500 ? 'upstream_error' : 'upstream_overloaded', message, retryable: true });
  });

  it.each([
    ['malformed', 'fam_d-4.3'],
    ['empty', 'fam_g-medium'],
    ['malformed', 'fam_f-v4-flash'],
    ['empty', 'fam_i-gpt-oss-20b'],
    ['malformed', 'fam_e-gpt-oss-120b'],
  ] as const)('maps a %s 200 body from %s to upstream_malformed_response', async (kind, id) => {
    const c = call(id);
    sim.setFault({ kind, provider: c.entry.provider });
    expect(await failure(c)).toMatchObject({ code: 'upstream_malformed_response', retryable: false });
  });

  it.each(['fam_d-4.3', 'fam_e-gpt-oss-120b', 'fam_f-v4-pro', 'fam_g-large', 'fam_i-gpt-oss-120b'])('answers %s without usage as cost unavailable, with a warning', async (id) => {
    const c = call(id);
    sim.setFault({ kind: 'no-usage', provider: c.entry.provider });
    const reply = await send(c);
    expect(reply.output.length).toBeGreaterThan(0);
    expect(reply.usage).toBeUndefined();
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).not.toContainEqual(expect.stringContaining('cost is unavailable'));
  });

  it('reports a timeout when the vendor does not answer before the deadline', async () => {
    const c = call('fam_g-large');
    sim.setFault({ kind: 'hang', provider: 'mistral', times: 1 });
    expect(await failure(c, AbortSignal.timeout(100))).toMatchObject({ code: 'timeout' });
  });

  it('reports an unreachable vendor as retryable', async () => {
    const c = call('fam_i-gpt-oss-120b');
    sim.setFault({ kind: 'reset', provider: 'groq', times: 1 });
    expect(await failure(c)).toMatchObject({ code: 'upstream_unreachable', retryable: true });
  });
});

describe('Function: postJson with the dialect error mapper, against the simulator', () => {
  it('maps the Mistral 422 for fields it does not know to field and reason, without the input', async () => {
    const error = await postJson(
      jsonRequest(
        `${sim.baseUrl('mistral')}/chat/completions`,
        {
          model: 'mistral-large-2512',
          messages: [{ role: 'user', content: 'Hi' }],
          max_completion_tokens: 8192,
          reasoning_effort: 'high',
        },
        {},
      ),
      AbortSignal.timeout(5_000),
      { mapError: (status, text, retryAfter) => fromErrorResponse(dialectFor('mistral'), status, text, retryAfter) },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: 'upstream_error',
      message: 'body.max_completion_tokens: Extra inputs are not permitted; body.reasoning_effort: Extra inputs are not permitted',
      retryable: false,
      details: { upstreamStatus: 422 },
    });
    expect((error as Error).message).not.toContain('8192');
  });

  it("maps xAI's 400 for reasoning_effort on grok-4.20 with xAI's message", async () => {
    const error = await postJson(
      jsonRequest(`${sim.baseUrl('xai')}/chat/completions`, { model: 'grok-4.20-0309-reasoning', messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'low' }, {}),
      AbortSignal.timeout(5_000),
      { mapError: (status, text, retryAfter) => fromErrorResponse(dialectFor('xai'), status, text, retryAfter) },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: 'upstream_error',
      message: 'Model grok-4.20-0309-reasoning does not support parameter reasoningEffort.',
      retryable: false,
      details: { upstreamStatus: 400 },
    });
  });
});
