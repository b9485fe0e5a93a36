import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { generateApiKey } from '../../shared/auth/keys.js';
import { allModels, resolveModel, vendorSpelling } from '../../shared/catalog/index.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { checkStructuredOutput } from '../../shared/contract/structured-output.js';
import { loadAjv } from '../../shared/contract/ajv.js';
import { checkSchema } from '../support/response-schema.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { PDF_BASE64, PNG_BASE64 } from '../support/fixtures.js';
import { startTestHost } from '../support/local.js';
import { openApiProblems } from '../support/openapi-validator.js';

/**
 * Property-based fuzzing through the local host over HTTP (issue 8, "Bad input"). Every
 * generated request is refused by construction (a broken body, or a valid body with a
 * hostile header); the property is that every answer is a 4xx carrying the documented
 * JSON error body, never a 5xx, and that afterwards no provider was called and the
 * account's balance and ledger are exactly as before.
 *
 * FUZZ_RUNS sets the number of requests; the default is 10,000 in CI (CI set) and 2,000
 * otherwise. They are sent 16 at a time over keep-alive connections to one host.
 */
const RUNS = Number(process.env.FUZZ_RUNS) || (process.env.CI ? 10_000 : 2_000);
const CONCURRENCY = 16;

let host: LocalHost;
let agent: Agent;
let sent = 0;
const byKind = new Map<string, number>();
const byStatus = new Map<number, number>();

beforeAll(async () => {
  host = await startTestHost();
  agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
});
afterAll(async () => {
  agent?.destroy();
  await host?.close();
});

// ---------------------------------------------------------------------------
// The one valid body every mutation starts from
// ---------------------------------------------------------------------------

const TUNED = { claude: 'fam_a-sonnet-4-6', gemini: 'fam_b-3.1-pro', gpt: 'fam_c-5.4' } as const;

/** Every field of the contract, each valid: the base that mutations break one place of. */
function fullBody(prompt = 'Compare these models'): Record<string, any> {
  return {
    prompt,
    models: [TUNED.claude, TUNED.gemini, TUNED.gpt],
    judges: ['fam_c-4.1'],
    judge_prompt: 'Prefer the most accurate answer',
    judge_weights: { accuracy: 0.7, speed: 0.2, cost: 0.1 },
    attachments: [{ name: 'a.png', type: 'image/png', base64: PNG_BASE64 }],
    system_prompt: [{ type: 'text', text: 'Be brief', cache_control: { type: 'ephemeral' } }],
    history: [
      { role: 'user', content: 'Hello', cache_control: { type: 'ephemeral' } },
      { role: 'assistant', content: 'Hi' },
    ],
    generation_settings: { temperature: 0.5, maxTokens: 256, topP: 0.9 },
    response_schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false },
    model_tuning: {
      [TUNED.claude]: { thinkingBudget: 2048 },
      [TUNED.gemini]: { thinkingBudget: 1024, webSearch: true, cachedContent: 'cachedContents/abc-123' },
      [TUNED.gpt]: { reasoningEffort: 'low' },
    },
    zero_data_retention: true,
  };
}

/** A valid body that would run models (no judges): the base of the header cases. */
function runnableBody(prompt: string): Record<string, any> {
  const { judges: _judges, judge_prompt: _prompt, judge_weights: _weights, ...rest } = fullBody(prompt);
  return rest;
}

const OPTIONAL_FIELDS = Object.keys(fullBody()).filter((k) => k !== 'prompt' && k !== 'models');

/** A random valid body: a random prompt and a random subset of the optional fields. */
const validBody = fc.record({ prompt: fc.string({ minLength: 1, maxLength: 40 }), keep: fc.subarray(OPTIONAL_FIELDS) }).map(({ prompt, keep }) => {
  const full = fullBody(prompt);
  for (const key of OPTIONAL_FIELDS) if (!keep.includes(key)) delete full[key];
  return full;
});

// ---------------------------------------------------------------------------
// Hostile requests
// ---------------------------------------------------------------------------

interface Hostile {
  kind: string;
  body: string | Buffer;
  /** Header overrides; undefined removes a default header, an array repeats it. */
  headers?: Record<string, string | string[] | undefined>;
  /** Send the body chunked, without Content-Length. */
  chunked?: boolean;
  /** The request target, as sent; /api/v1/prompt by default. */
  target?: string;
  /** Send no Host header. */
  noHost?: boolean;
}

const json =
  (kind: string) =>
  (body: unknown): Hostile => ({ kind, body: JSON.stringify(body) });

