import type { StructuredOutput } from './structured-output.js';
import type { FieldError } from '../errors.js';

/** What the main thread asks the schema thread (schema-thread.ts); `schema` is the `response_schema`'s JSON, the key compiled validators are kept by. */
export type SchemaJob =
  | { id: number; op: 'compile'; schema: string }
  | { id: number; op: 'check'; schema: string; output: string }
  | { id: number; op: 'fault'; kind: 'hang' | 'crash' | 'throw' };

/** A compile's refusals (none: it compiled), or an output's check. */
export type SchemaAnswer = { errors: FieldError[] } | StructuredOutput;

/** What the thread posts: once `ready` (ajv loaded), then one answer per job, in order. */
export type SchemaMessage = { ready: true } | { id: number; answer: SchemaAnswer };
