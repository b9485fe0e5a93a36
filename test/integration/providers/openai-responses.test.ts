import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { familyOf } from '../../../infra/local/simulator/openai-responses/index.js';
import { countTokens } from '../../../infra/local/simulator/text.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { openaiResponses } from '../../../shared/providers/openai-responses/index.js';
import type { Endpoint, ModelCall } from '../../../shared/providers/types.js';
import { catalogEntry as model } from '../../support/model-calls.js';
import { suiteSimulator } from '../../support/simulator.js';

/** A model that stays (gpt-4.1 retires on 2027-01-14): without a reasoning effort it reasons at none, as gpt-4.1 did not at all. */
const NANO = model('fam_c-5.4-nano');
const PROMPT = 'Compare two ways to cache HTTP responses.';
/** Tokens the simulator adds around each message and around the instructions. */
const PER_MESSAGE_TOKENS = 4;
const SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string' },
    score: { type: 'integer', minimum: 0, maximum: 10 },
    reasons: { type: 'array', items: { type: 'string' } },
  },
  required: ['verdict', 'score', 'reasons'],
  additionalProperties: false,
};

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return { entry: NANO, system: [], history: [], prompt: PROMPT, attachments: [], maxTokens: 1024, tuning: {}, ...overrides };
}

/** A text of exactly `tokens` simulator tokens (4 characters each), unique per label. */
function document(label: string, tokens: number): string {
  const head = `${label}: `;
  return head + 'x'.repeat(tokens * 4 - head.length);
}

/** Micro-USD priced by hand, rounded like providerCost. */
function usd(microUsd: number): number {
  return Math.round(microUsd * 1e6) / 1e12;
}

const sim = await suiteSimulator();
const endpoint: Endpoint = { baseUrl: sim.baseUrl('openai'), apiKey: 'sk-test-key', simulated: true };

function send(modelCall: ModelCall, target: Endpoint = endpoint, signal: AbortSignal = AbortSignal.timeout(10_000)) {
  return openaiResponses.prepare(modelCall, target).send(signal);
}