function setPath(target: Record<string, any>, path: readonly (string | number)[], value: unknown): Record<string, any> {
  let node: any = target;
  for (const part of path.slice(0, -1)) node = node[part];
  const last = path[path.length - 1] as string | number;
  // defineProperty: a key named "__proto__" becomes an own field, as JSON.parse makes it.
  Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

// Malformed JSON -------------------------------------------------------------

const notJson = (text: string) => {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
};

const malformedJson: fc.Arbitrary<Hostile> = fc.oneof(
  validBody.chain((b) => {
    const text = JSON.stringify(b);
    return fc.integer({ min: 0, max: text.length - 1 }).map((cut) => ({ kind: 'malformed-json/truncated', body: text.slice(0, cut) }));
  }),
  fc
    .tuple(validBody, fc.nat(), fc.constantFrom(',', '}', ']', ':', '"', "'", '\\', '\u0000', '{', 'NaN', '//', '\n}'))
    .map(([b, at, junk]) => {
      const text = JSON.stringify(b);
      const i = at % text.length;
      return { kind: 'malformed-json/garbage', body: text.slice(0, i) + junk + text.slice(i) };
    })
    .filter((h) => notJson(h.body as string)),
  fc
    .constantFrom(
      '',
      ' ',
      '{',
      '}',
      '{"prompt":}',
      "{'prompt':'x','models':['fam_c-5.4']}",
      '{"prompt":"x","models":["fam_c-5.4"],}',
      '{"prompt":"x" "models":["fam_c-5.4"]}',
      '{"a":1}{"b":2}',
      'NaN',
      'undefined',
      '\uFEFF{"prompt":"x","models":["fam_c-5.4"]}',
      '{"prompt":"\\x41","models":["fam_c-5.4"]}',
      '{"prompt":"\\ud800","models":["fam_c-5.4"]',
      'prompt=x&models=fam_c-5.4',
    )
    .map((body) => ({ kind: 'malformed-json/classic', body })),
  fc
    .string({ maxLength: 200 })
    .filter(notJson)
    .map((body) => ({ kind: 'malformed-json/random', body })),
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => ({ kind: 'malformed-json/bytes', body: Buffer.concat([Buffer.from([0xff, 0xfe]), bytes]) })),
  // Valid JSON that is not an object.
  fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string(), fc.array(fc.jsonValue(), { maxLength: 4 })).map(json('malformed-json/not-an-object')),
);

// Repeated member names ------------------------------------------------------
// A valid body with one of its members sent twice (the first copy valid too, or spelt with an
// escape): JSON.parse would keep the last, a proxy might read the first.

const repeatedMember: fc.Arbitrary<Hostile> = fc.tuple(fc.constantFrom(...Object.keys(fullBody())), fc.boolean(), fc.boolean()).map(([name, escaped, nested]) => {
  const body = fullBody();
  if (nested) {
    // The repeat inside an object of the body: the first history turn's role.
    const text = JSON.stringify(body).replace('"role":"user"', '"role":"assistant","role":"user"');
    return { kind: 'repeated-member/nested', body: text };
  }
  const spelt = escaped ? `\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${name.slice(1)}` : name;
  return { kind: 'repeated-member/top-level', body: `{"${spelt}":${JSON.stringify(body[name])},${JSON.stringify(body).slice(1)}` };
});

// Wrong types at every field -------------------------------------------------

type Kind = 'string' | 'enum' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'string-or-array';

const FIELDS: readonly { path: readonly (string | number)[]; kind: Kind; allowed?: readonly string[] }[] = [
  { path: ['prompt'], kind: 'string' },
  { path: ['models'], kind: 'array' },
  { path: ['models', 0], kind: 'string' },
  { path: ['judges'], kind: 'array' },
  { path: ['judges', 0], kind: 'string' },
  { path: ['judge_prompt'], kind: 'string' },
  { path: ['judge_weights'], kind: 'object' },
  { path: ['judge_weights', 'accuracy'], kind: 'number' },
  { path: ['judge_weights', 'speed'], kind: 'number' },
  { path: ['judge_weights', 'cost'], kind: 'number' },
  { path: ['attachments'], kind: 'array' },
  { path: ['attachments', 0], kind: 'object' },
  { path: ['attachments', 0, 'name'], kind: 'string' },
  { path: ['attachments', 0, 'type'], kind: 'enum', allowed: ['image/png'] },
  { path: ['attachments', 0, 'base64'], kind: 'string' },
  { path: ['system_prompt'], kind: 'string-or-array' },
  { path: ['system_prompt', 0], kind: 'object' },
  { path: ['system_prompt', 0, 'type'], kind: 'enum', allowed: ['text'] },
  { path: ['system_prompt', 0, 'text'], kind: 'string' },
  { path: ['system_prompt', 0, 'cache_control'], kind: 'object' },
  { path: ['system_prompt', 0, 'cache_control', 'type'], kind: 'enum', allowed: ['ephemeral'] },
  { path: ['history'], kind: 'array' },
  { path: ['history', 0], kind: 'object' },
  { path: ['history', 0, 'role'], kind: 'enum', allowed: ['user', 'assistant'] },
  { path: ['history', 0, 'content'], kind: 'string' },
  { path: ['history', 0, 'cache_control'], kind: 'object' },
  { path: ['generation_settings'], kind: 'object' },
  { path: ['generation_settings', 'temperature'], kind: 'number' },
  { path: ['generation_settings', 'maxTokens'], kind: 'integer' },
  { path: ['generation_settings', 'topP'], kind: 'number' },
  { path: ['response_schema'], kind: 'object' },
  { path: ['model_tuning'], kind: 'object' },
  { path: ['model_tuning', TUNED.claude], kind: 'object' },
  { path: ['model_tuning', TUNED.claude, 'thinkingBudget'], kind: 'integer' },
  { path: ['model_tuning', TUNED.gemini, 'webSearch'], kind: 'boolean' },
  { path: ['model_tuning', TUNED.gemini, 'cachedContent'], kind: 'string' },
  { path: ['model_tuning', TUNED.gpt, 'reasoningEffort'], kind: 'enum', allowed: ['low', 'medium', 'high'] },
  { path: ['zero_data_retention'], kind: 'boolean' },
];

function hasKind(value: unknown, kind: Kind, allowed: readonly string[] = []): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'enum':
      return typeof value === 'string' && allowed.includes(value);
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'string-or-array':
      return typeof value === 'string' || Array.isArray(value);
  }
}

const anyValue = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

