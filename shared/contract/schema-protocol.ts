import type { StructuredOutput } from './structured-output.js';
import type { FieldError } from '../errors.js';

/**
 * What the main thread asks the schema thread (schema-thread.ts); `schema` is the
 * `response_schema`'s JSON and `scope` the account that sent it: compiled validators are
 * kept by both, so that one account's never serve another's (a hit is faster: it would tell
 * that the schema was sent before). A check uses its account's validator of the schema
 * (validatorOf; the empty scope for the workflow's tasks, which name no account).
 */
export type SchemaJob =
  | { id: number; op: 'compile'; schema: string; scope: string }
  | { id: number; op: 'check'; schema: string; output: string; scope: string }
  | { id: number; op: 'fault'; kind: 'hang' | 'crash' | 'throw' };

/** A compile's refusals (none: it compiled), or an output's check. */
export type SchemaAnswer = { errors: FieldError[] } | StructuredOutput;

/** The key a cache of compiled schemas or patterns keeps `text` by for `scope` (an account): the scope's length first, so that no two pairs make the same key. */
export function scopedKey(scope: string, text: string): string {
  return `${scope.length}:${scope}${text}`;
}

/** The scope a scopedKey was made for. */
function scopeOf(key: string): string {
  const colon = key.indexOf(':');
  return key.slice(colon + 1, colon + 1 + Number(key.slice(0, colon)));
}

/**
 * The share of a cache of `capacity` scoped keys one account may hold (a BoundedMap's
 * `share`): a quarter, so that an account sending new schemas or patterns without end
 * drops its own, never every other account's (each of theirs then compiled again, behind it).
 */
export function accountShare(capacity: number): { of: (key: string) => string; most: number } {
  return { of: scopeOf, most: Math.ceil(capacity / 4) };
}

/** What the thread posts: once `ready` (ajv loaded), then one answer per job, in order. */
export type SchemaMessage = { ready: true } | { id: number; answer: SchemaAnswer };
