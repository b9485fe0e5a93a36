import { request as httpRequest, Agent } from 'node:http';
import { Ajv } from 'ajv';
import { describe, it, expect, vi } from 'vitest';
import { PROTOCOLS } from '../../infra/local/simulator/protocols.js';
import { startSimulator } from '../../infra/local/simulator/server.js';
import type { Simulator } from '../../infra/local/simulator/server.js';
import { countTokens, generateParagraph, generateFromSchema, SCHEMA_VALUE_MAX_CHARS, truncateToTokens } from '../../infra/local/simulator/text.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { MODELS } from '../../shared/catalog/models.js';
import { MAX_REQUEST_DEADLINE_MS } from '../../shared/deadlines.js';
import { suiteSimulator } from '../support/simulator.js';

interface ChatCompletion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ index: number; message: { role: string; content: string }; finish_reason: string; logprobs: null }>;
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
    completion_tokens_details: { reasoning_tokens: number };
  };
}

interface OpenAiErrorBody {
  error: { message: string; type: string; param?: string | null; code: string | null };
}

const MESSAGES = [
  { role: 'system', content: 'You are concise.' },
  { role: 'user', content: 'Compare two ways to cache HTTP responses.' },
];

function words(s: string): number {
  return s.split(/\s+/).filter(Boolean).length;
}

const sim = await suiteSimulator();