const wrongType: fc.Arbitrary<Hostile> = fc
  .tuple(fc.string({ minLength: 1, maxLength: 20 }), fc.constantFrom(...FIELDS))
  .chain(([prompt, field]) =>
    anyValue
      .filter((v) => !hasKind(v, field.kind, field.allowed))
      .map((value) => ({ kind: `wrong-type/${field.path.join('.')}`, body: JSON.stringify(setPath(fullBody(prompt), field.path, value)) })),
  );

// Huge and deeply nested values ------------------------------------------------

const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const head = (extra: string) => `{"prompt":"x","models":["fam_c-5.4"],${extra}}`;

const huge: fc.Arbitrary<Hostile> = fc.oneof(
  fc.integer({ min: 1, max: 1000 }).map((n) => json('huge/prompt')({ prompt: 'x'.repeat(LIMITS.promptChars + n), models: ['fam_c-5.4'] })),
  fc.integer({ min: 1, max: 10 }).map((n) =>
    json('huge/models')({
      prompt: 'x',
      models: allModels()
        .slice(0, LIMITS.models + n)
        .map((m) => m.id),
    }),
  ),
  fc.integer({ min: 1, max: 5 }).map((n) =>
    json('huge/judges')({
      prompt: 'x',
      models: ['fam_c-5.4', 'fam_a-opus-4-6'],
      judges: allModels()
        .slice(0, LIMITS.judges + n)
        .map((m) => m.id),
    }),
  ),
  fc
    .integer({ min: 1, max: 50 })
    .map((n) => json('huge/history')({ prompt: 'x', models: ['fam_c-5.4'], history: Array.from({ length: LIMITS.historyTurns + n }, () => ({ role: 'user', content: 'x' })) })),
  fc
    .integer({ min: 1, max: 10 })
    .map((n) =>
      json('huge/system-blocks')({ prompt: 'x', models: ['fam_c-5.4'], system_prompt: Array.from({ length: LIMITS.systemBlocks + n }, () => ({ type: 'text', text: 'x' })) }),
    ),
  fc.integer({ min: 1, max: 100 }).map((n) => json('huge/system-string')({ prompt: 'x', models: ['fam_c-5.4'], system_prompt: 'x'.repeat(LIMITS.systemChars + n) })),
  fc.integer({ min: 1, max: 100 }).map((n) => json('huge/judge-prompt')({ prompt: 'x', models: ['fam_c-5.4'], judge_prompt: 'x'.repeat(LIMITS.judgePromptChars + n) })),
  fc.integer({ min: 1, max: 5 }).map((n) =>
    json('huge/attachments')({
      prompt: 'x',
      models: ['fam_c-5.4'],
      attachments: Array.from({ length: LIMITS.attachments + n }, (_, i) => ({ name: `${i}.png`, type: 'image/png', base64: PNG_BASE64 })),
    }),
  ),
  fc.integer({ min: 1, max: 50 }).map((n) => json('huge/model-id')({ prompt: 'x', models: ['x'.repeat(LIMITS.modelIdChars + n)] })),
  fc.integer({ min: 1, max: 50 }).map((n) =>
    json('huge/attachment-name')({
      prompt: 'x',
      models: ['fam_c-5.4'],
      attachments: [{ name: 'x'.repeat(LIMITS.attachmentNameChars + n), type: 'image/png', base64: PNG_BASE64 }],
    }),
  ),
  fc.integer({ min: 1, max: 1000 }).map((n) => json('huge/max-tokens')({ prompt: 'x', models: ['fam_c-5.4'], generation_settings: { maxTokens: LIMITS.maxTokens + n } })),
  // Deep nesting: in an unknown field, in a typed field, and inside response_schema (walked by the gateway).
  fc.integer({ min: 1, max: 100_000 }).map((d) => ({ kind: 'deep/unknown-field', body: head(`"deep":${deepArray(d)}`) })),
  fc.integer({ min: 1, max: 100_000 }).map((d) => ({ kind: 'deep/typed-field', body: head(`"generation_settings":{"temperature":${deepArray(d)}}`) })),
  fc.integer({ min: 100, max: 100_000 }).map((d) => ({
    kind: 'deep/response-schema-enum',
    body: head(`"response_schema":{"type":"object","additionalProperties":false,"properties":{"a":{"enum":[${deepArray(d)}]}}}`),
  })),
  fc.integer({ min: LIMITS.responseSchemaDepth + 1, max: 30_000 }).map((d) => ({
    kind: 'deep/response-schema-properties',
    body: head(`"response_schema":${'{"type":"object","additionalProperties":false,"properties":{"a":'.repeat(d)}{}${'}}'.repeat(d)}`),
  })),
  fc.integer({ min: 1, max: 100_000 }).map((d) => ({ kind: 'deep/object', body: head(`"model_tuning":${'{"a":'.repeat(d)}1${'}'.repeat(d)}`) })),
);

/** Over the body limit: rare (each is 5 MiB), sent chunked so the server must count what it reads. */
const overLimit: fc.Arbitrary<Hostile> = fc.integer({ min: 1, max: 1000 }).map((n) => ({
  kind: 'huge/body-over-limit',
  body: JSON.stringify({ prompt: 'x'.repeat(LIMITS.bodyBytes + n), models: ['fam_c-5.4'] }),
  chunked: true,
}));

// Unknown fields --------------------------------------------------------------

