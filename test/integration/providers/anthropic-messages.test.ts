import { describe, expect, it } from 'vitest';
import { countTokens } from '../../../infra/local/simulator/text.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { anthropicMessages } from '../../../shared/providers/anthropic-messages/index.js';
import { toMessagesRequest } from '../../../shared/providers/anthropic-messages/request.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import type { Endpoint, ModelCall } from '../../../shared/providers/types.js';
import { catalogEntry as model } from '../../support/model-calls.js';
import { suiteSimulator } from '../../support/simulator.js';

const SONNET = model('fam_a-sonnet-4-6');
const OPUS_46 = model('fam_a-opus-4-6');
const OPUS_47 = model('fam_a-opus-4-7');
const PROMPT = 'Compare two ways to cache HTTP responses.';
/** Tokens the simulator adds around each message. */
const PER_MESSAGE_TOKENS = 3;

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return { entry: SONNET, system: [], history: [], prompt: PROMPT, attachments: [], maxTokens: 1024, tuning: {}, ...overrides };
}

/** A system text of exactly `tokens` simulator tokens (4 characters each), unique per label. */
function document(label: string, tokens: number): string {
  const head = `${label}: `;
  return head + 'x'.repeat(tokens * 4 - head.length);
}

const sim = await suiteSimulator();
const endpoint: Endpoint = { baseUrl: sim.baseUrl('anthropic'), simulated: true };

function send(modelCall: ModelCall, target: Endpoint = endpoint) {
  return anthropicMessages.prepare(modelCall, target).send(AbortSignal.timeout(10_000));
}