function chatAt(target: Simulator, body: unknown, opts: { provider?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  const init: RequestInit = {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key', ...opts.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
  if (opts.signal) init.signal = opts.signal;
  return fetch(`${target.baseUrl(opts.provider ?? 'openai')}/chat/completions`, init);
}

function chat(body: unknown, opts: { provider?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  return chatAt(sim, body, opts);
}

async function completion(body: unknown, opts: { provider?: string } = {}): Promise<ChatCompletion> {
  const res = await chat(body, opts);
  expect(res.status).toBe(200);
  return (await res.json()) as ChatCompletion;
}

function contentOf(c: ChatCompletion): string {
  const first = c.choices[0];
  if (!first) throw new Error('no choice');
  return first.message.content;
}

describe('simulator basics', () => {
  it('exposes url and baseUrl on loopback', () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.baseUrl('xai')).toBe(`${sim.url}/xai/v1`);
  });

  it('answers in the OpenAI chat.completion shape', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await chat({ model: 'llama-3.1-8b', messages: MESSAGES, temperature: 0.2, top_p: 1, reasoning_effort: 'low' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
    expect(res.headers.get('x-ratelimit-limit-tokens')).toMatch(/^\d+$/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = (await res.json()) as ChatCompletion;
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
    expect(body.object).toBe('chat.completion');
    expect(body.created).toBeGreaterThanOrEqual(before);
    expect(body.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(body.model).toBe('llama-3.1-8b');
    expect(body.choices).toHaveLength(1);
    const choice = body.choices[0]!;
    expect(choice.index).toBe(0);
    expect(choice.message.role).toBe('assistant');
    expect(choice.finish_reason).toBe('stop');
    expect(choice.logprobs).toBeNull();
    expect(choice.message.content.startsWith('Simulated answer from llama-3.1-8b: ')).toBe(true);
    expect(words(choice.message.content)).toBeGreaterThanOrEqual(20);
    expect(words(choice.message.content)).toBeLessThanOrEqual(60);
    expect(body.usage).toBeDefined();
  });

  it('is deterministic: same input same content, different model or prompt different content', async () => {
    const a1 = await completion({ model: 'model-a', messages: MESSAGES });
    const a2 = await completion({ model: 'model-a', messages: MESSAGES }, { provider: 'xai' });
    const b = await completion({ model: 'model-b', messages: MESSAGES });
    const a3 = await completion({ model: 'model-a', messages: [{ role: 'user', content: 'Something else entirely.' }] });
    expect(contentOf(a1)).toBe(contentOf(a2));
    expect(a1.id).toBe(a2.id);
    expect(contentOf(b)).not.toBe(contentOf(a1));
    expect(contentOf(a3)).not.toBe(contentOf(a1));
  });

  it('generates 20-60 word paragraphs for many seeds', () => {
    for (let seed = 0; seed < 500; seed++) {
      const n = words(generateParagraph('gpt-4o-mini', seed * 2654435761));
      expect(n).toBeGreaterThanOrEqual(20);
      expect(n).toBeLessThanOrEqual(60);
    }
  });

  it('reports usage consistent with countTokens', async () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('abc')).toBe(1);
    expect(countTokens('abcd')).toBe(1);
    expect(countTokens('abcde')).toBe(2);
    const messages = [
      { role: 'developer', content: 'Answer in one paragraph.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe this picture' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'text', text: 'and this document.' },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
      { role: 'assistant', content: 'Sure.' },
      { role: 'user', content: 'Go on.' },
    ];
    const body = await completion({ model: 'gpt-4o', messages });
    const expectedPrompt =
      countTokens('Answer in one paragraph.') +
      4 +
      (countTokens('Describe this picture') + 85 + countTokens('and this document.') + 4) +
      (countTokens('Sure.') + 4) +
      (countTokens('Go on.') + 4);
    expect(body.usage).toEqual({
      prompt_tokens: expectedPrompt,
      completion_tokens: countTokens(contentOf(body)),
      total_tokens: expectedPrompt + countTokens(contentOf(body)),
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('truncates to max_tokens / max_completion_tokens with finish_reason length', async () => {
    const full = contentOf(await completion({ model: 'm-trunc', messages: MESSAGES }));
    expect(countTokens(full)).toBeGreaterThan(5);

    for (const key of ['max_tokens', 'max_completion_tokens']) {
      const body = await completion({ model: 'm-trunc', messages: MESSAGES, [key]: 5 });
      const content = contentOf(body);
      expect(body.choices[0]!.finish_reason).toBe('length');
      expect(body.usage!.completion_tokens).toBe(countTokens(content));
      expect(body.usage!.completion_tokens).toBeLessThanOrEqual(5);
      expect(content.length).toBeGreaterThan(0);
      expect(full.startsWith(content)).toBe(true);
    }

    const roomy = await completion({ model: 'm-trunc', messages: MESSAGES, max_tokens: 4096 });
    expect(roomy.choices[0]!.finish_reason).toBe('stop');
    expect(contentOf(roomy)).toBe(full);
    expect(truncateToTokens('abc def', 10)).toBe('abc def');
  });

  it('answers json_schema requests with JSON that conforms to the schema', async () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['title', 'score', 'count', 'ok', 'tags', 'level', 'author', 'note', 'when'],
      properties: {
        title: { type: 'string', minLength: 3, maxLength: 40 },
        score: { type: 'number', minimum: 0, maximum: 1 },
        count: { type: 'integer', minimum: 10, maximum: 20 },
        ok: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        level: { type: 'string', enum: ['low', 'medium', 'high'] },
        author: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'email'],
          properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
        },
        note: { type: ['string', 'null'] },
        when: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date' }] },
      },
    };
    const request = {
      model: 'gpt-4o-mini',
      messages: MESSAGES,
      response_format: { type: 'json_schema', json_schema: { name: 'review', schema, strict: true } },
    };
    const body = await completion(request);
    const parsed = JSON.parse(contentOf(body)) as Record<string, unknown>;
    for (const key of schema.required) expect(parsed).toHaveProperty(key);
    expect(parsed['level']).toBe('low');
    expect(Array.isArray(parsed['tags']) && parsed['tags'].length).toBe(1);
    const validate = new Ajv({ strict: false, logger: false }).compile(schema);
    expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
    expect(body.usage!.completion_tokens).toBe(countTokens(contentOf(body)));
    // deterministic
    expect(contentOf(await completion(request))).toBe(contentOf(body));

    // $ref / $defs, nested arrays of objects, allOf
    const refSchema = {
      type: 'object',
      properties: {
        items: { type: 'array', items: { $ref: '#/$defs/item' } },
        meta: { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { properties: { b: { const: 'x' } } }] },
      },
      required: ['items', 'meta'],
      $defs: { item: { type: 'object', properties: { id: { type: 'integer', exclusiveMinimum: 0 }, label: { type: 'string' } }, required: ['id', 'label'] } },
    };
    const generated = generateFromSchema(refSchema, 42);
    const validateRef = new Ajv({ strict: false, logger: false }).compile(refSchema);
    expect(validateRef(generated), JSON.stringify(validateRef.errors)).toBe(true);
  });

  it.each([
    [
      'a tree (a node whose children are nodes)',
      {
        type: 'object',
        $defs: {
          node: {
            type: 'object',
            properties: { v: { type: 'string' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } },
            required: ['v', 'kids'],
            additionalProperties: false,
          },
        },
        properties: { root: { $ref: '#/$defs/node' } },
        required: ['root'],
        additionalProperties: false,
      },
    ],
    ['a list (a node whose next node is optional)', { type: 'object', properties: { v: { type: 'integer' }, next: { $ref: '#' } }, required: ['v'], additionalProperties: false }],
    ['a list without required members', { type: 'object', properties: { v: { type: 'integer' }, next: { $ref: '#' } }, additionalProperties: false }],
    [
      'a list in strict style (every member required, the next one nullable)',
      { type: 'object', properties: { v: { type: 'integer' }, next: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }, required: ['v', 'next'], additionalProperties: false },
    ],
    [
      'a list whose next node is nullable by its type',
      {
        type: 'object',
        $defs: { node: { type: ['object', 'null'], properties: { v: { type: 'string' }, next: { $ref: '#/$defs/node' } }, required: ['v', 'next'] } },
        properties: { head: { $ref: '#/$defs/node' } },
        required: ['head'],
      },
    ],
    ['a pattern with an example', { type: 'object', properties: { p: { type: 'string', pattern: '^[a-z]{3}$', examples: ['abc'] } }, required: ['p'] }],
  ])('answers %s with a value that conforms', (_name, schema) => {
    const validate = new Ajv({ strict: false, logger: false }).compile(schema);
    const generated = generateFromSchema(schema, 7);
    expect(validate(generated), JSON.stringify(validate.errors)).toBe(true);
  });

  it('bounds what a schema asks for by the output allowance, answering non-conforming JSON past it', async () => {
    // minItems and minLength no allowance holds: built as asked, they held the thread (of the
    // gateway, under npm start) for minutes and ran the heap out of memory.
    const hostile = [
      { type: 'object', properties: { a: { type: 'array', minItems: 1e9, items: { type: 'string' } } }, required: ['a'], additionalProperties: false },
      { type: 'object', properties: { a: { type: 'string', minLength: 1e308 } }, required: ['a'], additionalProperties: false },
      {
        type: 'object',
        properties: { a: { type: 'array', minItems: 1e9, items: { type: 'object', properties: {}, additionalProperties: false } } },
        required: ['a'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { a: { type: 'array', minItems: 1e6, items: { type: 'array', minItems: 1e6, items: { type: 'string', minLength: 1e6 } } } },
        required: ['a'],
        additionalProperties: false,
      },
    ];
    // Properties that each recurse into the whole schema: k of them made k^depth objects (8: 23 MB for a 4,000-character allowance).
    const keys = Array.from({ length: 10 }, (_, i) => `p${i}`);
    const recursive = { type: 'object', properties: Object.fromEntries(keys.map((key) => [key, { $ref: '#' }])), required: keys, additionalProperties: false };
    // The allowance, and past it the least value of each property still to fill: bounded, not k^depth.
    expect(JSON.stringify(generateFromSchema(recursive, 7, 4_000)).length).toBeLessThanOrEqual(2 * 4_000);
    for (const schema of hostile) {
      const value = generateFromSchema(schema, 7);
      expect(JSON.stringify(value).length).toBeLessThanOrEqual(SCHEMA_VALUE_MAX_CHARS + 100);
      expect(new Ajv({ strict: false, logger: false }).compile(schema)(value)).toBe(false);
      // Within a call's max_tokens: the answer is cut there (finish_reason length), never built whole.
      const body = await completion({
        model: 'gpt-4o-mini',
        messages: MESSAGES,
        max_tokens: 1000,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } },
      });
      expect(contentOf(body).length).toBeLessThanOrEqual(4000);
      expect(body.choices[0]!.finish_reason).toBe('length');
    }
    // A demand the allowance holds is still met.
    const fits = { type: 'object', properties: { a: { type: 'array', minItems: 50, items: { type: 'string', minLength: 100 } } }, required: ['a'], additionalProperties: false };
    const value = generateFromSchema(fits, 7, 40_000);
    expect(new Ajv({ strict: false, logger: false }).compile(fits)(value)).toBe(true);
    expect(generateFromSchema(fits, 7, 1_000)).not.toEqual(value);
  });

  it('answers json_object requests with a JSON object', async () => {
    const body = await completion({ model: 'gpt-4o-mini', messages: MESSAGES, response_format: { type: 'json_object' } });
    const parsed = JSON.parse(contentOf(body)) as { answer: unknown };
    expect(typeof parsed.answer).toBe('string');
    expect(String(parsed.answer)).toContain('Simulated answer from gpt-4o-mini');
  });

  it('supports keep-alive connections', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${sim.baseUrl('openai')}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'gpt-4o', messages: MESSAGES }));
      });
    const first = await post();
    const second = await post();
    agent.destroy();
    expect(first).toEqual({ status: 200, reused: false });
    expect(second).toEqual({ status: 200, reused: true });
  });
});

