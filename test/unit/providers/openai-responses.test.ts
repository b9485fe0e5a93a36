import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelTuning } from '../../../shared/contract/types.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { openaiResponses, withoutKeys } from '../../../shared/providers/openai-responses/index.js';
import { MIN_OUTPUT_TOKENS } from '../../../shared/providers/openai-responses/limits.js';
import { toResponsesRequest } from '../../../shared/providers/openai-responses/request.js';
import { fromResponsesResponse } from '../../../shared/providers/openai-responses/response.js';
import { ResponsesStream } from '../../../shared/providers/openai-responses/stream.js';
import { leastEffort, reasonsOptionally, samplingSupport } from '../../../shared/providers/openai-responses/sampling.js';
import { strictViolation } from '../../../shared/providers/strict-schema.js';
import { toUsage } from '../../../shared/providers/openai-responses/usage.js';
import { schemaInstruction } from '../../../shared/providers/structured-output.js';
import type { ModelCall } from '../../../shared/providers/types.js';
import { catalogEntry as entry, thrownUpstream as thrown, modelCall, scriptedVendor } from '../../support/model-calls.js';
function fixtureText(name: string): string {
  return readFileSync(new URL(`../../fixtures/openai-responses/${name}.json`, import.meta.url), 'utf8');
}

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(fixtureText(name)) as Record<string, unknown>;
}

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return modelCall('fam_c-4.1', overrides);
}

const SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string' },
    score: { type: 'integer' },
  },
  required: ['verdict', 'score'],
  additionalProperties: false,
};

const PROMPT_PART = { type: 'input_text', text: 'Compare two ways to cache HTTP responses.' };