/** Each closed object of the body (its path in fullBody) and the fields it knows. */
const OBJECTS: readonly { path: readonly (string | number)[]; keys: readonly string[] }[] = [
  { path: [], keys: Object.keys(fullBody()) },
  { path: ['judge_weights'], keys: ['accuracy', 'speed', 'cost'] },
  { path: ['attachments', 0], keys: ['name', 'type', 'base64'] },
  { path: ['system_prompt', 0], keys: ['type', 'text', 'cache_control'] },
  { path: ['system_prompt', 0, 'cache_control'], keys: ['type'] },
  { path: ['history', 0], keys: ['role', 'content', 'cache_control'] },
  { path: ['generation_settings'], keys: ['temperature', 'maxTokens', 'topP'] },
  { path: ['model_tuning', TUNED.gpt], keys: ['thinkingBudget', 'reasoningEffort', 'webSearch', 'cachedContent'] },
];

const fieldName = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'Prompt', 'MODELS', 'prompt ', 'models\u0000', 'tools', 'stream', 'n', 'user', 'api_key'),
);

const unknownField: fc.Arbitrary<Hostile> = fc
  .tuple(fc.string({ minLength: 1, maxLength: 20 }), fc.constantFrom(...OBJECTS), fieldName, fc.jsonValue({ maxDepth: 2 }))
  .filter(([, where, name]) => !where.keys.includes(name))
  .map(([prompt, where, name, value]) => ({
    kind: `unknown-field/${where.path.join('.') || 'top'}`,
    body: JSON.stringify(setPath(fullBody(prompt), [...where.path, name], value)),
  }));

// Invalid base64 and attachments -------------------------------------------------

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const isPng = (b64: string) =>
  Buffer.from(b64.slice(0, 16), 'base64')
    .subarray(0, 8)
    .equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
/** Not what the gateway accepts as a PNG attachment (README: bare base64, PNG signature). */
const notPngBase64 = (s: string) => s.length === 0 || s.length % 4 !== 0 || !BASE64.test(s) || !isPng(s);
const TEXT_ONLY = allModels().find((m) => m.capabilities.attachments.length === 0);
const NO_PDF = allModels().find((m) => m.capabilities.attachments.length > 0 && !m.capabilities.attachments.includes('application/pdf'));

const attachment = (base64: string, type = 'image/png', models = ['fam_c-5.4']) => ({ prompt: 'Describe', models, attachments: [{ name: 'f', type, base64 }] });

const badBase64: fc.Arbitrary<Hostile> = fc.oneof(
  fc
    .string({ maxLength: 40 })
    .filter(notPngBase64)
    .map((s) => json('base64/random')(attachment(s))),
  fc
    .base64String({ maxLength: 40 })
    .filter(notPngBase64)
    .map((s) => json('base64/not-a-png')(attachment(s))),
  fc
    .uint8Array({ minLength: 1, maxLength: 30 })
    .map((bytes) => Buffer.from(bytes).toString('base64'))
    .filter(notPngBase64)
    .map((s) => json('base64/random-bytes')(attachment(s))),
  fc
    .constantFrom(
      `data:image/png;base64,${PNG_BASE64}`,
      `${PNG_BASE64.slice(0, 8)}\n${PNG_BASE64.slice(8)}`,
      ` ${PNG_BASE64}`,
      PNG_BASE64.slice(0, -1),
      `${PNG_BASE64}=`,
      `${PNG_BASE64}====`,
      PNG_BASE64.replaceAll('+', '-').replaceAll('/', '_').replace(/^(.)/, '-'),
      PNG_BASE64.replace(/^./, '%'),
    )
    .map((s) => json('base64/near-miss')(attachment(s))),
  // Valid base64 whose bytes are not the declared type, or a type a model cannot take.
  fc.constant(json('attachment/type-mismatch')(attachment(PNG_BASE64, 'application/pdf'))),
  fc.constant(json('attachment/type-mismatch')(attachment(PDF_BASE64, 'image/png'))),
  fc.constant(json('attachment/unsupported-by-model')(attachment(PNG_BASE64, 'image/png', [TEXT_ONLY!.id]))),
  fc.constant(json('attachment/unsupported-by-model')(attachment(PDF_BASE64, 'application/pdf', ['fam_c-5.4', (NO_PDF ?? TEXT_ONLY)!.id]))),
);

// Out-of-range numbers ------------------------------------------------------------

/** Numbers outside [min, max] (the filter drops -0, which JSON writes as 0). */
const outside = (min: number, max: number) =>
  fc.oneof(fc.double({ min: max, minExcluded: true, noNaN: true }), fc.double({ max: min, maxExcluded: true, noNaN: true })).filter((v) => v < min || v > max);
const notInteger = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((v) => !Number.isInteger(v));

const outOfRange: fc.Arbitrary<Hostile> = fc.oneof(
  outside(0, 2).map((v) => json('range/temperature')({ prompt: 'x', models: ['fam_c-5.4'], generation_settings: { temperature: v } })),
  outside(0, 1).map((v) => json('range/topP')({ prompt: 'x', models: ['fam_c-5.4'], generation_settings: { topP: v } })),
  fc
    .oneof(fc.integer({ max: 0 }), fc.integer({ min: LIMITS.maxTokens + 1 }), notInteger)
    .map((v) => json('range/maxTokens')({ prompt: 'x', models: ['fam_c-5.4'], generation_settings: { maxTokens: v } })),
  fc
    .tuple(fc.constantFrom('accuracy', 'speed', 'cost'), outside(0, 1))
    .map(([k, v]) => json('range/judge_weights')({ prompt: 'x', models: ['fam_c-5.4'], judge_weights: { [k]: v } })),
  fc
    .oneof(fc.integer({ min: 1, max: 1023 }), fc.integer({ min: 32_001 }), fc.integer({ max: -1 }), notInteger)
    .map((v) => json('range/thinkingBudget-claude')({ prompt: 'x', models: [TUNED.claude], model_tuning: { [TUNED.claude]: { thinkingBudget: v } } })),
  fc
    .oneof(fc.integer({ min: 24_577 }), fc.integer({ max: -1 }))
    .map((v) => json('range/thinkingBudget-gemini')({ prompt: 'x', models: [TUNED.gemini], model_tuning: { [TUNED.gemini]: { thinkingBudget: v } } })),
  fc.constantFrom('1e400', '-1e400', '2.0000001', '1e-400', '-0.0000001').map((n) => ({
    kind: 'range/number-literals',
    body: head(`"generation_settings":{"temperature":${n},"maxTokens":${n}}`),
  })),
);

