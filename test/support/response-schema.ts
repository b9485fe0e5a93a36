import { checkResponseSchema } from '../../shared/contract/response-schema.js';
import { compileResponseSchema, type OutputValidator } from '../../shared/contract/schema-compile.js';
import type { FieldError } from '../../shared/errors.js';

/**
 * Every check a request's `response_schema` gets, in this thread: the main thread's
 * (`checkResponseSchema`), then the schema thread's compile (`compileResponseSchema`).
 * For tests of the compile and of outputs against its validator without a worker.
 */
export function checkSchema(schema: Record<string, unknown>): { errors: FieldError[]; validate?: OutputValidator } {
  const errors = checkResponseSchema(schema, '/response_schema');
  return errors.length > 0 ? { errors } : compileResponseSchema(JSON.stringify(schema), '/response_schema');
}