describe('faults', () => {
  const body = { model: 'fault-model', messages: MESSAGES };

  it('status: vendor error body and retry-after header', async () => {
    sim.setFault({ kind: 'status', status: 429, retryAfter: '7' });
    const res = await chat(body);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.json()).toEqual({ error: { message: 'Simulated upstream error 429', type: 'rate_limit_exceeded', code: null } });

    sim.reset();
    sim.setFault({ kind: 'status', status: 503 });
    const r503 = await chat(body);
    expect(r503.headers.get('retry-after')).toBeNull();
    expect(((await r503.json()) as OpenAiErrorBody).error.type).toBe('server_error');

    sim.reset();
    sim.setFault({ kind: 'status', status: 400 });
    expect(((await (await chat(body)).json()) as OpenAiErrorBody).error.type).toBe('invalid_request_error');

    sim.reset();
    sim.setFault({ kind: 'status', status: 500, body: { custom: true } });
    expect(await (await chat(body)).json()).toEqual({ custom: true });
  });

  it('times counts down, then answers normally', async () => {
    sim.setFault({ kind: 'status', status: 503, times: 2 });
    expect((await chat(body)).status).toBe(503);
    expect((await chat(body)).status).toBe(503);
    expect((await chat(body)).status).toBe(200);
    expect((await chat(body)).status).toBe(200);
  });

  it('the first matching rule applies', async () => {
    sim.setFault({ kind: 'status', status: 502, model: 'fault-model', times: 1 });
    sim.setFault({ kind: 'status', status: 504 });
    expect((await chat(body)).status).toBe(502);
    expect((await chat(body)).status).toBe(504);
  });

  it('hang: the client aborts, the simulator keeps working', async () => {
    sim.setFault({ kind: 'hang', times: 1 });
    await expect(chat(body, { signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect((await chat(body)).status).toBe(200);
  });

  it("keeps no call body when told not to (npm start): a request's content does not outlive it there", async () => {
    const local = await startSimulator({ recordBodies: false });
    try {
      expect((await chatAt(local, body)).status).toBe(200);
      const [call] = local.calls();
      expect(call).toMatchObject({ provider: 'openai', model: body.model });
      expect(call!.body).toBeUndefined();
      // By default (the tests' hosts) the body is kept, to read what was sent.
      expect((await chat(body)).status).toBe(200);
      expect(sim.calls().at(-1)!.body).toEqual(body);
    } finally {
      await local.close();
    }
  });

  it('hang: close() resolves promptly with requests still hanging', async () => {
    const local = await startSimulator();
    local.setFault({ kind: 'hang' });
    const aborted = chatAt(local, body, { signal: AbortSignal.timeout(100) });
    const pending = chatAt(local, body);
    const pendingOutcome = pending.then(
      () => 'resolved',
      () => 'rejected',
    );
    await expect(aborted).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(local.calls()).toHaveLength(2);
    const started = performance.now();
    await local.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await pendingOutcome).toBe('rejected');
    await local.close(); // idempotent
  });

  it('slow: answers after the delay', async () => {
    sim.setFault({ kind: 'slow', delayMs: 150 });
    const started = performance.now();
    const res = await chat(body);
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(((await res.json()) as ChatCompletion).usage).toBeDefined();
  });

  it('latency: per model, and a client abort ends the wait', async () => {
    sim.setLatency(150, { model: 'lazy-model' });
    const started = performance.now();
    expect((await chat({ model: 'lazy-model', messages: MESSAGES })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);

    sim.setLatency(60_000, { provider: 'xai' });
    await expect(chat(body, { provider: 'xai', signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect((await chat(body, { provider: 'groq' })).status).toBe(200);
  });

  it('malformed: 200 with a truncated JSON body', async () => {
    sim.setFault({ kind: 'malformed' });
    const res = await chat(body);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeGreaterThan(0);
    expect(text.startsWith('{')).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
  });

  it('empty: 200 with an empty body', async () => {
    sim.setFault({ kind: 'empty' });
    const res = await chat(body);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('reset: the socket is destroyed and fetch rejects', async () => {
    sim.setFault({ kind: 'reset', times: 1 });
    await expect(chat(body)).rejects.toThrow(TypeError);
    expect((await chat(body)).status).toBe(200);
  });

  it('no-usage: a normal answer without usage', async () => {
    sim.setFault({ kind: 'no-usage' });
    const res = await completion(body);
    expect(res.usage).toBeUndefined();
    expect(res).not.toHaveProperty('usage');
    expect(contentOf(res)).toContain('Simulated answer from fault-model');
  });

  it('per-model and per-provider rules do not affect others', async () => {
    sim.setFault({ kind: 'status', status: 500, model: 'broken-model' });
    sim.setFault({ kind: 'status', status: 503, provider: 'xai' });
    expect((await chat({ model: 'broken-model', messages: MESSAGES })).status).toBe(500);
    expect((await chat({ model: 'healthy-model', messages: MESSAGES })).status).toBe(200);
    expect((await chat({ model: 'healthy-model', messages: MESSAGES }, { provider: 'xai' })).status).toBe(503);
    expect((await chat({ model: 'broken-model', messages: MESSAGES }, { provider: 'openai' })).status).toBe(500);
  });

  it('rejects invalid rules', () => {
    expect(() => sim.setFault({ kind: 'status', status: 42 })).toThrow(TypeError);
    expect(() => sim.setFault({ kind: 'slow', delayMs: -1 })).toThrow(TypeError);
    expect(() => sim.setFault({ kind: 'hang', times: 0 })).toThrow(TypeError);
  });
});

describe('reset()', () => {
  it("clears the protocols' prompt caches as well", async () => {
    const system = [{ type: 'text', text: 'cached instructions '.repeat(400), cache_control: { type: 'ephemeral' } }];
    const send = async () => {
      const res = await fetch(`${sim.baseUrl('anthropic')}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { usage: { cache_creation_input_tokens: number; cache_read_input_tokens: number } }).usage;
    };
    expect((await send()).cache_creation_input_tokens).toBeGreaterThan(0);
    expect((await send()).cache_read_input_tokens).toBeGreaterThan(0);
    sim.reset();
    const cold = await send();
    expect(cold.cache_read_input_tokens).toBe(0);
    expect(cold.cache_creation_input_tokens).toBeGreaterThan(0);
  });
});

describe('Anthropic prompt cache', () => {
  it.each([
    ['claude-opus-4-6', 4096],
    ['claude-opus-4-5-20251101', 4096],
    ['claude-haiku-4-5', 4096],
    ['claude-3-5-haiku-latest', 2048],
    ['claude-sonnet-4-6', 1024],
    ['claude-opus-4-7', 4096],
  ])("caches %s's prefixes from %i tokens on, as Anthropic does, and nothing under that", async (model, minimum) => {
    // About `tokens` tokens: the simulator counts 4 characters a token.
    const send = async (tokens: number) => {
      const system = [{ type: 'text', text: `${model} ${tokens} `.concat('cached instructions '.repeat(Math.round(tokens / 5))), cache_control: { type: 'ephemeral' } }];
      const res = await fetch(`${sim.baseUrl('anthropic')}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model, max_tokens: 16, system, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { usage: { input_tokens: number; cache_creation_input_tokens: number } }).usage;
    };
    const under = await send(Math.round(minimum * 0.6));
    const over = await send(Math.round(minimum * 1.2));
    expect(under.cache_creation_input_tokens).toBe(0);
    expect(under.input_tokens).toBeLessThan(minimum);
    expect(over.cache_creation_input_tokens).toBeGreaterThanOrEqual(minimum);
  });
});

describe('control API', () => {
  it('POST and DELETE /__sim/faults, GET /__sim/calls', async () => {
    const post = await fetch(`${sim.url}/__sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'status', status: 429, retryAfter: '2', model: 'ctl-model' }),
    });
    expect(post.status).toBe(204);
    const limited = await chat({ model: 'ctl-model', messages: MESSAGES });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');

    sim.setLatency(60_000);
    const del = await fetch(`${sim.url}/__sim/faults`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect((await chat({ model: 'ctl-model', messages: MESSAGES }, { provider: 'anthropic' })).status).toBe(200);

    const res = await fetch(`${sim.url}/__sim/calls`);
    expect(res.status).toBe(200);
    const calls = (await res.json()) as Array<Record<string, unknown>>;
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => [c['provider'], c['model'], c['protocol'], c['path']])).toEqual([
      ['openai', 'ctl-model', 'openai-chat', '/openai/v1/chat/completions'],
      ['anthropic', 'ctl-model', 'openai-chat', '/anthropic/v1/chat/completions'],
    ]);
    for (const c of calls) expect(c).not.toHaveProperty('body');
    expect(sim.calls()).toHaveLength(2);
    expect(sim.calls()[0]!.body).toEqual({ model: 'ctl-model', messages: MESSAGES });
  });

  it('rejects invalid fault rules with 400', async () => {
    for (const payload of ['{not json', JSON.stringify({ kind: 'explode' }), JSON.stringify({ kind: 'status' })]) {
      const res = await fetch(`${sim.url}/__sim/faults`, { method: 'POST', body: payload });
      expect(res.status).toBe(400);
      expect(((await res.json()) as OpenAiErrorBody).error.type).toBe('invalid_request_error');
    }
  });

  it('reset() clears calls, rules and latencies', async () => {
    sim.setFault({ kind: 'status', status: 500 });
    sim.setLatency(60_000);
    await chat({ model: 'x', messages: MESSAGES }, { signal: AbortSignal.timeout(50) }).catch(() => undefined);
    expect(sim.calls().length).toBeGreaterThan(0);
    sim.reset();
    expect(sim.calls()).toHaveLength(0);
    expect((await chat({ model: 'x', messages: MESSAGES })).status).toBe(200);
  });
});

describe('bad requests', () => {
  async function expectBadRequest(res: Response, param: string | null, message?: string): Promise<void> {
    expect(res.status).toBe(400);
    const body = (await res.json()) as OpenAiErrorBody;
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.param).toBe(param);
    if (message) expect(body.error.message).toBe(message);
  }

  it('400 for malformed JSON and invalid requests', async () => {
    await expectBadRequest(await chat('{"model": "x", "messages": ['), null);
    await expectBadRequest(await chat(''), null);
    await expectBadRequest(await chat({ messages: MESSAGES }), 'model');
    await expectBadRequest(await chat({ model: 'x', messages: [] }), 'messages');
    await expectBadRequest(await chat({ model: 'x' }), 'messages');
    await expectBadRequest(await chat({ model: 'x', messages: [{ role: 'wizard', content: 'hi' }] }), 'messages[0].role');
    await expectBadRequest(await chat({ model: 'x', messages: [{ role: 'user', content: [{ type: 'audio' }] }] }), 'messages[0].content[0].type');
    await expectBadRequest(await chat({ model: 'x', messages: MESSAGES, max_tokens: 0 }), 'max_tokens');
    await expectBadRequest(await chat({ model: 'x', messages: MESSAGES, temperature: 3 }), 'temperature');
    await expectBadRequest(await chat({ model: 'x', messages: MESSAGES, response_format: { type: 'xml' } }), 'response_format');
    await expectBadRequest(await chat({ model: 'x', messages: MESSAGES, response_format: { type: 'json_schema', json_schema: { schema: {} } } }), 'response_format');
    // bad requests are recorded too, and do not consume fault rules
    expect(sim.calls()).toHaveLength(11);
  });

  it('bad requests do not consume fault rules', async () => {
    sim.setFault({ kind: 'status', status: 503, times: 1 });
    await expectBadRequest(await chat({ model: 'x', messages: [] }), 'messages');
    expect((await chat({ model: 'x', messages: MESSAGES })).status).toBe(503);
  });

  it('404 JSON for unknown paths', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/nope'],
      ['GET', '/'],
      ['POST', '/groq/v1/embeddings'],
      ['GET', '/groq/v1/chat/completions'],
      ['GET', '/__sim/unknown'],
      ['PUT', '/__sim/faults'],
    ];
    for (const [method, path] of cases) {
      const res = await fetch(`${sim.url}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(((await res.json()) as OpenAiErrorBody).error.message).toContain(path);
    }
    expect(sim.calls()).toHaveLength(0);
  });
});

describe('authorization', () => {
  it('accepts any bearer key and redacts it in calls()', async () => {
    const secret = 'sk-live-very-secret-value';
    expect((await chat({ model: 'm', messages: MESSAGES }, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    const call = sim.calls()[0]!;
    expect(call.headers['authorization']).toBe('[redacted]');
    expect(call.headers['content-type']).toBe('application/json');
    expect(JSON.stringify(sim.calls())).not.toContain(secret);
    expect(await (await fetch(`${sim.url}/__sim/calls`)).text()).not.toContain(secret);
  });

  it('accepts a missing header and rejects a non-bearer one', async () => {
    const noAuth = await fetch(`${sim.baseUrl('groq')}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: MESSAGES }),
    });
    expect(noAuth.status).toBe(200);
    expect(sim.calls()[0]!.headers['authorization']).toBeUndefined();

    const res = await chat({ model: 'm', messages: MESSAGES }, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as OpenAiErrorBody).error.code).toBe('invalid_api_key');
    expect(sim.calls()[1]!.headers['authorization']).toBe('[redacted]');
  });
});

describe('vendor dialects', () => {
  type Body = Record<string, unknown> & {
    choices: Array<{ message: Record<string, unknown>; finish_reason: string }>;
    usage: Record<string, unknown>;
  };
  /** 78 simulator tokens of system prompt: dialects with a (warm) cache report the first 64 as cached. */
  const LONG_SYSTEM = `${'You compare HTTP caching strategies for a platform team. '.repeat(5).trim()} Be concise and concrete.`;
  const user = (content: unknown) => ({ role: 'user', content });

  async function answer(provider: string, body: Record<string, unknown>): Promise<Body> {
    const res = await chat(body, { provider });
    expect(res.status).toBe(200);
    return (await res.json()) as Body;
  }

  it('the dialect follows the catalog model, else the provider token of the path, else OpenAI', async () => {
    const known = await answer('groq', { model: 'deepseek-v4-pro', messages: [user('Hi')] });
    expect(known.usage).toHaveProperty('prompt_cache_hit_tokens');
    const byPath = await answer('deepseek', { model: 'custom-model', messages: [user('Hi')] });
    expect(byPath.usage).toHaveProperty('prompt_cache_hit_tokens');
    const unknown = await answer('openai', { model: 'custom-model', messages: [user('Hi')] });
    expect(unknown.usage).not.toHaveProperty('prompt_cache_hit_tokens');
    expect(unknown.choices[0]!.message).not.toHaveProperty('reasoning_content');
  });

  it('deepseek: thinks by default, reports cache hits and misses, reasoning inside completion_tokens', async () => {
    const messages = [{ role: 'system', content: LONG_SYSTEM }, user('Compare ETags and max-age.')];
    const body = await answer('deepseek', { model: 'deepseek-v4-pro', messages, max_tokens: 4000 });
    const message = body.choices[0]!.message;
    const content = message['content'] as string;
    expect(String(message['reasoning_content']).startsWith('Simulated reasoning: ')).toBe(true);
    const prompt = 4 + countTokens(LONG_SYSTEM) + 4 + countTokens('Compare ETags and max-age.');
    expect(body.usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: countTokens(content) + 512,
      total_tokens: prompt + countTokens(content) + 512,
      prompt_cache_hit_tokens: 64,
      prompt_cache_miss_tokens: prompt - 64,
      completion_tokens_details: { reasoning_tokens: 512 },
    });

    const plain = await answer('deepseek', { model: 'deepseek-flash', messages, thinking: { type: 'disabled' } });
    expect(plain.choices[0]!.message).not.toHaveProperty('reasoning_content');
    expect(plain.usage['completion_tokens_details']).toEqual({ reasoning_tokens: 0 });
  });

  it("deepseek: in thinking mode, refuses a first turn that is not the user's and successive turns of one role", async () => {
    const cases: Array<[unknown[], string]> = [
      [
        [{ role: 'system', content: 'Be brief.' }, { role: 'assistant', content: 'Hello!' }, user('Hi')],
        'The first message (except the system message) of deepseek-v4-pro must be a user message, but an assistant message detected.',
      ],
      [
        [{ role: 'system', content: 'Be brief.' }, user('Hi'), user('Again')],
        'deepseek-v4-pro does not support successive user or assistant messages (messages[1] and messages[2] in your input). You should interleave the user/assistant messages in the message sequence.',
      ],
    ];
    for (const [messages, message] of cases) {
      const res = await chat({ model: 'deepseek-v4-pro', messages }, { provider: 'deepseek' });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } });
    }
    await answer('deepseek', { model: 'deepseek-v4-pro', messages: [user('Hi'), { role: 'assistant', content: 'Hello.' }, user('Again')] });
    await answer('deepseek', { model: 'deepseek-flash', messages: [user('Hi'), user('Again')], thinking: { type: 'disabled' } });
  });

  it('groq: refuses strict json_schema unless every property is required, and takes the same schema in best-effort mode', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'], additionalProperties: false };
    const format = (strict: boolean) => ({ type: 'json_schema', json_schema: { name: 'response', schema, strict } });

    const res = await chat({ model: 'openai/gpt-oss-120b', messages: [user('Hi')], response_format: format(true) }, { provider: 'groq' });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as OpenAiErrorBody).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'response_format' });
    expect(error.message).toMatch(/^invalid JSON schema for response_format with strict: true: .*Missing 'b'\. All fields must be required/);

    const body = await answer('groq', { model: 'openai/gpt-oss-120b', messages: [user('Hi')], response_format: format(false) });
    expect(JSON.parse(body.choices[0]!.message['content'] as string)).toHaveProperty('a');
  });

  it('xai: reasoning tokens beside completion_tokens, set by reasoning_effort on grok-4.3', async () => {
    for (const [effort, reasoning] of [
      ['none', 0],
      ['low', 64],
      ['high', 512],
    ] as const) {
      const body = await answer('xai', { model: 'grok-4.3', messages: [user('Hi')], reasoning_effort: effort });
      const usage = body.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number; completion_tokens_details: Record<string, number> };
      expect(usage.completion_tokens).toBe(countTokens(body.choices[0]!.message['content'] as string));
      expect(usage.completion_tokens_details['reasoning_tokens']).toBe(reasoning);
      expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens + reasoning);
    }
    const plain = await answer('xai', { model: 'grok-4.20-0309-non-reasoning', messages: [user('Hi')] });
    expect((plain.usage['completion_tokens_details'] as Record<string, number>)['reasoning_tokens']).toBe(0);
  });

  it('xai: rejects reasoning_effort on grok-4.20, penalties on reasoning models and GIF images, in its own error shape', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'grok-4.20-0309-reasoning', reasoning_effort: 'low' }, 'Model grok-4.20-0309-reasoning does not support parameter reasoningEffort.'],
      [{ model: 'grok-4.3', presence_penalty: 0.5 }, 'Model grok-4.3 does not support parameter presencePenalty.'],
      [
        { model: 'grok-4.3', messages: [user([{ type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lG' } }])] },
        'Unsupported image format: only jpg/jpeg and png images are supported.',
      ],
    ];
    for (const [fields, error] of cases) {
      const res = await chat({ messages: [user('Hi')], ...fields }, { provider: 'xai' });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ code: 'Client specified an invalid argument', error });
    }
  });

  it('mistral: 422 for fields it does not know; image URLs as strings and document_url parts accepted', async () => {
    const res = await chat({ model: 'mistral-small-latest', messages: [user('Hi')], max_completion_tokens: 10 }, { provider: 'mistral' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'extra_forbidden', loc: ['body', 'max_completion_tokens'], msg: 'Extra inputs are not permitted', input: 10 }],
    });
    const parts = [
      { type: 'text', text: 'Describe these.' },
      { type: 'image_url', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
      { type: 'document_url', document_url: 'data:application/pdf;base64,JVBERi0=', document_name: 'a.pdf' },
    ];
    const body = await answer('mistral', { model: 'mistral-medium-latest', messages: [{ role: 'system', content: LONG_SYSTEM }, user(parts)], max_tokens: 100 });
    expect(body.usage).toEqual({
      prompt_tokens: 4 + countTokens(LONG_SYSTEM) + 4 + countTokens('Describe these.') + 85 + 258,
      completion_tokens: countTokens(body.choices[0]!.message['content'] as string),
      total_tokens: expect.any(Number),
      prompt_tokens_details: { cached_tokens: 64 },
    });
  });

  it('cerebras: reasoning text in `reasoning`, time_info, temperature capped at 1.5', async () => {
    const body = await answer('cerebras', { model: 'gpt-oss-120b', messages: [user('Hi')], reasoning_effort: 'high' });
    const message = body.choices[0]!.message;
    expect(String(message['reasoning']).startsWith('Simulated reasoning: ')).toBe(true);
    expect(body.usage['completion_tokens']).toBe(countTokens(message['content'] as string) + 512);
    expect(body.usage['completion_tokens_details']).toEqual({ accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 });
    expect(body).toHaveProperty('time_info.queue_time');

    const hot = await chat({ model: 'gpt-oss-120b', messages: [user('Hi')], temperature: 1.8 }, { provider: 'cerebras' });
    expect(hot.status).toBe(400);
    expect(await hot.json()).toEqual({
      message: 'temperature: Input should be less than or equal to 1.5',
      type: 'invalid_request_error',
      param: 'validation_error',
      code: 'wrong_api_format',
    });
  });

  it('groq: gpt-oss returns `reasoning` and x_groq', async () => {
    const oss = await answer('groq', { model: 'openai/gpt-oss-20b', messages: [user('Hi')] });
    expect(String(oss.choices[0]!.message['reasoning']).startsWith('Simulated reasoning: ')).toBe(true);
    expect(oss).toHaveProperty('x_groq.id');
    expect(oss.usage['completion_tokens_details']).toEqual({ reasoning_tokens: 192 });
  });

  it('faults are shaped like the vendor of the model', async () => {
    const cases: Array<[string, string, number, unknown]> = [
      ['xai', 'grok-4.3', 429, { code: 'Some resource has been exhausted', error: 'Simulated upstream error 429' }],
      ['mistral', 'codestral-latest', 429, { object: 'error', message: 'Requests rate limit exceeded', type: 'rate_limited', param: null, code: '1300' }],
      ['cerebras', 'gpt-oss-120b', 500, { status_code: 500, error: { message: 'Simulated upstream error 500', type: 'server_error', param: '', code: '', id: '' } }],
      ['cerebras', 'gpt-oss-120b', 429, { message: 'Simulated upstream error 429', type: 'rate_limit_exceeded', param: '', code: '' }],
      ['deepseek', 'deepseek-v4-pro', 503, { error: { message: 'Server overloaded, please try again later.', type: 'server_error', param: null, code: 'server_error' } }],
      ['groq', 'openai/gpt-oss-120b', 498, { error: { message: 'Simulated upstream error 498', type: 'invalid_request_error', code: 'capacity_exceeded' } }],
    ];
    for (const [provider, model, status, expected] of cases) {
      sim.reset();
      sim.setFault({ kind: 'status', status, retryAfter: '1', provider });
      const res = await chat({ model, messages: [user('Hi')] }, { provider });
      expect(res.status).toBe(status);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual(expected);
    }
  });
});

describe('models their vendors have shut down (the catalog retirements in effect)', () => {
  /** A request as each vendor's clients send it: Anthropic's with its key and version headers. */
  function post(path: string, body: unknown): Promise<Response> {
    const auth: Record<string, string> = path.startsWith('/anthropic/') ? { 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' } : { authorization: 'Bearer test-key' };
    return fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  }
  const hi = [{ role: 'user', content: 'Hi' }];

  it.each([
    [
      'Groq: 400 model_decommissioned',
      '/groq/v1/chat/completions',
      { model: 'qwen/qwen3-32b', messages: hi },
      400,
      {
        error: {
          message:
            'The model `qwen/qwen3-32b` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead.',
          type: 'invalid_request_error',
          code: 'model_decommissioned',
        },
      },
    ],
    [
      'Cerebras: 404 model_not_found',
      '/cerebras/v1/chat/completions',
      { model: 'zai-glm-4.7', messages: hi },
      404,
      { message: 'Model does not exist or you do not have access to it.', type: 'not_found_error', param: 'model', code: 'model_not_found' },
    ],
    [
      'OpenAI: 404 model_not_found',
      '/openai/v1/responses',
      { model: 'o4-mini', input: 'Hi' },
      404,
      { error: { message: 'The model `o4-mini` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } },
    ],
    [
      'Anthropic: 404 not_found_error',
      '/anthropic/v1/messages',
      { model: 'claude-opus-4-20250514', max_tokens: 16, messages: hi },
      404,
      { type: 'error', error: { type: 'not_found_error', message: 'model: claude-opus-4-20250514' }, request_id: expect.stringMatching(/^req_/) },
    ],
  ])('refuses a shut-down model as its vendor does (%s), and no fault rule is spent on it', async (_vendor, path, body, status, expected) => {
    const provider = path.split('/')[1]!;
    sim.setFault({ kind: 'status', status: 503, provider, times: 1 });
    const refused = await post(path, body);
    expect(refused.status).toBe(status);
    expect(await refused.json()).toEqual(expected);
    // The call is recorded as any other: a test sees the name that was sent.
    expect(sim.calls().map((c) => c.model)).toEqual([(body as { model: string }).model]);
    // The fault rule is still there for the next call.
    expect((await post(path, { ...body, model: 'unknown-live-model' })).status).toBe(503);
  });

  it('answers the retired slugs xAI still serves (it redirects them to grok-4.3)', async () => {
    expect((await chat({ model: 'grok-3-mini', messages: hi }, { provider: 'xai' })).status).toBe(200);
  });

  it("answers a model until the last request the gateway read before its vendor's shutdown day can have ended, and refuses it from then", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // OpenAI shuts gpt-5 down on 2026-12-11 (fam_c-5's retirement). A request the gateway read at
      // 23:59:59 the day before calls gpt-5 still, until its deadline: at most MAX_REQUEST_DEADLINE_MS.
      const day = Date.parse('2026-12-11T00:00:00Z');
      vi.setSystemTime(day - 1_000);
      expect(resolveModel('fam_c-5', Date.now())!.upstreamModel).toBe('gpt-5');
      for (const at of [day - 1_000, day, day + MAX_REQUEST_DEADLINE_MS - 1]) {
        vi.setSystemTime(at);
        expect((await post('/openai/v1/responses', { model: 'gpt-5', input: 'Hi' })).status, new Date(at).toISOString()).toBe(200);
      }
      vi.setSystemTime(day + MAX_REQUEST_DEADLINE_MS);
      expect((await post('/openai/v1/responses', { model: 'gpt-5', input: 'Hi' })).status).toBe(404);
    } finally {
      vi.useRealTimers();
    }
  });

  it("has every retired catalog model's protocol refuse it with a 4xx, but xAI's, which xAI still answers", () => {
    for (const entry of MODELS.filter((m) => m.retirement)) {
      const handler = PROTOCOLS.find((p) => p.protocol === entry.protocol)!;
      const reply = handler.shutDown?.(entry.upstreamModel, entry.provider);
      if (entry.provider === 'xai') expect(reply, entry.id).toBeUndefined();
      else expect(reply?.status, entry.id).toBeOneOf([400, 404]);
    }
  });
});