async function failure(modelCall: ModelCall, signal?: AbortSignal): Promise<UpstreamError> {
  const error = await send(modelCall, endpoint, signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

function lastBody(): Record<string, unknown> {
  const last = sim.calls().at(-1);
  if (!last) throw new Error('no upstream call recorded');
  return last.body as Record<string, unknown>;
}

/** A raw request to the simulator, as a client other than the adapter would send it. */
async function raw(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${sim.baseUrl('openai')}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('Object: openaiResponses', () => {
  describe('Method: send (against the simulator)', () => {
    it('returns a completed reply with usage and cost', async () => {
      const reply = await send(call());

      expect(reply.output).toMatch(/^Simulated answer from gpt-5\.4-nano:/);
      expect(reply.finishReason).toBe('completed');
      expect(reply.warnings).toEqual([]);
      const inputTokens = PER_MESSAGE_TOKENS + countTokens(PROMPT);
      const outputTokens = countTokens(reply.output);
      expect(reply.usage).toEqual({ inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0 });
      expect(providerCost(NANO.prices, reply.usage!)).toBe(usd(inputTokens * 0.2 + outputTokens * 1.25));
    });

    it('sends one POST /v1/responses whose recorded body carries every field as mapped', async () => {
      await send(
        call({
          system: [
            { type: 'text', text: 'You are concise.' },
            { type: 'text', text: 'Answer in English.' },
          ],
          history: [
            { role: 'user', content: 'What is a CDN?' },
            { role: 'assistant', content: 'A content delivery network.' },
          ],
          attachments: [
            { name: 'chart.png', type: 'image/png', base64: 'iVBORw0KGgo=' },
            { name: 'report.pdf', type: 'application/pdf', base64: 'JVBERi0xLjQ=' },
          ],
          temperature: 0.2,
          topP: 0.9,
          maxTokens: 900,
        }),
      );

      const calls = sim.calls();
      expect(calls).toHaveLength(1);
      const recorded = calls[0]!;
      expect(recorded.provider).toBe('openai');
      expect(recorded.protocol).toBe('openai-responses');
      expect(recorded.path).toBe('/openai/v1/responses');
      expect(recorded.model).toBe('gpt-5.4-nano');
      expect(recorded.headers['authorization']).toBe('[redacted]');
      expect(recorded.headers['content-type']).toBe('application/json');
      expect(recorded.body).toEqual({
        model: 'gpt-5.4-nano',
        input: [
          { role: 'developer', content: 'You are concise.\n\nAnswer in English.' },
          { role: 'user', content: 'What is a CDN?' },
          { role: 'assistant', content: 'A content delivery network.' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: PROMPT },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
              { type: 'input_file', filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
            ],
          },
        ],
        max_output_tokens: 900,
        temperature: 0.2,
        top_p: 0.9,
        // What gpt-5.4-nano takes sampling settings with.
        reasoning: { effort: 'none' },
        store: false,
        stream: false,
      });
    });

    it('streams a call whose system prompt is over an event cap: it goes in the input, which no event repeats (as instructions, it was in three events of 4 MiB and more)', async () => {
      const system = [{ type: 'text' as const, text: 'policy '.repeat(650_000) }];
      const deltas: string[] = [];
      const reply = await openaiResponses.prepare(call({ system }), endpoint, (text) => deltas.push(text)).send(AbortSignal.timeout(20_000));
      expect(reply.output.length).toBeGreaterThan(0);
      expect(deltas.join('')).toBe(reply.output);
      expect(reply.usage?.inputTokens).toBeGreaterThan(650_000);
    });

    it('counts instructions, history, image and file in the input tokens', async () => {
      const reply = await send(
        call({
          system: [{ type: 'text', text: 'You are concise.' }],
          history: [{ role: 'assistant', content: 'Earlier answer.' }],
          attachments: [
            { name: 'a.webp', type: 'image/webp', base64: 'UklGRg==' },
            { name: 'b.pdf', type: 'application/pdf', base64: 'JVBERi0=' },
          ],
        }),
      );

      const expected =
        PER_MESSAGE_TOKENS + countTokens('You are concise.') + PER_MESSAGE_TOKENS + countTokens('Earlier answer.') + PER_MESSAGE_TOKENS + countTokens(PROMPT) + 85 + 256;
      expect(reply.usage?.inputTokens).toBe(expected);
    });

    it.each([
      ['low', 64],
      ['medium', 256],
      ['high', 1024],
    ] as const)('reports %s reasoning effort as %i reasoning tokens inside output tokens, priced as output', async (effort, reasoning) => {
      const mini = model('fam_c-5.4-mini');

      const reply = await send(call({ entry: mini, tuning: { reasoningEffort: effort }, maxTokens: 8192 }));

      expect(lastBody()['reasoning']).toEqual({ effort });
      expect(reply.usage?.reasoningTokens).toBe(reasoning);
      expect(reply.usage?.outputTokens).toBe(reasoning + countTokens(reply.output));
      const { inputTokens, outputTokens } = reply.usage!;
      expect(providerCost(mini.prices, reply.usage!)).toBe(usd(inputTokens * 0.75 + outputTokens * 4.5));
    });

    it('drops temperature for a reasoning model, which the simulator would refuse like OpenAI', async () => {
      const reply = await send(call({ entry: model('fam_c-5.4-pro'), temperature: 0.3 }));

      expect(lastBody()).not.toHaveProperty('temperature');
      expect(reply.warnings).toEqual(['temperature was not sent: fam_c-5.4-pro is a reasoning model, and OpenAI rejects sampling settings then']);
      const refused = await raw({ model: 'gpt-5.4-pro', input: PROMPT, temperature: 0.3 });
      expect(refused.status).toBe(400);
      expect(refused.json['error']).toMatchObject({ param: 'temperature', code: 'unsupported_parameter', type: 'invalid_request_error' });
    });

    it('sends temperature to GPT-5.4 with reasoning effort none, which the simulator accepts', async () => {
      const reply = await send(call({ entry: model('fam_c-5.4'), temperature: 0.3 }));

      expect(lastBody()).toMatchObject({ model: 'gpt-5.4', temperature: 0.3, reasoning: { effort: 'none' } });
      expect(reply.warnings).toEqual([]);
      expect(reply.usage?.reasoningTokens).toBe(0);
    });

    it('sends GPT-5.4 Pro effort low as medium, the least it takes, with a warning, and gets its answer', async () => {
      const reply = await send(call({ entry: model('fam_c-5.4-pro'), tuning: { reasoningEffort: 'low' } }));

      expect(lastBody()).toMatchObject({ model: 'gpt-5.4-pro', reasoning: { effort: 'medium' } });
      expect(reply.warnings).toEqual(['reasoningEffort low was sent as medium: OpenAI takes medium or more for gpt-5.4-pro']);
      expect(reply.output).toMatch(/^Simulated answer from gpt-5\.4-pro:/);
    });

    it('gets schema-valid JSON through native structured output', async () => {
      const reply = await send(call({ entry: model('fam_c-5.4-mini'), responseSchema: SCHEMA }));

      expect(lastBody()['text']).toEqual({ format: { type: 'json_schema', name: 'response', schema: SCHEMA, strict: true } });
      const validate = new Ajv().compile(SCHEMA);
      expect(validate(JSON.parse(reply.output))).toBe(true);
    });

    it('gets schema-valid JSON from a model the schema is given as an instruction, in the developer message', async () => {
      const reply = await send(
        call({ entry: { ...model('fam_c-5.4-mini'), capabilities: { ...model('fam_c-5.4-mini').capabilities, structuredOutput: 'instruction' } }, responseSchema: SCHEMA }),
      );

      expect(lastBody()['text']).toBeUndefined();
      expect((lastBody()['input'] as { role: string }[])[0]!.role).toBe('developer');
      const validate = new Ajv().compile(SCHEMA);
      expect(validate(JSON.parse(reply.output))).toBe(true);
    });

    it('sends a non-strict schema with strict false, where strict true would be refused', async () => {
      const loose = { ...SCHEMA, required: ['verdict'] };

      const reply = await send(call({ responseSchema: loose }));

      expect((lastBody()['text'] as { format: { strict: boolean } }).format.strict).toBe(false);
      expect(reply.warnings).toEqual([expect.stringMatching(/^response_schema was sent to fam_c-5\.4-nano without strict enforcement/)]);
      const refused = await raw({ model: 'gpt-5.4-nano', input: PROMPT, text: { format: { type: 'json_schema', name: 'response', schema: loose, strict: true } } });
      expect(refused.status).toBe(400);
      expect(refused.json['error']).toMatchObject({ param: 'text.format.schema', code: 'invalid_json_schema' });
      expect((refused.json['error'] as { message: string }).message).toContain("Missing 'score'");
    });

    it('sends a schema with a keyword strict mode does not permit (minLength) with strict false, where strict true would be refused', async () => {
      const lengths = { ...SCHEMA, properties: { ...SCHEMA.properties, verdict: { ...SCHEMA.properties.verdict, minLength: 1 } } };

      const reply = await send(call({ responseSchema: lengths }));

      expect((lastBody()['text'] as { format: { strict: boolean } }).format.strict).toBe(false);
      expect(reply.warnings).toEqual([expect.stringContaining('(/properties/verdict/minLength does not fit)')]);
      expect(new Ajv().compile(lengths)(JSON.parse(reply.output))).toBe(true);
      const refused = await raw({ model: 'gpt-5.4-nano', input: PROMPT, text: { format: { type: 'json_schema', name: 'response', schema: lengths, strict: true } } });
      expect(refused.status).toBe(400);
      expect((refused.json['error'] as { message: string }).message).toContain("'minLength' is not permitted");
    });

    it('sends a schema with a format strict mode does not take (uri) with strict false, where strict true would be refused', async () => {
      const uri = { ...SCHEMA, properties: { ...SCHEMA.properties, verdict: { type: 'string', format: 'uri' } } };

      const reply = await send(call({ responseSchema: uri }));

      expect((lastBody()['text'] as { format: { strict: boolean } }).format.strict).toBe(false);
      expect(reply.warnings).toEqual([expect.stringContaining('(/properties/verdict/format does not fit)')]);
      const refused = await raw({ model: 'gpt-5.4-nano', input: PROMPT, text: { format: { type: 'json_schema', name: 'response', schema: uri, strict: true } } });
      expect(refused.status).toBe(400);
      expect((refused.json['error'] as { message: string }).message).toContain("'uri' is not a valid format");
      // A format strict mode takes stays strict.
      await send(call({ responseSchema: { ...uri, properties: { ...uri.properties, verdict: { type: 'string', format: 'email' } } } }));
      expect((lastBody()['text'] as { format: { strict: boolean } }).format.strict).toBe(true);
    });

    it('keeps the partial text of an answer cut at maxTokens, saying it was cut', async () => {
      const reply = await send(call({ maxTokens: 16 }));

      expect(reply.finishReason).toBe('max_output_tokens');
      expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
      expect(reply.output).toMatch(/^Simulated answer from/);
      expect(countTokens(reply.output)).toBeLessThanOrEqual(16);
      expect(reply.usage?.outputTokens).toBe(countTokens(reply.output));
    });

    it('answers empty when reasoning uses the whole allowance, and still reports the spent tokens', async () => {
      const reply = await send(call({ entry: model('fam_c-5.4-mini'), tuning: { reasoningEffort: 'high' }, maxTokens: 500 }));

      expect(reply.output).toBe('');
      expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
      expect(reply.usage).toMatchObject({ outputTokens: 500, reasoningTokens: 500 });
    });

    it('reports a repeated prefix of at least 1,024 tokens as cached, in steps of 128, and prices it', async () => {
      const instructions = document('policy-cache-test', 1500);
      const first = await send(call({ system: [{ type: 'text', text: instructions }], prompt: 'First question?' }));
      const second = await send(call({ system: [{ type: 'text', text: instructions }], prompt: 'Second question?' }));

      expect(first.usage?.cachedInputTokens).toBe(0);
      const prefix = PER_MESSAGE_TOKENS + 1500;
      expect(second.usage?.cachedInputTokens).toBe(Math.floor(prefix / 128) * 128);
      const { inputTokens, cachedInputTokens, outputTokens } = second.usage!;
      expect(providerCost(NANO.prices, second.usage!)).toBe(usd((inputTokens - cachedInputTokens) * 0.2 + cachedInputTokens * 0.02 + outputTokens * 1.25));
    });

    it('reports no cache for a repeated prefix shorter than 1,024 tokens', async () => {
      const instructions = document('short-cache-test', 900);
      await send(call({ system: [{ type: 'text', text: instructions }] }));

      const second = await send(call({ system: [{ type: 'text', text: instructions }], prompt: 'Another one?' }));

      expect(second.usage?.cachedInputTokens).toBe(0);
    });
  });

  describe('Method: send (simulated faults)', () => {
    it('maps a 429 with Retry-After to a retryable rate-limit error', async () => {
      sim.setFault({ kind: 'status', status: 429, retryAfter: '2', provider: 'openai' });

      const error = await failure(call());

      expect(error.code).toBe('upstream_rate_limited');
      expect(error.retryable).toBe(true);
      expect(error.details.retryAfterMs).toBe(2000);
      expect(error.details.upstreamStatus).toBe(429);
      expect(error.message).toMatch(/^Rate limit reached for requests/);
    });

    it.each([
      [500, true],
      [503, true],
      [400, false],
      [401, false],
    ])('maps a %i to an upstream error (503: upstream_overloaded), retryable %s', async (status, retryable) => {
      sim.setFault({ kind: 'status', status, provider: 'openai' });

      const error = await failure(call());

      expect(error.code).toBe(status === 503 ? 'upstream_overloaded' : 'upstream_error');
      expect(error.retryable).toBe(retryable);
      expect(error.details.upstreamStatus).toBe(status);
    });

    it('keeps the message of a vendor error body given by the fault', async () => {
      sim.setFault({
        kind: 'status',
        status: 400,
        provider: 'openai',
        body: { error: { message: "Invalid 'input[0].content': bad part.", type: 'invalid_request_error', param: 'input', code: null } },
      });

      const error = await failure(call());

      expect(error.message).toBe("Invalid 'input[0].content': bad part.");
      expect(error.retryable).toBe(false);
    });

    it.each(['malformed', 'empty'] as const)('maps a %s 200 body to upstream_malformed_response', async (kind) => {
      sim.setFault({ kind, provider: 'openai' });

      const error = await failure(call());

      expect(error.code).toBe('upstream_malformed_response');
      expect(error.retryable).toBe(false);
    });

    it('keeps the output and reports no usage when the usage block is missing', async () => {
      sim.setFault({ kind: 'no-usage', provider: 'openai' });

      const reply = await send(call());

      expect(reply.output).toMatch(/^Simulated answer from gpt-5\.4-nano:/);
      expect(reply.usage).toBeUndefined();
      // The charge says the cost is unavailable, once (the adapter had said it too).
      expect(reply.warnings).toEqual([]);
    });

    it('maps a reset connection to a retryable unreachable error', async () => {
      sim.setFault({ kind: 'reset', provider: 'openai' });

      const error = await failure(call());

      expect(error.code).toBe('upstream_unreachable');
      expect(error.retryable).toBe(true);
    });

    it('maps a hung answer past the deadline to a timeout', async () => {
      sim.setFault({ kind: 'hang', provider: 'openai' });
      const controller = new AbortController();
      const pending = failure(call(), controller.signal);
      await expect.poll(() => sim.calls().length).toBe(1);

      controller.abort();

      expect((await pending).code).toBe('timeout');
    });
  });
});

describe('Simulator protocol: openai-responses', () => {
  it('answers in the Responses object shape', async () => {
    const before = Math.floor(Date.now() / 1000);

    const { status, json } = await raw({ model: 'gpt-5.4-mini', input: PROMPT, reasoning: { effort: 'low' }, store: false, max_output_tokens: 2048 });

    expect(status).toBe(200);
    expect(json).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-5.4-mini',
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: 2048,
      reasoning: { effort: 'low', summary: null },
      store: false,
      text: { format: { type: 'text' } },
      tools: [],
      truncation: 'disabled',
    });
    expect(json['id']).toMatch(/^resp_[0-9a-f]+$/);
    expect(json['created_at']).toBeGreaterThanOrEqual(before);
    const output = json['output'] as Record<string, unknown>[];
    expect(output).toHaveLength(2);
    expect(output[0]).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [] });
    expect(output[1]).toMatchObject({ id: expect.stringMatching(/^msg_/), type: 'message', status: 'completed', role: 'assistant' });
    const text = (output[1]!['content'] as Record<string, unknown>[])[0]! as { type: string; text: string; annotations: unknown[] };
    expect(text.type).toBe('output_text');
    expect(text.annotations).toEqual([]);
    expect(json['usage']).toEqual({
      input_tokens: PER_MESSAGE_TOKENS + countTokens(PROMPT),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 64 + countTokens(text.text),
      output_tokens_details: { reasoning_tokens: 64 },
      total_tokens: PER_MESSAGE_TOKENS + countTokens(PROMPT) + 64 + countTokens(text.text),
    });
  });

  it('answers the same request with the same text', async () => {
    const a = await raw({ model: 'gpt-5.4-nano', input: 'Same words.' });
    const b = await raw({ model: 'gpt-5.4-nano', input: 'Same words.' });

    expect(a.json['id']).toBe(b.json['id']);
    expect(a.json['output']).toEqual(b.json['output']);
  });

  it.each([
    ['a missing model', { input: PROMPT }, 'model', 'missing_required_parameter'],
    ['a missing input', { model: 'gpt-5.4-nano' }, 'input', 'missing_required_parameter'],
    ['max_output_tokens below 16', { model: 'gpt-5.4-nano', input: PROMPT, max_output_tokens: 5 }, 'max_output_tokens', 'integer_below_min_value'],
    ['temperature above 2', { model: 'gpt-5.4-nano', input: PROMPT, temperature: 2.5 }, 'temperature', 'decimal_above_max_value'],
    ['a safety_identifier over 64 characters', { model: 'gpt-5.4-nano', input: PROMPT, safety_identifier: 's'.repeat(65) }, 'safety_identifier', 'string_above_max_length'],
    ['reasoning on gpt-4.1-mini', { model: 'gpt-4.1-mini', input: PROMPT, reasoning: { effort: 'low' } }, 'reasoning.effort', 'unsupported_parameter'],
    ['reasoning on chatgpt-4o-latest', { model: 'chatgpt-4o-latest', input: PROMPT, reasoning: { effort: 'high' } }, 'reasoning.effort', 'unsupported_parameter'],
    ['effort none on o3-pro', { model: 'o3-pro', input: PROMPT, reasoning: { effort: 'none' } }, 'reasoning.effort', 'unsupported_value'],
    ['effort low on gpt-5.4-pro', { model: 'gpt-5.4-pro', input: PROMPT, reasoning: { effort: 'low' } }, 'reasoning.effort', 'unsupported_value'],
    ['effort medium on gpt-5-pro', { model: 'gpt-5-pro', input: PROMPT, reasoning: { effort: 'medium' } }, 'reasoning.effort', 'unsupported_value'],
    ['top_p on gpt-5.4 reasoning high', { model: 'gpt-5.4', input: PROMPT, top_p: 0.5, reasoning: { effort: 'high' } }, 'top_p', 'unsupported_parameter'],
    [
      'input_text in an assistant message',
      { model: 'gpt-5.4-nano', input: [{ role: 'assistant', content: [{ type: 'input_text', text: 'hi' }] }] },
      'input[0].content[0].type',
      'invalid_value',
    ],
    [
      'a file without filename',
      { model: 'gpt-5.4-nano', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'data:application/pdf;base64,JVBE' }] }] },
      'input[0].content[0].filename',
      'missing_required_parameter',
    ],
    ['an unknown role', { model: 'gpt-5.4-nano', input: [{ role: 'tool', content: 'x' }] }, 'input[0].role', 'invalid_value'],
  ])('refuses %s with a 400 in the OpenAI error shape', async (_name, body, param, code) => {
    const { status, json } = await raw(body);

    expect(status).toBe(400);
    expect(json['error']).toEqual({ message: expect.any(String), type: 'invalid_request_error', param, code });
  });

  it.each([
    ['o3', { reasoning: true, effortNone: false, classic: false }],
    ['o4-mini', { reasoning: true, effortNone: false, classic: false }],
    ['gpt-5', { reasoning: true, effortNone: false, classic: false }],
    ['gpt-5.4', { reasoning: true, effortNone: true, classic: false }],
    ['gpt-5.4-nano', { reasoning: true, effortNone: true, classic: false }],
    ['gpt-5.4-pro', { reasoning: true, effortNone: false, classic: false, onlyEfforts: ['medium', 'high', 'xhigh'] }],
    ['gpt-5-pro', { reasoning: true, effortNone: false, classic: false, onlyEfforts: ['high'] }],
    ['gpt-5-chat-latest', { reasoning: false, effortNone: false, classic: true }],
    ['gpt-4o', { reasoning: false, effortNone: false, classic: true }],
    ['gpt-4.1-mini', { reasoning: false, effortNone: false, classic: true }],
    ['llama-3.1-8b', { reasoning: false, effortNone: false, classic: false }],
  ])('treats %s as OpenAI does', (name, family) => {
    expect(familyOf(name)).toEqual(family);
  });

  it('refuses a body that is not JSON', async () => {
    const { status, json } = await raw('{"model":');

    expect(status).toBe(400);
    expect(json['error']).toMatchObject({ type: 'invalid_request_error' });
  });

  it('refuses a malformed authorization header with 401 and takes none at all', async () => {
    const refused = await raw({ model: 'gpt-5.4-nano', input: PROMPT }, { authorization: 'Basic abc' });
    const anonymous = await fetch(`${sim.baseUrl('openai')}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-nano', input: PROMPT }),
    });

    expect(refused.status).toBe(401);
    expect(refused.json['error']).toMatchObject({ code: 'invalid_api_key' });
    expect(anonymous.status).toBe(200);
  });
});
