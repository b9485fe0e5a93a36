/**
 * Deterministic text for the provider simulator: a token counter, a seeded
 * pseudo-random generator, a readable paragraph generator and a generator of
 * minimal values that conform to a JSON schema.
 *
 * Everything here is a pure function of its inputs (a 32-bit seed derived from
 * one hash of the request), so the same request always yields the same answer.
 */

import { seededRandom } from '../../../shared/seeded-random.js';

/** Approximate token count used by the simulator: ceil(chars / 4), 0 for ''. */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

/** A seeded PRNG: floats in [0, 1). */
export type Rng = () => number;

export const createRng: (seed: number) => Rng = seededRandom;

function pick<T>(rng: Rng, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)] as T;
}

function countWords(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const space = s.charCodeAt(i) === 32;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

const OPENERS = ['In short', 'Overall', 'In practice', 'By comparison', 'As a rule', 'Notably', 'On balance', 'Put simply'] as const;
const SUBJECTS = ['the model', 'this approach', 'the request', 'a careful review', 'the system', 'the result', 'the data', 'each option'] as const;
const VERBS = ['suggests', 'shows', 'indicates', 'highlights', 'confirms', 'implies', 'reveals', 'supports'] as const;
const OBJECTS = [
  'a clear trade-off between speed and cost',
  'that latency matters more than expected',
  'a stable and predictable outcome',
  'several useful patterns worth a closer look',
  'that smaller prompts are often enough',
  'a reasonable balance of quality and price',
  'room for improvement in edge cases',
  'that context shapes the final answer',
  'a consistent structure across similar inputs',
  'that simple rules cover most situations',
] as const;
const ADJECTIVES = ['amber', 'brisk', 'calm', 'steady', 'clear', 'gentle', 'quiet', 'bright', 'solid', 'nimble'] as const;
const NOUNS = ['river', 'signal', 'harbor', 'meadow', 'engine', 'lantern', 'summit', 'bridge', 'garden', 'compass'] as const;

/**
 * A short readable paragraph of 20-60 words:
 * "Simulated answer from <model>: <sentences>".
 */
export function generateParagraph(model: string, seed: number): string {
  const rng = createRng(seed);
  let text = `Simulated answer from ${model}:`;
  let words = countWords(text);
  // Each sentence has at most 13 words, so stopping below 47 keeps us <= 60.
  const target = 20 + Math.floor(rng() * 27);
  while (words < target) {
    const sentence = `${pick(rng, OPENERS)}, ${pick(rng, SUBJECTS)} ${pick(rng, VERBS)} ${pick(rng, OBJECTS)}.`;
    text += ` ${sentence}`;
    words += countWords(sentence);
  }
  return text;
}

/** A short deterministic phrase such as "steady harbor". */
export function generatePhrase(rng: Rng): string {
  return `${pick(rng, ADJECTIVES)} ${pick(rng, NOUNS)}`;
}

/**
 * Truncates `text` so that countTokens(result) <= maxTokens, preferring a word
 * boundary. Returns the text unchanged when it already fits.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (countTokens(text) <= maxTokens) return text;
  const limit = Math.max(0, Math.floor(maxTokens)) * 4;
  let cut = text.slice(0, limit);
  const space = cut.lastIndexOf(' ');
  if (space > limit / 2) cut = cut.slice(0, space);
  return cut.trimEnd();
}

// ---------------------------------------------------------------------------
// JSON schema -> minimal conforming value
// ---------------------------------------------------------------------------

type Schema = Record<string, unknown>;

/** The characters of a value's JSON (a schema's `const` or `enum` value). */
function jsonChars(value: unknown): number {
  return JSON.stringify(value)?.length ?? 4;
}

function isObject(x: unknown): x is Schema {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function num(x: unknown): number | undefined {
  return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
}

const MAX_DEPTH = 12;
/** Past this depth a value is the least its schema takes: an array its `minItems`, an object its required members (a tree's `$ref` then ends). */
const LEAST_DEPTH = 6;

/**
 * The most characters a generated value holds when the call gives no output allowance:
 * 4 characters a token of the 200,000 tokens a gateway request's `maxTokens` allows.
 */
export const SCHEMA_VALUE_MAX_CHARS = 800_000;

/** What is left of a generated value's characters: every string, item and key takes from it. */
interface Budget {
  left: number;
}

/**
 * Characters for a call's output allowance in tokens (4 a token, countTokens), within the fixed
 * cap: a value that runs out of them is longer than the allowance, so the answer is cut at it
 * (finish reason "length"), as a real model's that ran out of tokens.
 */
export function schemaCharsFor(maxTokens: number | undefined): number {
  return maxTokens === undefined ? SCHEMA_VALUE_MAX_CHARS : Math.min(SCHEMA_VALUE_MAX_CHARS, Math.max(0, Math.floor(maxTokens)) * 4 + 4);
}

function resolveRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  const parts = ref.slice(2).split('/');
  let cur: unknown = root;
  for (const raw of parts) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(cur)) return undefined;
    cur = cur[key];
  }
  return isObject(cur) ? cur : undefined;
}