// Unknown and duplicate model IDs ---------------------------------------------------

const canonical = allModels().map((m) => m.id);
const unknownId = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.constantFrom(
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'FAM_C-5.4',
      ' fam_c-5.4',
      'fam_c-5.4 ',
      'fam_c-5.4\u0000',
      'gpt-9',
      'openai/gpt-5.4',
      'fam_c',
      'claude',
    ),
    fc.constantFrom(...canonical).map((id) => id.toUpperCase()),
  )
  .filter((id) => resolveModel(id) === undefined);

const badModels: fc.Arbitrary<Hostile> = fc.oneof(
  fc.tuple(fc.subarray(canonical, { maxLength: 3 }), unknownId, fc.nat()).map(([known, unknown, at]) => {
    const models = [...known];
    models.splice(at % (models.length + 1), 0, unknown);
    return json('models/unknown')({ prompt: 'x', models });
  }),
  fc.constantFrom(...canonical).map((id) => json('models/duplicate')({ prompt: 'x', models: [id, id] })),
  fc
    .constantFrom(...allModels().filter((m) => vendorSpelling(m) && resolveModel(vendorSpelling(m)!) === m))
    .map((m) => json('models/duplicate-spelling')({ prompt: 'x', models: [m.id, vendorSpelling(m)!] })),
  fc.constant(json('models/empty')({ prompt: 'x', models: [] })),
  fc.constant(json('models/missing')({ prompt: 'x' })),
  fc.constant(json('prompt/missing')({ models: ['fam_c-5.4'] })),
  fc.constant(json('prompt/empty')({ prompt: '', models: ['fam_c-5.4'] })),
  unknownId.map((id) => json('judges/unknown')({ prompt: 'x', models: ['fam_c-5.4', 'fam_a-opus-4-6'], judges: [id] })),
  fc.constantFrom(...canonical).map((id) => json('judges/duplicate')({ prompt: 'x', models: ['fam_c-5.4', 'fam_a-opus-4-6'], judges: [id, id] })),
);

// Bad tuning ----------------------------------------------------------------------

const untunable = allModels()
  .filter((m) => Object.keys(m.capabilities.tuning).length === 0)
  .map((m) => m.id);
const badTuning: fc.Arbitrary<Hostile> = fc.oneof(
  fc.constantFrom(...canonical.filter((id) => id !== 'fam_c-5.4')).map((id) => json('tuning/not-requested')({ prompt: 'x', models: ['fam_c-5.4'], model_tuning: { [id]: {} } })),
  unknownId.map((id) => json('tuning/unknown-model')({ prompt: 'x', models: ['fam_c-5.4'], model_tuning: { [id]: {} } })),
  fc
    .tuple(fc.constantFrom(...untunable), fc.constantFrom({}, { reasoningEffort: 'low' }, { thinkingBudget: 0 }, { webSearch: false }))
    .map(([id, params]) => json('tuning/model-takes-none')({ prompt: 'x', models: [id], model_tuning: { [id]: params } })),
  fc
    .constantFrom(
      { model: TUNED.claude, params: { reasoningEffort: 'low' } },
      { model: TUNED.claude, params: { webSearch: true } },
      { model: TUNED.gpt, params: { thinkingBudget: 2048 } },
      { model: TUNED.gpt, params: { reasoningEffort: 'none' } },
      { model: TUNED.gpt, params: { cachedContent: 'cachedContents/x' } },
      { model: TUNED.gemini, params: { reasoningEffort: 'high' } },
      { model: TUNED.gemini, params: { cachedContent: 'cachedContents/' } },
      { model: TUNED.gemini, params: { cachedContent: 'projects/x/cachedContents/y' } },
      { model: TUNED.gemini, params: { cachedContent: 'cachedContents/a b' } },
      { model: TUNED.gemini, params: { temperature: 1 } },
    )
    .map(({ model, params }) => json('tuning/bad-parameter')({ prompt: 'x', models: [model], model_tuning: { [model]: params } })),
  fc.constant(
    json('tuning/twice-by-spelling')({
      prompt: 'x',
      models: [TUNED.claude],
      model_tuning: { [TUNED.claude]: { thinkingBudget: 0 }, [vendorSpelling(resolveModel(TUNED.claude)!)!]: { thinkingBudget: 0 } },
    }),
  ),
  fc.constant(
    json('cache/too-many-breakpoints')({
      prompt: 'x',
      models: [TUNED.claude],
      system_prompt: Array.from({ length: 3 }, () => ({ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } })),
      history: Array.from({ length: 2 }, () => ({ role: 'user', content: 'x', cache_control: { type: 'ephemeral' } })),
    }),
  ),
);

// Broken response schemas -------------------------------------------------------------