describe('Function: toResponsesRequest', () => {
  it('maps the prompt alone to one user message, the output limit and store false', () => {
    const { body, warnings } = toResponsesRequest(call());

    expect(body).toEqual({
      model: 'gpt-4.1',
      input: [{ role: 'user', content: [PROMPT_PART] }],
      max_output_tokens: 4096,
      store: false,
      stream: false,
    });
    expect(warnings).toEqual([]);
  });

  it('sends the account a call is for as its safety_identifier, and none without one', () => {
    expect(toResponsesRequest(call({ endUser: 'acct_01jz8k2v7c0000000000000000' })).body.safety_identifier).toBe('acct_01jz8k2v7c0000000000000000');
    expect(toResponsesRequest(call()).body).not.toHaveProperty('safety_identifier');
  });

  it('joins the system blocks with blank lines into a developer message before the rest, not instructions (which every response object repeats)', () => {
    const { body } = toResponsesRequest(
      call({
        system: [
          { type: 'text', text: 'You are concise.' },
          { type: 'text', text: 'Answer in English.' },
        ],
      }),
    );

    expect(body.input[0]).toEqual({ role: 'developer', content: 'You are concise.\n\nAnswer in English.' });
    expect(body).not.toHaveProperty('instructions');
  });

  it('keeps history turns in order as string messages before the prompt', () => {
    const { body } = toResponsesRequest(
      call({
        history: [
          { role: 'user', content: 'What is a CDN?' },
          { role: 'assistant', content: 'A content delivery network.' },
        ],
      }),
    );

    expect(body.input).toEqual([
      { role: 'user', content: 'What is a CDN?' },
      { role: 'assistant', content: 'A content delivery network.' },
      { role: 'user', content: [PROMPT_PART] },
    ]);
  });

  it('maps an image to input_image and a PDF to input_file as data URLs after the prompt text', () => {
    const { body } = toResponsesRequest(
      call({
        attachments: [
          { name: 'chart.png', type: 'image/png', base64: 'iVBORw0KGgo=' },
          { name: 'report.pdf', type: 'application/pdf', base64: 'JVBERi0xLjQ=' },
        ],
      }),
    );

    expect(body.input).toEqual([
      {
        role: 'user',
        content: [
          PROMPT_PART,
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          { type: 'input_file', filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
        ],
      },
    ]);
  });

  it('sends temperature and top_p as they are to a model without reasoning', () => {
    const { body, warnings } = toResponsesRequest(call({ temperature: 0.2, topP: 0.9 }));

    expect(body.temperature).toBe(0.2);
    expect(body.top_p).toBe(0.9);
    expect(body.reasoning).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it.each(['low', 'medium', 'high'] as const)('maps reasoningEffort %s to reasoning.effort', (effort) => {
    const { body } = toResponsesRequest(call({ entry: entry('o3'), tuning: { reasoningEffort: effort } }));

    expect(body.reasoning).toEqual({ effort });
  });

  it.each<[string, 'low' | 'medium' | 'high', string]>([
    ['fam_c-5.4-pro', 'low', 'medium'],
    ['fam_c-5.4-pro', 'medium', 'medium'],
    ['fam_c-5.4-pro', 'high', 'high'],
    ['fam_c-5.4', 'low', 'low'],
  ])('sends %s reasoningEffort %s as %s, the least OpenAI takes for it', (id, asked, sent) => {
    const { body, warnings } = toResponsesRequest(call({ entry: entry(id), tuning: { reasoningEffort: asked } }));

    expect(body.reasoning).toEqual({ effort: sent });
    expect(warnings).toEqual(asked === sent ? [] : [`reasoningEffort ${asked} was sent as ${sent}: OpenAI takes ${sent} or more for gpt-5.4-pro`]);
  });

  it("names the effort sent, not the one asked, when it drops a -pro model's temperature", () => {
    const { warnings } = toResponsesRequest(call({ entry: entry('fam_c-5.4-pro'), tuning: { reasoningEffort: 'low' }, temperature: 0.3 }));
    expect(warnings).toEqual([
      'reasoningEffort low was sent as medium: OpenAI takes medium or more for gpt-5.4-pro',
      'temperature was not sent: fam_c-5.4-pro reasons at effort medium, and OpenAI rejects sampling settings then',
    ]);
  });

  it.each([
    ['gpt-5-pro', 'high'],
    ['gpt-5.4-pro', 'medium'],
    ['gpt-5.2-pro-2025-12-11', 'medium'],
    ['gpt-5.4', undefined],
    ['o3-pro', undefined],
  ])('knows the least effort %s takes: %s', (model, least) => {
    expect(leastEffort(model)).toBe(least);
  });

  it.each<[string, ModelTuning]>([
    ['o3', {}],
    ['o4-mini', { reasoningEffort: 'low' }],
    ['fam_c-5', {}],
    ['fam_c-5-mini', {}],
    ['fam_c-5.4-pro', {}],
    ['fam_c-5.4', { reasoningEffort: 'high' }],
  ])('drops temperature and top_p with a warning each for %s with tuning %j', (id, tuning) => {
    const { body, warnings } = toResponsesRequest(call({ entry: entry(id), tuning, temperature: 0.3, topP: 0.5 }));

    expect(body.temperature).toBeUndefined();
    expect(body.top_p).toBeUndefined();
    expect(body.reasoning).toEqual(tuning.reasoningEffort ? { effort: tuning.reasoningEffort } : undefined);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(new RegExp(`^temperature was not sent: ${id.replace('.', '\\.')} `));
    expect(warnings[1]).toMatch(/^topP was not sent/);
  });

  it.each(['fam_c-5.4', 'fam_c-5.4-mini', 'fam_c-5.4-nano'])('sends temperature to %s with reasoning.effort none when no effort was asked for', (id) => {
    const { body, warnings } = toResponsesRequest(call({ entry: entry(id), temperature: 0.3 }));

    expect(body.temperature).toBe(0.3);
    expect(body.reasoning).toEqual({ effort: 'none' });
    expect(warnings).toEqual([]);
  });

  it('leaves reasoning to the vendor default when a GPT-5.4 call has no sampling settings', () => {
    const { body } = toResponsesRequest(call({ entry: entry('fam_c-5.4') }));

    expect(body.reasoning).toBeUndefined();
  });

  it('uses native json_schema format with strict true for a native model', () => {
    const { body, warnings } = toResponsesRequest(call({ responseSchema: SCHEMA, system: [{ type: 'text', text: 'Judge.' }] }));

    expect(body.text).toEqual({ format: { type: 'json_schema', name: 'response', schema: SCHEMA, strict: true } });
    expect(body.input[0]).toEqual({ role: 'developer', content: 'Judge.' });
    expect(warnings).toEqual([]);
  });

  it('sends a schema with an optional property without strict enforcement, with a warning', () => {
    const schema = { ...SCHEMA, required: ['verdict'] };
    const { body, warnings } = toResponsesRequest(call({ responseSchema: schema }));

    expect(body.text?.format.strict).toBe(false);
    expect(warnings).toEqual([expect.stringContaining('(/properties/score does not fit)')]);
  });

  it('appends the schema instruction to the system prompt for the instruction-mode model', () => {
    const { body } = toResponsesRequest(call({ entry: entry('fam_c-4-turbo'), responseSchema: SCHEMA, system: [{ type: 'text', text: 'Judge.' }] }));

    expect(body.text).toBeUndefined();
    expect(body.input[0]).toEqual({ role: 'developer', content: `Judge.\n\n${schemaInstruction(SCHEMA)}` });
  });

  it('puts the schema instruction alone in the developer message when there is no system prompt', () => {
    const { body } = toResponsesRequest(call({ entry: entry('fam_c-4-turbo'), responseSchema: SCHEMA }));

    expect(body.input[0]).toEqual({ role: 'developer', content: schemaInstruction(SCHEMA) });
  });

  it('raises an output limit below the Responses minimum, with a warning', () => {
    const { body, warnings } = toResponsesRequest(call({ maxTokens: 5 }));

    expect(body.max_output_tokens).toBe(MIN_OUTPUT_TOKENS);
    expect(warnings).toEqual([`maxTokens 5 is below the OpenAI Responses minimum; ${MIN_OUTPUT_TOKENS} was sent`]);
  });

  it('warns that cache_control breakpoints do nothing on automatic caching', () => {
    const { body, warnings } = toResponsesRequest(call({ system: [{ type: 'text', text: 'Long policy.', cache_control: { type: 'ephemeral' } }] }));

    expect(body.input[0]).toEqual({ role: 'developer', content: 'Long policy.' });
    expect(JSON.stringify(body)).not.toContain('cache_control');
    expect(warnings).toEqual(['cache_control breakpoints have no effect on fam_c-4.1: OpenAI caches prompt prefixes of 1,024 tokens or more automatically']);
  });
});

describe('Function: samplingSupport', () => {
  it.each([
    ['fam_c-4.1', {}, 'accepted'],
    ['fam_c-4o', {}, 'accepted'],
    ['fam_c-4-turbo', {}, 'accepted'],
    ['fam_c-5.4', {}, 'with-effort-none'],
    ['fam_c-5.4-mini', {}, 'with-effort-none'],
    ['fam_c-5.4-nano', {}, 'with-effort-none'],
    ['fam_c-5.4', { reasoningEffort: 'low' }, 'rejected'],
    ['fam_c-5.4-pro', {}, 'rejected'],
    ['fam_c-5', {}, 'rejected'],
    ['fam_c-5-nano', {}, 'rejected'],
    ['o3-mini', {}, 'rejected'],
    ['o3', {}, 'rejected'],
    ['o4-mini', {}, 'rejected'],
  ] as const)('says %s with tuning %j is %s', (id, tuning, expected) => {
    expect(samplingSupport(entry(id), tuning)).toBe(expected);
  });
});

describe('Function: reasonsOptionally', () => {
  it.each([
    ['gpt-5.1', true],
    ['gpt-5.4-mini', true],
    ['gpt-6', true],
    ['gpt-5', false],
    ['gpt-5-mini', false],
    ['gpt-5.4-pro', false],
    ['o3', false],
    ['gpt-4.1', false],
  ])('says %s takes effort none: %s', (model, expected) => {
    expect(reasonsOptionally(model)).toBe(expected);
  });
});

describe('Function: strictViolation', () => {
  it('accepts a schema whose every object level requires all its properties', () => {
    const nested = {
      ...SCHEMA,
      properties: { ...SCHEMA.properties, items: { type: 'array', items: { ...SCHEMA } } },
      required: [...SCHEMA.required, 'items'],
    };

    expect(strictViolation(nested)).toBeUndefined();
  });

  it.each([
    ['an optional root property', { ...SCHEMA, required: ['score'] }, '/properties/verdict'],
    ['a root without additionalProperties false', { ...SCHEMA, additionalProperties: true }, ''],
    ['a required name that is no property ("Extra required key supplied")', { ...SCHEMA, required: [...SCHEMA.required, 'reason'] }, '/required'],
    ['a required name of an object without properties', { type: 'object', required: ['a'], additionalProperties: false }, '/required'],
    [
      'an optional property inside array items',
      { type: 'object', properties: { list: { type: 'array', items: { ...SCHEMA, required: [] } } }, required: ['list'], additionalProperties: false },
      '/properties/list/items/properties/verdict',
    ],
    [
      'an optional property inside $defs',
      { type: 'object', properties: {}, additionalProperties: false, $defs: { a: { ...SCHEMA, required: ['verdict'] } } },
      '/$defs/a/properties/score',
    ],
    [
      'a string length, which strict mode does not take',
      { ...SCHEMA, properties: { ...SCHEMA.properties, verdict: { type: 'string', minLength: 2 } } },
      '/properties/verdict/minLength',
    ],
    ['a default', { ...SCHEMA, properties: { ...SCHEMA.properties, score: { type: 'number', default: 0 } } }, '/properties/score/default'],
    ['a composition other than anyOf', { ...SCHEMA, properties: { ...SCHEMA.properties, score: { not: { type: 'string' } } } }, '/properties/score/not'],
    ['a root $schema', { $schema: 'https://json-schema.org/draft/2020-12/schema', ...SCHEMA }, '/$schema'],
    // OpenAI: "In context=('properties', 'url'), 'uri' is not a valid format" (its strict formats: date-time ... uuid).
    ['a format strict mode does not take', { ...SCHEMA, properties: { ...SCHEMA.properties, verdict: { type: 'string', format: 'uri' } } }, '/properties/verdict/format'],
    // OpenAI: "In context=('properties', 'a'), schema must have a 'type' key" (a 400 for every model of the request).
    ['a property of any value, {}', { ...SCHEMA, properties: { ...SCHEMA.properties, score: {} } }, '/properties/score'],
    ['a property described but untyped', { ...SCHEMA, properties: { ...SCHEMA.properties, score: { description: 'any JSON value' } } }, '/properties/score'],
    ['a property given as true', { ...SCHEMA, properties: { ...SCHEMA.properties, score: true } }, '/properties/score'],
    ['anyOf at the root ("must be an object, and not use anyOf")', { ...SCHEMA, anyOf: [{ required: ['verdict'] }, { required: ['score'] }] }, '/anyOf'],
    [
      'a string enum of more than 250 values past 15,000 characters in all',
      {
        ...SCHEMA,
        properties: { ...SCHEMA.properties, verdict: { type: 'string', enum: Array.from({ length: 300 }, (_, i) => `${'v'.repeat(56)}${String(i).padStart(4, '0')}`) } },
      },
      '/properties/verdict/enum',
    ],
  ])('points at %s', (_name, schema, pointer) => {
    expect(strictViolation(schema)).toBe(pointer);
  });

  it('takes the constraints, annotations and structure strict mode documents', () => {
    const schema = {
      type: 'object',
      title: 'Verdict',
      description: 'A verdict',
      properties: {
        label: { type: 'string', pattern: '^[a-z]+$', format: 'email', enum: ['a@b.co'] },
        ...Object.fromEntries(['date-time', 'time', 'date', 'duration', 'hostname', 'ipv4', 'ipv6', 'uuid'].map((format) => [format, { type: 'string', format }])),
        score: { type: 'number', minimum: 0, maximum: 10, exclusiveMinimum: -1, exclusiveMaximum: 11, multipleOf: 0.5 },
        tags: { type: 'array', items: { $ref: '#/$defs/tag' }, minItems: 1, maxItems: 3 },
        either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        fixed: { const: 'x' },
        // 300 values, 15,000 characters in all: at the limit.
        many: { type: 'string', enum: Array.from({ length: 300 }, (_, i) => `${'v'.repeat(46)}${String(i).padStart(4, '0')}`) },
      },
      required: ['label', 'score', 'tags', 'either', 'fixed', 'many', 'date-time', 'time', 'date', 'duration', 'hostname', 'ipv4', 'ipv6', 'uuid'],
      additionalProperties: false,
      $defs: { tag: { type: 'string' } },
    };
    expect(strictViolation(schema)).toBeUndefined();
  });
});

describe('Function: fromResponsesResponse', () => {
  it('maps a plain answer: output text, usage and cost to the last digit', () => {
    const reply = fromResponsesResponse(fixture('plain'));

    expect(reply.output).toBe('In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool that reflected the stars.');
    expect(reply.finishReason).toBe('completed');
    expect(reply.warnings).toEqual([]);
    expect(reply.usage).toEqual({ inputTokens: 36, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 87, reasoningTokens: 0 });
    expect(providerCost(entry('fam_c-4.1').prices, reply.usage!)).toBe(0.000768);
  });

  it('maps cached input tokens as a subset of input and prices them at the cached rate', () => {
    const reply = fromResponsesResponse(fixture('cached'));

    expect(reply.usage).toEqual({ inputTokens: 2006, cachedInputTokens: 1920, cacheWriteTokens: 0, outputTokens: 300, reasoningTokens: 0 });
    // 86 x 2 + 1920 x 0.5 + 300 x 8 = 3532 micro-USD
    expect(providerCost(entry('fam_c-4.1').prices, reply.usage!)).toBe(0.003532);
  });

  it('skips the reasoning item and counts reasoning tokens inside output tokens', () => {
    const reply = fromResponsesResponse(fixture('reasoning'));

    expect(reply.output).toBe('The transpose of [1,2],[3,4],[5,6] is [1,3,5],[2,4,6].');
    expect(reply.usage).toEqual({ inputTokens: 75, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1186, reasoningTokens: 1024 });
    // 75 x 1.1 + 1186 x 4.4 = 5300.9 micro-USD
    expect(providerCost(entry('o4-mini').prices, reply.usage!)).toBe(0.0053009);
  });

  it('maps reasoning and a cache hit together', () => {
    const reply = fromResponsesResponse(fixture('reasoning-cached'));

    expect(reply.usage).toEqual({ inputTokens: 4100, cachedInputTokens: 3968, cacheWriteTokens: 0, outputTokens: 512, reasoningTokens: 256 });
    // 132 x 2.5 + 3968 x 0.25 + 512 x 15 = 9002 micro-USD
    expect(providerCost(entry('fam_c-5.4').prices, reply.usage!)).toBe(0.009002);
  });

  it('returns structured output as the JSON text', () => {
    const reply = fromResponsesResponse(fixture('structured'));

    expect(JSON.parse(reply.output)).toEqual({ verdict: 'both answers are correct', score: 8 });
    // 120 x 0.75 + 18 x 4.5 = 171 micro-USD
    expect(providerCost(entry('fam_c-5.4-mini').prices, reply.usage!)).toBe(0.000171);
  });

  it('keeps the partial text of an answer cut at max_output_tokens, with a warning', () => {
    const reply = fromResponsesResponse(fixture('incomplete-max-output-tokens'));

    expect(reply.output).toBe('In a peaceful grove beneath a silver moon, a unicorn named');
    expect(reply.finishReason).toBe('max_output_tokens');
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
    expect(reply.usage?.outputTokens).toBe(16);
  });

  it('answers empty with a warning when reasoning used the whole allowance, and still reports usage', () => {
    const reply = fromResponsesResponse(fixture('incomplete-reasoning-only'));

    expect(reply.output).toBe('');
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
    expect(reply.usage).toEqual({ inputTokens: 75, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 300, reasoningTokens: 300 });
  });

  it('repeats no incomplete reason that is not a vendor word: a lying vendor cannot put the key, the prompt or megabytes in a warning', () => {
    const answer = fixture('incomplete-max-output-tokens') as { incomplete_details: { reason: string } };
    answer.incomplete_details.reason = `OTHER sk-SECRET-MARKER-123 the prompt ${'x'.repeat(100_000)}`;

    const reply = fromResponsesResponse(answer);

    expect(reply.finishReason).toBe('unrecognised');
    expect(reply.warnings.join(' ')).not.toMatch(/SECRET|prompt|xxxx/);
    expect(reply.warnings.join(' ').length).toBeLessThan(200);
  });

  it('keeps the text stopped by the content filter, with a warning', () => {
    const reply = fromResponsesResponse(fixture('incomplete-content-filter'));

    expect(reply.output).toBe('In a peaceful grove');
    expect(reply.finishReason).toBe('content_filter');
    expect(reply.warnings).toEqual(["The output was stopped by the provider's content filter"]);
    expect(reply.cutShort).toBe(true);
    expect(fromResponsesResponse(fixture('incomplete-max-output-tokens'))).not.toHaveProperty('cutShort');
  });

  it('fails an answer the content filter withheld whole as blocked, charged the usage its vendor billed (it had been a completed empty answer)', () => {
    const answer = { ...(fixture('incomplete-content-filter') as object), output: [] };
    const error = thrown(() => fromResponsesResponse(answer));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream_blocked', message: 'The provider blocked the answer (content_filter)', retryable: false });
    expect(error.details.billed?.usage).toMatchObject({ inputTokens: expect.any(Number) });
  });

  it('keeps a streamed answer the content filter stopped after its text went out, though the final response lists none of it: completed, not blocked', () => {
    const stream = new ResponsesStream(() => undefined);
    stream.onEvent({ event: 'response.output_text.delta', data: JSON.stringify({ type: 'response.output_text.delta', delta: 'Hello there' }) });
    const final = { ...(fixture('incomplete-content-filter') as object), output: [] };
    stream.onEvent({ event: 'response.incomplete', data: JSON.stringify({ type: 'response.incomplete', response: final }) });
    expect(stream.finish()).toMatchObject({
      output: 'Hello there',
      finishReason: 'content_filter',
      warnings: expect.arrayContaining(["The output was stopped by the provider's content filter"]),
    });
  });

  it('returns a refusal as the output with a warning that carries none of its text', () => {
    const reply = fromResponsesResponse(fixture('refusal'));

    expect(reply.output).toBe("I'm sorry, I cannot assist with that request.");
    expect(reply.finishReason).toBe('refusal');
    expect(reply.warnings).toEqual(['The model refused to answer; the output is its refusal message']);
    expect(reply.warnings.join(' ')).not.toContain('sorry');
  });

  it('concatenates the output_text parts of every message item in order', () => {
    const body = fixture('plain');
    body['output'] = [
      { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'One. ', annotations: [] }] },
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      {
        type: 'message',
        id: 'msg_2',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Two. ', annotations: [] },
          { type: 'output_text', text: 'Three.', annotations: [] },
        ],
      },
    ];

    expect(fromResponsesResponse(body).output).toBe('One. Two. Three.');
  });

  it.each([
    ['failed', 'upstream_error', true, 'The model failed to generate a response.'],
    ['failed-invalid-image', 'upstream_error', false, 'The image data you provided does not represent a valid image.'],
  ])('throws the error of a %s response as an UpstreamError', (name, code, retryable, message) => {
    const error = thrown(() => fromResponsesResponse(fixture(name)));

    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.message).toBe(message);
  });

  it('throws a retryable rate-limit error for a failed response with rate_limit_exceeded', () => {
    const body = fixture('failed');
    body['error'] = { code: 'rate_limit_exceeded', message: 'Slow down.' };

    const error = thrown(() => fromResponsesResponse(body));

    expect(error.code).toBe('upstream_rate_limited');
    expect(error.retryable).toBe(true);
  });

  it('takes a failure for an account out of quota (insufficient_quota) for spent credit, not retried, in a failed response and in a stream alike', () => {
    const body = fixture('failed');
    body['error'] = { code: 'insufficient_quota', message: 'You exceeded your current quota.' };
    expect(thrown(() => fromResponsesResponse(body))).toMatchObject({ code: 'upstream_rate_limited', retryable: false, details: { creditSpent: true } });
    const stream = new ResponsesStream(() => undefined);
    const error = thrown(() =>
      stream.onEvent({ event: 'error', data: JSON.stringify({ type: 'error', code: 'insufficient_quota', message: 'You exceeded your current quota.' }) }),
    );
    expect(error).toMatchObject({ code: 'upstream_rate_limited', retryable: false, details: { upstreamStatus: 200, creditSpent: true } });
    // The event's error nested under `error`, as it is also sent.
    const nested = thrown(() =>
      new ResponsesStream(() => undefined).onEvent({ event: 'error', data: JSON.stringify({ type: 'error', error: { code: 'rate_limit_exceeded', message: 'Slow down.' } }) }),
    );
    expect(nested).toMatchObject({ code: 'upstream_rate_limited', retryable: true, message: 'Slow down.' });
  });

  it('takes a completed answer of no message (its reasoning alone) as an answer of no text, its usage charged as any', () => {
    const reply = fromResponsesResponse({ ...fixture('plain'), output: [{ id: 'rs_1', type: 'reasoning', summary: [] }] });
    expect(reply.output).toBe('');
    expect(reply.usage).toEqual(fromResponsesResponse(fixture('plain')).usage);
  });

  it.each([
    ['no output list', { ...fixture('plain'), output: undefined }],
    ['a message without content', { ...fixture('plain'), output: [{ type: 'message', role: 'assistant' }] }],
    ['an in_progress status', { ...fixture('plain'), status: 'in_progress' }],
    ['no status', { ...fixture('plain'), status: undefined }],
    ['an empty body', {}],
    ['null', null],
  ])('throws upstream_malformed_response for %s', (_name, body) => {
    const error = thrown(() => fromResponsesResponse(body));

    expect(error.code).toBe('upstream_malformed_response');
    expect(error.retryable).toBe(false);
  });

  it('drops usage with a warning when the block is missing, and keeps the output', () => {
    const body = fixture('plain');
    delete body['usage'];

    const reply = fromResponsesResponse(body);

    expect(reply.usage).toBeUndefined();
    expect(reply.output).not.toBe('');
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).toEqual([]);
  });
});