/** The least value of a schema's type, where a value is cut short (past MAX_DEPTH, or the allowance spent). */
function leastOfType(schema: Schema): unknown {
  switch (schemaType(schema)) {
    case 'object':
      return {};
    case 'array':
      return [];
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function schemaType(schema: Schema): string | undefined {
  const t = schema['type'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const nonNull = t.find((x) => typeof x === 'string' && x !== 'null');
    if (typeof nonNull === 'string') return nonNull;
    return t.length > 0 && typeof t[0] === 'string' ? t[0] : undefined;
  }
  if (isObject(schema['properties']) || Array.isArray(schema['required'])) return 'object';
  if (schema['items'] !== undefined || Array.isArray(schema['prefixItems'])) return 'array';
  return undefined;
}

function stringValue(schema: Schema, rng: Rng, budget: Budget): string {
  // A pattern is not generated from (running a caller's expression could hold the thread): its first example is the answer.
  const example = Array.isArray(schema['examples']) ? schema['examples'][0] : undefined;
  if (typeof schema['pattern'] === 'string' && typeof example === 'string') return example;
  switch (schema['format']) {
    case 'date-time':
      return '2024-01-01T00:00:00Z';
    case 'date':
      return '2024-01-01';
    case 'time':
      return '00:00:00Z';
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com/';
    case 'uuid': {
      const hex = (n: number) =>
        Math.floor(rng() * 16 ** n)
          .toString(16)
          .padStart(n, '0');
      return `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(6)}${hex(6)}`;
    }
    default:
      break;
  }
  let s = generatePhrase(rng);
  // A minLength past what is left is met only as far as the allowance goes: the answer then
  // breaks the schema, as a real model's would that ran out of tokens.
  const wanted = num(schema['minLength']);
  const min = wanted === undefined ? undefined : Math.min(wanted, Math.max(0, budget.left));
  const max = num(schema['maxLength']);
  if (min !== undefined && s.length < min) {
    const parts = [s];
    let length = s.length;
    while (length < min) {
      const phrase = generatePhrase(rng);
      parts.push(phrase);
      length += phrase.length + 1;
    }
    s = parts.join(' ');
  }
  if (max !== undefined && s.length > max) s = s.slice(0, Math.max(0, max));
  if (min !== undefined && s.length < min) s = s.padEnd(min, 'x');
  return s;
}

function numberValue(schema: Schema, rng: Rng, integer: boolean): number {
  let v = integer ? 1 + Math.floor(rng() * 100) : Math.round(rng() * 10000) / 100;
  const min = num(schema['minimum']);
  const max = num(schema['maximum']);
  const exMin = num(schema['exclusiveMinimum']);
  const exMax = num(schema['exclusiveMaximum']);
  const mult = num(schema['multipleOf']);
  if (min !== undefined && v < min) v = min;
  if (exMin !== undefined && v <= exMin) v = integer ? Math.floor(exMin) + 1 : exMin + 1;
  if (max !== undefined && v > max) v = max;
  if (exMax !== undefined && v >= exMax) {
    const lo = min ?? exMin ?? exMax - 2;
    v = integer ? Math.ceil(exMax) - 1 : (lo + exMax) / 2;
  }
  if (mult !== undefined && mult > 0) {
    v = Math.ceil(v / mult) * mult;
    if (max !== undefined && v > max) v = Math.floor(max / mult) * mult;
  }
  if (integer) v = Math.round(v);
  return v;
}

/**
 * Takes a value's characters as JSON from `budget` (a string its quotes; an item or member its
 * comma, which its array or object takes; never more than the JSON holds, so a value built
 * until the budget runs out is at least as long), and returns the value.
 */
function take<T>(budget: Budget, value: T, chars: number): T {
  budget.left -= chars;
  return value;
}

/** A value for `schema`; every string, scalar and item of it takes its characters from `budget`. */
function valueFor(schema: unknown, rng: Rng, root: Schema, depth: number, budget: Budget): unknown {
  if (schema === true || schema === undefined) {
    const phrase = generatePhrase(rng);
    return take(budget, phrase, phrase.length + 2);
  }
  if (!isObject(schema)) return take(budget, null, 4);
  if (typeof schema['$ref'] === 'string') {
    // Resolved before the cut below, which a reference alone does not say the type for; one to itself ends there.
    const target = depth > MAX_DEPTH ? undefined : resolveRef(schema['$ref'], root);
    return target ? valueFor(target, rng, root, depth + 1, budget) : take(budget, null, 4);
  }
  // Past the depth, or once the allowance is spent (a property of `{"$ref": "#"}` repeated k times would make k^depth objects), the least value.
  if (depth > MAX_DEPTH || budget.left <= 0) return take(budget, leastOfType(schema), 4);
  const least = depth > LEAST_DEPTH;
  // Past LEAST_DEPTH a schema that takes null is answered null: a recursive member ends there.
  if (least && Array.isArray(schema['type']) && schema['type'].includes('null')) return take(budget, null, 4);
  if ('const' in schema) return take(budget, schema['const'], jsonChars(schema['const']));
  const en = schema['enum'];
  if (Array.isArray(en) && en.length > 0) return take(budget, en[0], jsonChars(en[0]));

  for (const key of ['anyOf', 'oneOf'] as const) {
    const alts = schema[key];
    if (Array.isArray(alts) && alts.length > 0) {
      const isNull = (a: unknown) => isObject(a) && a['type'] === 'null';
      const chosen = (least ? alts.find(isNull) : undefined) ?? alts.find((a) => !isNull(a)) ?? alts[0];
      return valueFor(chosen, rng, root, depth + 1, budget);
    }
  }
  const all = schema['allOf'];
  if (Array.isArray(all) && all.length > 0) {
    const parts = all.map((s) => valueFor(s, rng, root, depth + 1, budget));
    if (parts.every((p) => isObject(p))) return Object.assign({}, ...parts);
    return parts[0];
  }

  switch (schemaType(schema)) {
    case 'null':
      return take(budget, null, 4);
    case 'boolean':
      return take(budget, rng() < 0.5, 5);
    case 'integer':
    case 'number': {
      const v = numberValue(schema, rng, schemaType(schema) === 'integer');
      return take(budget, v, String(v).length);
    }
    case 'array': {
      const prefix = Array.isArray(schema['prefixItems']) ? (schema['prefixItems'] as unknown[]) : [];
      const minItems = num(schema['minItems']) ?? 0;
      const maxItems = num(schema['maxItems']);
      let count = Math.max(least ? 0 : 1, minItems, prefix.length);
      if (maxItems !== undefined) count = Math.min(count, maxItems);
      const out: unknown[] = [];
      budget.left -= 2;
      // Items stop where the allowance does (the first is always made), minItems met or not.
      for (let i = 0; i < count && (i === 0 || budget.left > 0); i++) {
        budget.left -= 1;
        out.push(valueFor(i < prefix.length ? prefix[i] : schema['items'], rng, root, depth + 1, budget));
      }
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      budget.left -= 2;
      const props = isObject(schema['properties']) ? schema['properties'] : {};
      const required = schema['required'];
      for (const key of Object.keys(props)) {
        if (least && !(Array.isArray(required) && required.includes(key))) continue;
        budget.left -= key.length + 4;
        out[key] = valueFor(props[key], rng, root, depth + 1, budget);
      }
      if (Array.isArray(required)) {
        for (const key of required) {
          if (typeof key === 'string' && !(key in out)) {
            const phrase = generatePhrase(rng);
            out[key] = take(budget, phrase, key.length + phrase.length + 6);
          }
        }
      }
      return out;
    }
    default: {
      const text = stringValue(schema, rng, budget);
      return take(budget, text, text.length + 2);
    }
  }
}

/**
 * A deterministic minimal value conforming to `schema`: every property (and
 * every required key) of objects, one item per array (past LEAST_DEPTH only the required
 * members and `minItems` items, so that a recursive schema's value ends), the first enum
 * value, in-range numbers, short phrases for strings (a `pattern`'s first example). Its JSON holds about `maxChars`
 * characters at most (schemaCharsFor the call's output allowance): `minLength` and
 * `minItems` past that are met only so far, so the value then breaks the schema, as a
 * real model's answer does that runs out of tokens. A schema's demands never hold
 * the simulator's thread, which in `npm start` is the gateway's.
 */
export function generateFromSchema(schema: unknown, seed: number, maxChars = SCHEMA_VALUE_MAX_CHARS): unknown {
  const root = isObject(schema) ? schema : {};
  if (!isObject(schema) || Object.keys(schema).length === 0) return {};
  return valueFor(schema, createRng(seed), root, 0, { left: maxChars });
}

/**
 * The schema of a gateway-style structured-output instruction (shared/providers/structured-output.ts):
 * a system text mentioning "JSON Schema" whose last line is the schema. Lets instruction-mode
 * models answer conforming JSON, as a compliant model would.
 */
export function schemaFromInstruction(systemTexts: readonly string[]): Record<string, unknown> | undefined {
  for (const text of systemTexts) {
    if (!text.includes('JSON Schema')) continue;
    try {
      const schema: unknown = JSON.parse(text.slice(text.lastIndexOf('\n') + 1));
      if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) return schema as Record<string, unknown>;
    } catch {
      // not an instruction
    }
  }
  return undefined;
}