const closed = (extra: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, ...extra });
const brokenSchema: fc.Arbitrary<Hostile> = fc
  .constantFrom<unknown>(
    { type: 'string' },
    { type: ['object'] },
    { type: 'object' },
    { type: 'object', additionalProperties: true },
    closed({ properties: { a: { type: 'object' } } }),
    closed({ properties: { a: { type: 'array', items: { properties: { b: { type: 'string' } } } } } }),
    closed({ properties: { a: { type: 'nope' } } }),
    closed({ required: 'a' }),
    closed({ properties: 5 }),
    closed({ properties: { a: { minimum: 'x' } } }),
    closed({ properties: { a: { type: 'string', pattern: '(' } } }),
    closed({ properties: { a: { $ref: '#/$defs/missing' } } }),
    closed({ properties: { a: { $ref: 'https://example.invalid/schema.json' } } }),
    closed({ description: 'x'.repeat(70_000) }),
    // Issue 17: patterns that need a backtracking engine, and schemas past the compile budget.
    closed({ properties: { a: { type: 'string', pattern: '^(a+)\\1$' } } }),
    closed({ properties: { a: { type: 'string', pattern: '^(?!a)(a+)+$' } } }),
    closed({ patternProperties: { '(?<=x)y': { type: 'string' } } }),
    closed({ properties: { a: { type: 'string', pattern: '^(?:[\\s\\S]{1,100}){1,100}$' } } }),
    closed({ properties: Object.fromEntries(Array.from({ length: LIMITS.responseSchemaObjects }, (_, i) => [`p${i}`, { type: 'string' }])) }),
    closed({ $schema: 'https://example.invalid/unknown-dialect' }),
    [],
    'schema',
    42,
    null,
  )
  .map((schema) => json('schema/broken')({ prompt: 'x', models: ['fam_c-5.4'], response_schema: schema }));

// Hostile headers (with a valid body: the header alone must refuse it) ------------------

const ACCEPTED_TYPES = /^(application\/json|application\/[a-z0-9.+-]+\+json|application\/x-www-form-urlencoded)\s*(;.*)?$/i;
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });

const hostileHeaders: fc.Arbitrary<Hostile> = fc.string({ minLength: 1, maxLength: 20 }).chain((prompt) => {
  const body = JSON.stringify(runnableBody(prompt));
  const demo = host.demo.apiKey;
  const withAuth = (kind: string, authorization: string | string[] | undefined): Hostile => ({ kind, body, headers: { authorization } });
  return fc.oneof(
    fc.constant(withAuth('auth/missing', undefined)),
    fc
      .constantFrom('', 'Bearer', 'Bearer ', 'bearer', `Basic ${Buffer.from('a:b').toString('base64')}`, `Token ${demo}`, demo, `Bearer  `, `Bearer ${demo} extra`)
      .map((v) => withAuth('auth/malformed', v)),
    headerText.map((v) => withAuth('auth/random', v)),
    fc
      .constantFrom(`Bearer ${'a'.repeat(15)}`, `Bearer ${'a'.repeat(257)}`, `Bearer ${demo}!`, `Bearer mcg_${'#'.repeat(43)}`, `Bearer ${demo.slice(0, 10)} ${demo.slice(10)}`)
      .map((v) => withAuth('auth/wrong-shape', v)),
    fc.constant(null).map(() => withAuth('auth/unknown-key', `Bearer ${generateApiKey()}`)),
    fc.nat().map((i) => {
      const at = 4 + (i % (demo.length - 4));
      const flipped = demo.slice(0, at) + (demo[at] === 'A' ? 'B' : 'A') + demo.slice(at + 1);
      return withAuth('auth/near-miss', `Bearer ${flipped}`);
    }),
    fc.constantFrom(300, 4_000, 12_000, 20_000, 70_000).map((n) => withAuth('auth/oversized', `Bearer ${'a'.repeat(n)}`)),
    fc
      .constantFrom<[string, string]>(
        [`Bearer ${demo}`, `Bearer ${generateApiKey()}`],
        [`Bearer ${generateApiKey()}`, `Bearer ${demo}`],
        [`Bearer ${demo}`, `Bearer ${demo}`],
        [`Bearer ${demo}`, ''],
        [`Bearer ${generateApiKey()}`, `Bearer ${generateApiKey()}`],
      )
      .map((values) => withAuth('auth/repeated', values)),
    fc
      .oneof(
        fc.constantFrom(
          'text/plain',
          'text/xml',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/jsonx',
          'application/json-seq',
          'json',
          '*/*',
          'application/',
          'application/+json',
          'text/json',
        ),
        headerText,
      )
      .filter((type) => type.trim() !== '' && !ACCEPTED_TYPES.test(type))
      .map((type) => ({ kind: 'content-type/wrong', body, headers: { 'content-type': type } })),
    // A JSON type declaring a charset other than UTF-8: its body would be read as other text than meant.
    fc
      .constantFrom('utf-16', 'UTF-16LE', 'latin1', '"ISO-8859-1"', 'us-ascii', 'utf-8x', '')
      .map((charset) => ({ kind: 'content-type/charset', body, headers: { 'content-type': `application/json; charset=${charset}` } })),
    fc.constantFrom('a'.repeat(256), 'two words', ' ', 'caf\u00e9', 'x'.repeat(1000)).map((key) => ({ kind: 'idempotency-key/bad', body, headers: { 'idempotency-key': key } })),
  );
});