describe('Function: toUsage', () => {
  const base = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 150 };

  it('treats missing detail blocks as zero', () => {
    expect(toUsage({ input_tokens: 10, output_tokens: 5 })).toEqual({
      inputTokens: 10,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 5,
      reasoningTokens: 0,
    });
  });

  it.each([
    ['null', null],
    ['no input_tokens', { ...base, input_tokens: undefined }],
    ['a negative output_tokens', { ...base, output_tokens: -1 }],
    ['a fractional input_tokens', { ...base, input_tokens: 1.5, total_tokens: 51.5 }],
    ['cached above input', { ...base, input_tokens_details: { cached_tokens: 101 } }],
    ['reasoning above output', { ...base, output_tokens_details: { reasoning_tokens: 51 } }],
    ['a total that is not the sum', { ...base, total_tokens: 149 }],
    // Sent but malformed, never read as 0: that would price cached input uncached, or the reasoning nothing.
    ['a cached count sent as a string', { ...base, input_tokens_details: { cached_tokens: '90' } }],
    ['a negative cached count', { ...base, input_tokens_details: { cached_tokens: -5 } }],
    ['a fractional cached count', { ...base, input_tokens_details: { cached_tokens: 90.5 } }],
    ['a reasoning count sent as a string', { ...base, output_tokens_details: { reasoning_tokens: '40' } }],
    ['a negative reasoning count', { ...base, output_tokens_details: { reasoning_tokens: -1 } }],
  ])('is undefined for %s', (_name, usage) => {
    expect(toUsage(usage as never)).toBeUndefined();
  });
});

