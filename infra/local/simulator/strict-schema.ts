import { isObject } from './json.js';

/**
 * The keywords OpenAI's strict mode permits ("Supported schemas"); any other is refused. Written
 * apart from the gateway's list (shared/providers/strict-schema.ts) on purpose: the stand-in
 * vendor must not agree with the gateway by construction.
 */
const PERMITTED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'pattern',
  'format',
  'multipleOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
]);

/** The string formats strict mode takes ("Supported properties"); written apart too. */
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

/**
 * Strict structured-output rules, OpenAI's and Groq's alike: only the permitted keywords, and on
 * object levels additionalProperties false and every property required. The first problem in
 * OpenAI's words, or undefined.
 */
export function strictProblem(schema: unknown, path: string[]): string | undefined {
  if (!isObject(schema)) return undefined;
  const context = `In context=(${path.map((p) => `'${p}'`).join(', ')})`;
  const refused = Object.keys(schema).find((key) => !PERMITTED.has(key));
  if (refused !== undefined) return `${context}, '${refused}' is not permitted.`;
  const format = schema['format'];
  if (format !== undefined && !(typeof format === 'string' && FORMATS.has(format))) return `${context}, '${String(format)}' is not a valid format.`;
  const props = isObject(schema['properties']) ? schema['properties'] : undefined;
  if (props || schema['type'] === 'object') {
    if (schema['additionalProperties'] !== false) return `${context}, 'additionalProperties' is required to be supplied and to be false.`;
    const required = Array.isArray(schema['required']) ? schema['required'] : [];
    const missing = Object.keys(props ?? {}).filter((k) => !required.includes(k));
    if (missing.length > 0) {
      return `${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`;
    }
  }
  for (const [key, sub] of Object.entries(props ?? {})) {
    const problem = strictProblem(sub, [...path, 'properties', key]);
    if (problem) return problem;
  }
  const subs: [string, unknown][] = [['items', schema['items']]];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) for (const [i, s] of list.entries()) subs.push([`${key}/${i}`, s]);
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const map = schema[key];
    if (isObject(map)) for (const [k, s] of Object.entries(map)) subs.push([`${key}/${k}`, s]);
  }
  for (const [key, sub] of subs) {
    const problem = strictProblem(sub, [...path, key]);
    if (problem) return problem;
  }
  return undefined;
}