async function failure(modelCall: ModelCall): Promise<UpstreamError> {
  const error = await send(modelCall).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

describe('Object: anthropicMessages', () => {
  describe('Method: send (against the simulator)', () => {
    it('returns a completed reply with usage and cost', async () => {
      const reply = await send(call());

      expect(reply.output).toMatch(/^Simulated answer from claude-sonnet-4-6:/);
      expect(reply.finishReason).toBe('end_turn');
      expect(reply.warnings).toEqual([]);
      const inputTokens = PER_MESSAGE_TOKENS + countTokens(PROMPT);
      const outputTokens = countTokens(reply.output);
      expect(reply.usage).toEqual({ inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens });
      expect(providerCost(SONNET.prices, reply.usage!)).toBe(Math.round((inputTokens * 3 + outputTokens * 15) * 1e6) / 1e12);
    });

    it('sends the mapped request, recorded field by field', async () => {
      const modelCall = call({
        system: [
          { type: 'text', text: 'You are concise.' },
          { type: 'text', text: 'Reference notes.', cache_control: { type: 'ephemeral' } },
        ],
        history: [
          { role: 'user', content: 'Earlier question.' },
          { role: 'assistant', content: 'Earlier answer.', cache_control: { type: 'ephemeral' } },
        ],
        temperature: 0.3,
        maxTokens: 900,
      });

      await send(modelCall, { ...endpoint, apiKey: 'sk-ant-test' });

      const calls = sim.calls();
      expect(calls).toHaveLength(1);
      const recorded = calls[0]!;
      expect(recorded).toMatchObject({ provider: 'anthropic', protocol: 'anthropic-messages', model: 'claude-sonnet-4-6', path: '/anthropic/v1/messages' });
      expect(recorded.headers).toMatchObject({ 'x-api-key': '[redacted]', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
      expect(recorded.headers).not.toHaveProperty('authorization');
      const body = recorded.body as Record<string, unknown>;
      expect(body['model']).toBe('claude-sonnet-4-6');
      expect(body['max_tokens']).toBe(900);
      expect(body['temperature']).toBe(0.3);
      expect(body).not.toHaveProperty('top_p');
      expect(body).not.toHaveProperty('thinking');
      expect(body['system']).toEqual([
        { type: 'text', text: 'You are concise.' },
        { type: 'text', text: 'Reference notes.', cache_control: { type: 'ephemeral' } },
      ]);
      expect(body['messages']).toEqual([
        { role: 'user', content: 'Earlier question.' },
        { role: 'assistant', content: [{ type: 'text', text: 'Earlier answer.', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: PROMPT },
      ]);
      expect(body).toEqual(toMessagesRequest(modelCall).body);
    });

    it('reports a cache write on the first sight of a breakpoint prefix and a read afterwards', async () => {
      const system = [{ type: 'text' as const, text: document('contract A', 1500), cache_control: { type: 'ephemeral' as const } }];
      const total = 1500 + PER_MESSAGE_TOKENS + countTokens(PROMPT);

      const first = await send(call({ system }));
      const second = await send(call({ system, prompt: 'A different question on the same document.' }));

      expect(first.usage).toMatchObject({ inputTokens: total, cachedInputTokens: 0, cacheWriteTokens: 1500 });
      expect(second.usage).toMatchObject({
        inputTokens: 1500 + PER_MESSAGE_TOKENS + countTokens('A different question on the same document.'),
        cachedInputTokens: 1500,
        cacheWriteTokens: 0,
      });
      const out = second.usage!.outputTokens;
      const uncached = second.usage!.inputTokens - 1500;
      expect(providerCost(SONNET.prices, second.usage!)).toBe(Math.round((uncached * 3 + 1500 * 0.3 + out * 15) * 1e6) / 1e12);
    });

    it('reads the longest cached prefix and writes the rest up to the last breakpoint', async () => {
      const system = [{ type: 'text' as const, text: document('contract B', 1200), cache_control: { type: 'ephemeral' as const } }];
      await send(call({ system }));
      const history = [{ role: 'user' as const, content: document('annex', 400), cache_control: { type: 'ephemeral' as const } }];

      const reply = await send(call({ system, history }));

      expect(reply.usage).toMatchObject({ cachedInputTokens: 1200, cacheWriteTokens: PER_MESSAGE_TOKENS + 400 });
    });

    it('caches nothing below the 1,024-token minimum', async () => {
      const system = [{ type: 'text' as const, text: document('short', 1000), cache_control: { type: 'ephemeral' as const } }];

      await send(call({ system }));
      const reply = await send(call({ system }));

      expect(reply.usage).toMatchObject({ cachedInputTokens: 0, cacheWriteTokens: 0 });
    });

    it('enables thinking, drops the forbidden temperature and counts thinking as output only', async () => {
      const reply = await send(call({ entry: OPUS_46, temperature: 0.5, maxTokens: 1000, tuning: { thinkingBudget: 2048 } }));

      const body = sim.calls()[0]!.body as Record<string, unknown>;
      expect(body['thinking']).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(body['max_tokens']).toBe(3048);
      expect(body).not.toHaveProperty('temperature');
      expect(reply.warnings).toEqual(['temperature 0.5 not sent: Anthropic allows only temperature 1 with extended thinking']);
      expect(reply.output).toMatch(/^Simulated answer from claude-opus-4-6:/);
      expect(reply.output).not.toContain('Weighing the request');
      expect(reply.usage!.outputTokens).toBeGreaterThan(countTokens(reply.output));
      expect(reply.usage).not.toHaveProperty('reasoningTokens');
    });

    it('sends adaptive thinking and no sampling settings to claude-opus-4-7', async () => {
      const reply = await send(call({ entry: OPUS_47, temperature: 0.2, tuning: { thinkingBudget: 4096 } }));

      const body = sim.calls()[0]!.body as Record<string, unknown>;
      expect(body['thinking']).toEqual({ type: 'adaptive' });
      expect(body['output_config']).toEqual({ effort: 'medium' });
      expect(body['max_tokens']).toBe(1024 + 4096);
      expect(body).not.toHaveProperty('temperature');
      expect(reply.finishReason).toBe('end_turn');
      expect(reply.warnings).toHaveLength(2);
    });

    it('gets JSON conforming to the schema through the instruction', async () => {
      const schema = {
        type: 'object',
        properties: { verdict: { type: 'string' }, score: { type: 'integer', minimum: 1, maximum: 5 } },
        required: ['verdict', 'score'],
        additionalProperties: false,
      };

      const reply = await send(call({ responseSchema: schema }));

      const parsed = JSON.parse(reply.output) as Record<string, unknown>;
      expect(Object.keys(parsed).sort()).toEqual(['score', 'verdict']);
      expect(typeof parsed['verdict']).toBe('string');
      expect(parsed['score']).toBeGreaterThanOrEqual(1);
      expect(parsed['score']).toBeLessThanOrEqual(5);
    });

    it('sends images and PDFs the simulator accepts', async () => {
      const reply = await send(
        call({
          attachments: [
            { name: 'chart.png', type: 'image/png', base64: 'iVBORw0KGgo=' },
            { name: 'contract.pdf', type: 'application/pdf', base64: 'JVBERi0xLjQK' },
          ],
        }),
      );

      expect(reply.usage!.inputTokens).toBe(PER_MESSAGE_TOKENS + 1600 + 1500 + countTokens(PROMPT));
    });

    it('says when the answer was cut at max_tokens (the fan-out words the warning)', async () => {
      const reply = await send(call({ maxTokens: 5 }));

      expect(reply.finishReason).toBe('max_tokens');
      expect(reply.usage!.outputTokens).toBeLessThanOrEqual(5);
      expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
    });

    it('maps a 429 with Retry-After to a retryable UpstreamError', async () => {
      sim.setFault({ kind: 'status', status: 429, retryAfter: '2', provider: 'anthropic' });

      const error = await failure(call());

      expect(error).toMatchObject({
        code: 'upstream_rate_limited',
        message: 'Simulated upstream error 429',
        retryable: true,
        details: { upstreamStatus: 429, retryAfterMs: 2000 },
      });
    });

    it('maps a 529 to a retryable overloaded error', async () => {
      sim.setFault({ kind: 'status', status: 529, provider: 'anthropic' });

      expect(await failure(call())).toMatchObject({ code: 'upstream_overloaded', retryable: true, details: { upstreamStatus: 529 } });
    });

    it('maps a 400 to a non-retryable error carrying the vendor message', async () => {
      sim.setFault({ kind: 'status', status: 400, provider: 'anthropic' });

      expect(await failure(call())).toMatchObject({ code: 'upstream_error', retryable: false, message: 'Simulated upstream error 400', details: { upstreamStatus: 400 } });
    });

    it('maps a request the simulator rejects to a non-retryable 400', async () => {
      const error = await failure(call({ history: [{ role: 'user', content: '' }] }));

      expect(error).toMatchObject({
        code: 'upstream_error',
        retryable: false,
        message: 'messages.0: all messages must have non-empty content except for the optional final assistant message',
        details: { upstreamStatus: 400 },
      });
    });

    it.each([{ kind: 'malformed' as const }, { kind: 'empty' as const }])('maps a $kind 200 body to upstream_malformed_response', async ({ kind }) => {
      sim.setFault({ kind, provider: 'anthropic' });

      expect(await failure(call())).toMatchObject({ code: 'upstream_malformed_response', retryable: false });
    });

    it('returns the output without usage when the usage block is missing', async () => {
      sim.setFault({ kind: 'no-usage', provider: 'anthropic' });

      const reply = await send(call());

      expect(reply.output).toMatch(/^Simulated answer from/);
      expect(reply.usage).toBeUndefined();
      // The charge says the cost is unavailable, once (the adapter had said it too).
      expect(reply.warnings).toEqual([]);
    });
  });
});

describe('Simulator: anthropic-messages protocol', () => {
  const base = { model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] };

  function post(body: unknown, headers: Record<string, string> = { 'anthropic-version': '2023-06-01' }): Promise<Response> {
    return fetch(`${sim.baseUrl('anthropic')}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  it.each([
    ['claude-opus-4-7', 'max', undefined],
    ['claude-opus-4-6', 'xhigh', "output_config.effort: Input should be 'low', 'medium', 'high', 'max'"],
    ['claude-haiku-4-5', 'low', 'output_config.effort: This model does not support the effort parameter.'],
  ])('checks output_config.effort as Anthropic does (%s, %s)', async (model, effort, refusal) => {
    const res = await post({ ...base, model, output_config: { effort } });
    const body = (await res.json()) as { error?: { message: string } };

    expect([res.status, body.error?.message]).toEqual(refusal === undefined ? [200, undefined] : [400, refusal]);
  });

  it('answers in the exact Messages shape', async () => {
    const res = await post(base);
    const body = (await res.json()) as Record<string, unknown>;

    expect(res.status).toBe(200);
    expect(Object.keys(body)).toEqual(['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage']);
    expect(body).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', stop_reason: 'end_turn', stop_sequence: null });
    expect(body['id']).toMatch(/^msg_01[A-Za-z0-9]+$/);
    expect(body['content']).toEqual([{ type: 'text', text: expect.stringMatching(/^Simulated answer/) }]);
    expect(body['usage']).toEqual({
      input_tokens: PER_MESSAGE_TOKENS + countTokens('Hello'),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: expect.any(Number),
      service_tier: 'standard',
    });
  });

  it('answers the same request with the same text', async () => {
    const a = (await (await post(base)).json()) as { content: unknown };
    const b = (await (await post(base)).json()) as { content: unknown };

    expect(a.content).toEqual(b.content);
  });

  it('prepends a signed thinking block when thinking is enabled', async () => {
    const res = await post({ ...base, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } });
    const body = (await res.json()) as { content: Array<Record<string, string>>; usage: { output_tokens: number } };

    expect(body.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(body.content[0]!['signature']).toBeTruthy();
    expect(body.usage.output_tokens).toBe(countTokens(body.content[0]!['thinking']!) + countTokens(body.content[1]!['text']!));
  });

  it.each([
    { name: 'model missing', body: { max_tokens: 10, messages: base.messages }, message: 'model: Field required' },
    { name: 'max_tokens missing', body: { model: base.model, messages: base.messages }, message: 'max_tokens: Field required' },
    { name: 'messages missing', body: { model: base.model, max_tokens: 10 }, message: 'messages: Field required' },
    { name: 'temperature above 1', body: { ...base, temperature: 1.5 }, message: 'temperature: Input should be less than or equal to 1' },
    { name: 'a user_id over 256 characters', body: { ...base, metadata: { user_id: 'u'.repeat(257) } }, message: 'metadata.user_id: String should have at most 256 characters' },
    { name: 'a metadata field other than user_id', body: { ...base, metadata: { tenant: 'acct_1' } }, message: 'metadata.tenant: Extra inputs are not permitted' },
    {
      name: 'temperature and top_p',
      body: { ...base, temperature: 0.5, top_p: 0.9 },
      message: '`temperature` and `top_p` cannot both be specified for this model. Please use only one.',
    },
    {
      name: 'budget_tokens not below max_tokens',
      body: { ...base, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } },
      message: expect.stringContaining('`max_tokens` must be greater than `thinking.budget_tokens`'),
    },
    {
      name: 'temperature with thinking',
      body: { ...base, max_tokens: 4096, temperature: 0.5, thinking: { type: 'enabled', budget_tokens: 2048 } },
      message: expect.stringContaining('`temperature` may only be set to 1 when thinking is enabled'),
    },
    {
      name: 'budget_tokens on claude-opus-4-7',
      body: { ...base, model: 'claude-opus-4-7', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } },
      message: expect.stringContaining('"thinking.type.enabled" is not supported for this model'),
    },
    { name: 'temperature on claude-opus-4-7', body: { ...base, model: 'claude-opus-4-7', temperature: 1 }, message: '`temperature` is deprecated for this model.' },
    {
      name: 'an empty prompt',
      body: { ...base, messages: [{ role: 'user', content: '' }] },
      message: 'messages.0: all messages must have non-empty content except for the optional final assistant message',
    },
    {
      name: 'a prompt of whitespace only',
      body: { ...base, messages: [{ role: 'user', content: ' \n ' }] },
      message: 'messages: text content blocks must contain non-whitespace text',
    },
    {
      name: 'an empty text block',
      body: { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
      message: 'messages: text content blocks must be non-empty',
    },
    {
      name: 'a text block of whitespace only',
      body: { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: '\t' }] }] },
      message: 'messages: text content blocks must contain non-whitespace text',
    },
    {
      name: 'a system block of whitespace only',
      body: { ...base, system: [{ type: 'text', text: '  ' }] },
      message: 'system: text content blocks must contain non-whitespace text',
    },
    {
      name: 'a conversation that starts with an assistant turn',
      body: { ...base, messages: [{ role: 'assistant', content: 'Hello!' }, ...base.messages] },
      message: 'messages: first message must use the "user" role',
    },
    {
      name: 'five breakpoints',
      body: { ...base, system: Array.from({ length: 5 }, (_, i) => ({ type: 'text', text: `block ${i}`, cache_control: { type: 'ephemeral' } })) },
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    },
  ])('rejects $name with a 400 invalid_request_error', async ({ body, message }) => {
    const res = await post(body);

    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: expect.stringMatching(/^req_/) });
  });

  it('combines consecutive turns of one role itself, as the Messages API does', async () => {
    const res = await post({
      ...base,
      messages: [
        { role: 'user', content: 'Context.' },
        { role: 'user', content: 'Question?' },
      ],
    });

    expect(res.status).toBe(200);
  });

  it('rejects a Bearer token in place of x-api-key with 401 authentication_error', async () => {
    const res = await post(base, { 'anthropic-version': '2023-06-01', authorization: 'Bearer sk-ant-test' });

    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
  });

  it('requires the anthropic-version header', async () => {
    const res = await post(base, {});

    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('anthropic-version: header is required');
  });

  it('answers a body that is not JSON with a 400 in Anthropic’s shape', async () => {
    const res = await post('{not json');

    expect(res.status).toBe(400);
    expect((await res.json()) as { type: string; error: { type: string } }).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it.each([
    { status: 429, type: 'rate_limit_error' },
    { status: 500, type: 'api_error' },
    { status: 529, type: 'overloaded_error' },
  ])('shapes a $status fault as $type with retry-after', async ({ status, type }) => {
    sim.setFault({ kind: 'status', status, retryAfter: '3', provider: 'anthropic' });

    const res = await post(base);

    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe(type);
  });
});