describe('Object: openaiResponses', () => {
  const vendor = scriptedVendor('sk-test-secret');
  const answering = vendor.answering;

  it('posts the body to {baseUrl}/responses with a bearer key and merges request and reply warnings', async () => {
    const endpoint = await answering(200, JSON.stringify({ ...JSON.parse(fixtureText('incomplete-max-output-tokens')), usage: null }));

    const reply = await openaiResponses.prepare(call({ entry: entry('o3'), temperature: 0.1 }), endpoint).send(new AbortController().signal);

    const [sent] = vendor.calls;
    expect([sent!.method, sent!.path]).toEqual(['POST', '/v1/responses']);
    expect(sent!.headers['authorization']).toBe('Bearer sk-test-secret');
    expect(JSON.parse(sent!.body)).toMatchObject({ model: 'o3', store: false, max_output_tokens: 4096 });
    expect(reply.warnings).toEqual(['temperature was not sent: o3 is a reasoning model, and OpenAI rejects sampling settings then']);
  });

  it.each([
    ['error-429-rate-limit', 429, { 'retry-after': '2' }, 'upstream_rate_limited', true, 2000],
    ['error-500-server', 500, {}, 'upstream_error', true, undefined],
    ['error-400-unsupported-parameter', 400, {}, 'upstream_error', false, undefined],
  ])('maps the %s body to an UpstreamError', async (name, status, headers, code, retryable, retryAfterMs) => {
    const endpoint = await answering(status, fixtureText(name), headers);

    const error = await openaiResponses
      .prepare(call(), endpoint)
      .send(new AbortController().signal)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UpstreamError);
    const upstream = error as UpstreamError;
    expect(upstream.code).toBe(code);
    expect(upstream.retryable).toBe(retryable);
    expect(upstream.details.upstreamStatus).toBe(status);
    expect(upstream.details.retryAfterMs).toBe(retryAfterMs);
    expect(upstream.message).toBe((fixture(name)['error'] as { message: string }).message);
  });

  it('keeps no part of the API key that a 401 message quotes', async () => {
    const endpoint = await answering(401, fixtureText('error-401-invalid-api-key'));

    const error = (await openaiResponses
      .prepare(call(), endpoint)
      .send(new AbortController().signal)
      .catch((e: unknown) => e)) as UpstreamError;

    expect(error.code).toBe('upstream_error');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Incorrect API key provided: sk-[redacted] You can find your API key at https://platform.openai.com/account/api-keys.');
  });

  it('sends no authorization header without a key', async () => {
    const { baseUrl } = await answering(200, fixtureText('plain'));

    await openaiResponses.prepare(call(), { baseUrl, simulated: true }).send(new AbortController().signal);

    expect(vendor.calls[0]!.headers['authorization']).toBeUndefined();
  });
});