/** Every kind of hostile request; the over-limit body is rare (5 MiB each). */
const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  { arbitrary: malformedJson, weight: 960 },
  { arbitrary: repeatedMember, weight: 320 },
  { arbitrary: wrongType, weight: 1600 },
  { arbitrary: huge, weight: 640 },
  { arbitrary: overLimit, weight: 3 },
  { arbitrary: unknownField, weight: 800 },
  { arbitrary: badBase64, weight: 640 },
  { arbitrary: outOfRange, weight: 800 },
  { arbitrary: badModels, weight: 800 },
  { arbitrary: badTuning, weight: 640 },
  { arbitrary: brokenSchema, weight: 480 },
  { arbitrary: hostileHeaders, weight: 960 },
);

// ---------------------------------------------------------------------------
// Sending and checking
// ---------------------------------------------------------------------------

interface RawAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

function send(h: Hostile): Promise<RawAnswer> {
  const headers: Record<string, string | string[]> = { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(h.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const payload = typeof h.body === 'string' ? Buffer.from(h.body, 'utf8') : h.body;
  if (!h.chunked) headers['content-length'] = String(payload.length);
  const url = new URL(host.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: h.target ?? '/api/v1/prompt', setHost: !h.noHost, method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const flat: Record<string, string | undefined> = {};
        for (const [k, v] of Object.entries(res.headers)) flat[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode ?? 0, headers: flat, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** `count` distinct headers, each a few bytes (their names base 36), all of them under Node's 16 KiB of headers. */
function fillerHeaders(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`x${i.toString(36)}`, '1']));
}

function describeCase(h: Hostile): string {
  const body = typeof h.body === 'string' ? h.body : `<${h.body.length} bytes>`;
  return `${h.kind} headers=${JSON.stringify(h.headers ?? {}).slice(0, 200)} body(${body.length})=${body.slice(0, 300)}`;
}

/** The property for one answer: a documented 4xx with the JSON error body. */
function checkAnswer(h: Hostile, answer: RawAnswer): void {
  const where = `${describeCase(h)}\n-> ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status < 400 || answer.status >= 500) throw new Error(`not a 4xx: ${where}`);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw new Error(`the answer is not JSON: ${where}`);
  }
  const problems = openApiProblems({ status: answer.status, headers: answer.headers, body });
  if (problems.length > 0) throw new Error(`the answer does not match the OpenAPI document (${problems.join('; ')}): ${where}`);
}

async function sendAll(batch: readonly Hostile[]): Promise<void> {
  const answers = await Promise.all(batch.map(send));
  batch.forEach((h, i) => {
    sent++;
    byKind.set(h.kind.split('/')[0] as string, (byKind.get(h.kind.split('/')[0] as string) ?? 0) + 1);
    const answer = answers[i] as RawAnswer;
    byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    checkAnswer(h, answer);
  });
}

async function accountState() {
  const account = await host.gateway.accounts.get(host.demo.accountId);
  const ledger = await host.gateway.ledger.list(host.demo.accountId);
  return { account, ledger };
}

// Hostile model outputs (issue 17) ----------------------------------------------------

/**
 * Outputs built to make a parser or a regex superlinear: runs of one character ending in a
 * breaker (backtracking regexes), brace and fence floods (searches that restart at every
 * `{`, lazy regexes), deep nesting (recursion). Long enough that anything quadratic takes
 * minutes: the property then fails by not finishing.
 */
const fragment = fc.constantFrom('a', '{', '}', '[', ']', '"', '\\', ' ', '\n', '```', '```json', ':', ',', '!', 'x');
const hostileOutput: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fragment, fc.integer({ min: 1, max: 200_000 }), fragment).map(([run, n, end]) => run.repeat(n) + end),
  fc.tuple(fc.array(fragment, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 50_000 })).map(([parts, n]) => parts.join('').repeat(n)),
  fc.integer({ min: 1, max: 100_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  fc.integer({ min: 1, max: 100_000 }).map((n) => `\`\`\`json\n${'['.repeat(n)}${']'.repeat(n)}\n\`\`\``),
);

/** Schemas whose patterns backtrack exponentially on V8's engine, and a recursive one. */
const HOSTILE_OUTPUT_SCHEMAS = [
  closed({ properties: { a: { type: 'string', pattern: '^(a+)+$' } } }),
  closed({ properties: { a: { type: 'string', pattern: '^(a|a)*$' } }, patternProperties: { '^(\\w+\\s?)*$': {} } }),
  closed({ properties: { a: { $ref: '#' } } }),
];

describe('Fuzzing the output check with hostile model outputs', () => {
  it('gives every hostile output a verdict, in one pass (a superlinear check never finishes here)', async () => {
    await loadAjv();
    const validators = HOSTILE_OUTPUT_SCHEMAS.map((schema) => checkSchema(schema).validate!);
    fc.assert(
      fc.property(hostileOutput, fc.constantFrom(...validators), (output, validate) => {
        const checked = checkStructuredOutput(output, validate);
        expect(typeof checked.conforms).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  }, 120_000);

  it('answers 200 with a structured-output verdict when models send regex-hostile, huge or nested JSON', async () => {
    // The simulator answers with the schema's `const`: the output is the generated value.
    const value = fc.oneof(
      fc.tuple(fc.constantFrom('a', 'ab', ' '), fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('!', '', 'b')).map(([run, n, end]) => run.repeat(n) + end),
      fc.integer({ min: 1, max: 50 }).map((depth) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown),
    );
    await fc.assert(
      fc.asyncProperty(value, fc.constantFrom('^(a+)+$', '^(a|ab)*$', '^(\\s*a)*$'), async (constant, pattern) => {
        const schema = closed({ properties: { a: { type: 'string', pattern, const: constant } }, required: ['a'] });
        const answer = await send(json('output/hostile')({ prompt: 'x', models: ['fam_k-8b'], response_schema: schema }));
        expect(answer.status, answer.text.slice(0, 300)).toBe(200);
        const [result] = JSON.parse(answer.text).results;
        expect(result.status).toBe('completed');
        expect(typeof result.structuredOutput.conforms).toBe('boolean');
      }),
      { numRuns: 40 },
    );
  }, 300_000);
});

describe('Fuzzing the prompt endpoint with hostile requests', () => {
  it('starts from a body that is valid in every field', () => {
    expect(() => validatePromptRequest(fullBody())).not.toThrow();
    expect(() => validatePromptRequest(runnableBody('x'))).not.toThrow();
    expect(TEXT_ONLY).toBeDefined();
  });

  it('refuses the cases that were once answered wrongly (regressions found by this fuzzer)', async () => {
    host.simulator.reset();
    const valid = JSON.stringify(runnableBody('x'));
    const cases: [Hostile, number, string][] = [
      // A second Authorization header was ignored: the request ran on the first one.
      [{ kind: 'auth/repeated', body: valid, headers: { authorization: [`Bearer ${host.demo.apiKey}`, `Bearer ${host.demo.apiKey}`] } }, 401, 'unauthorized'],
      // Headers over Node's limit got a bare 431 without the error body.
      [{ kind: 'auth/oversized', body: valid, headers: { authorization: `Bearer ${'a'.repeat(20_000)}` } }, 431, 'bad_request'],
      // A header named as a member every object inherits was a 500 on every route of the local host.
      [{ kind: 'http/inherited-header-name', body: '{}', headers: { constructor: 'x', ['__proto__']: 'x', tostring: 'x' } }, 400, 'invalid_request'],
      // Repeated, such a header was a 500 in the handler's check of headers sent once (any host, AWS too).
      [{ kind: 'http/inherited-header-name-repeated', body: '{}', headers: { constructor: ['x', 'y'], ['__proto__']: ['x', 'y'] } }, 400, 'invalid_request'],
      // Headers past Node's 2,000th were dropped: a second Authorization after 2,000 small ones went unseen.
      [{ kind: 'auth/repeated-past-2000-headers', body: valid, headers: { ...fillerHeaders(2_000), Authorization: 'Bearer mcg_another' } }, 401, 'unauthorized'],
      // A request target the URL parser cannot read was a 500, before any route or key.
      [{ kind: 'http/target-unparsable', body: valid, target: '//[' }, 400, 'bad_request'],
      // A path of two slashes whose "authority" no URL parser reads, routed: the event's path was read apart, and threw (a 500).
      [{ kind: 'http/target-authority-unparsable', body: '{}', target: '//%zz/../../api/v1/prompt' }, 400, 'invalid_request'],
      // A path of two slashes is a path, not an authority: no route.
      [{ kind: 'http/target-port', body: valid, target: '//a:99999/api/v1/prompt' }, 404, 'not_found'],
      // No Host header, or an Expect other than 100-continue: Node answered with no body.
      [{ kind: 'http/no-host', body: valid, noHost: true }, 400, 'bad_request'],
      [{ kind: 'http/expect', body: valid, headers: { expect: 'junk' } }, 417, 'bad_request'],
      // A response_schema whose root $id is not a string ended the schema thread: a 503 on every such request.
      [{ kind: 'schema/root-id-number', body: head('"response_schema":{"$id":5,"type":"object","additionalProperties":false}') }, 400, 'invalid_request'],
      // A response_schema nested past the stack overflowed it: a 500.
      [
        { kind: 'deep/response-schema-enum', body: head(`"response_schema":{"type":"object","additionalProperties":false,"properties":{"a":{"enum":[${deepArray(500_000)}]}}}`) },
        400,
        'invalid_request',
      ],
    ];
    for (const [h, status, code] of cases) {
      const answer = await send(h);
      checkAnswer(h, answer);
      expect(answer.status, h.kind).toBe(status);
      expect(JSON.parse(answer.text).error.code, h.kind).toBe(code);
    }
    expect(host.simulator.calls()).toEqual([]);
  });

  it(`answers every generated request with a documented 4xx, calls no provider and changes no balance (${RUNS} requests)`, async () => {
    const before = await accountState();
    host.simulator.reset();
    const started = performance.now();
    // The rare cases once each for certain: a body over the limit, chunked and declared, and headers over Node's limit.
    const [chunked] = fc.sample(overLimit, { numRuns: 1, seed: 1 }) as [Hostile];
    await sendAll([
      chunked,
      { ...chunked, kind: 'huge/body-over-limit-declared', chunked: false },
      { kind: 'auth/oversized', body: '{}', headers: { authorization: `Bearer ${'a'.repeat(70_000)}` } },
    ]);
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: CONCURRENCY, maxLength: CONCURRENCY }), async (batch) => sendAll(batch)),
      { numRuns: Math.ceil(RUNS / CONCURRENCY), endOnFailure: true },
    );
    const seconds = (performance.now() - started) / 1000;
    expect(host.simulator.calls()).toEqual([]);
    expect(await accountState()).toEqual(before);
    console.log(
      `[fuzz] ${sent} hostile requests in ${seconds.toFixed(1)} s; all 4xx with the error body, 0 provider calls, balance and ledger unchanged\n` +
        `[fuzz] by kind: ${JSON.stringify(Object.fromEntries(byKind))}\n[fuzz] by status: ${JSON.stringify(Object.fromEntries(byStatus))}`,
    );
    expect(sent).toBeGreaterThanOrEqual(RUNS);
  }, 600_000);
});