describe('Function: withoutKeys', () => {
  it('returns the same error when the message names no key', () => {
    const error = new UpstreamError('upstream_error', 'Bad request', { upstreamStatus: 400 });

    expect(withoutKeys(error)).toBe(error);
  });

  it('keeps code and details when it redacts', () => {
    const redacted = withoutKeys(new UpstreamError('upstream_error', 'key sk-proj-abc*****xyz9 is wrong', { upstreamStatus: 401 }));

    expect(redacted.message).toBe('key sk-[redacted] is wrong');
    expect(redacted.details.upstreamStatus).toBe(401);
  });
});

describe('Class: ResponsesStream', () => {
  it('ends the answer at its first final event: later deltas and a second final response are not read', () => {
    const deltas: string[] = [];
    const stream = new ResponsesStream((text) => deltas.push(text));
    const answer = (text: string) => ({
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text }] }],
      usage: { input_tokens: 5, output_tokens: 6 },
    });
    const events = [
      { type: 'response.output_text.delta', delta: 'Hostile vendor answer text.' },
      { type: 'response.completed', response: answer('Hostile vendor answer text.') },
      { type: 'response.output_text.delta', delta: 'MORE' },
      { type: 'response.completed', response: answer('MORE') },
    ];
    for (const data of events) stream.onEvent({ event: data.type, data: JSON.stringify(data) });

    expect(deltas).toEqual(['Hostile vendor answer text.']);
    expect(stream.finish().output).toBe(deltas.join(''));
  });

  it("answers the text it streamed, whatever the final response's own copy says, and reads nothing after a final event without a response", () => {
    const read = (events: object[]) => {
      const stream = new ResponsesStream(() => undefined);
      for (const data of events) stream.onEvent({ event: 'message', data: JSON.stringify(data) });
      return stream.finish();
    };
    const completed = {
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Totally different' }] }],
      usage: { input_tokens: 5, output_tokens: 6 },
    };
    expect(
      read([
        { type: 'response.output_text.delta', delta: 'Hello' },
        { type: 'response.completed', response: completed },
      ]).output,
    ).toBe('Hello');
    expect(read([{ type: 'response.output_text.delta', delta: 'Hello' }, { type: 'response.completed' }, { type: 'response.output_text.delta', delta: ' MORE' }]).output).toBe(
      'Hello',
    );
  });
});
