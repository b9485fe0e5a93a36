import { BoundedMap } from '../bounded-map.js';
import type { ValidateFunction } from 'ajv';
import type { FieldError } from '../errors.js';
import { createAjv, type Ajv } from './ajv.js';
import { linearPatternProblem, linearRegExp, patternSyntaxProblem } from './linear-regexp.js';
import { walkSchema } from './response-schema.js';

/**
 * Compiles callers' schemas; created on first use (after `loadAjv()`), a separate instance
 * so that their keywords never mix with ours. Used on the schema thread only
 * (schema-thread.ts): the main thread never compiles a caller's schema nor runs its code.
 */
let userSchemas: Ajv | undefined;
function compiler(): Ajv {
  userSchemas ??= createAjv({
    strict: false,
    allErrors: true,
    // `format` is an annotation here: ajv's format checks are regexes of their own, and vendors do not enforce most formats either.
    validateFormats: false,
    // Patterns run on RE2 (linear time), never on V8's backtracking engine. ajv's optimising
    // pass over the generated code halves what a compile costs the thread, for a validator
    // that is run once an output (measured: 100 properties, 5.8 ms instead of 10.7 ms).
    code: { regExp: linearRegExp, optimize: false },
    // A `$ref` compiles to one function called from each use: inlined, a subschema referenced n times is compiled n times.
    inlineRefs: false,
  });
  return userSchemas;
}

/** Checks an output against the request's schema (on the schema thread). */
export type OutputValidator = ValidateFunction;

/**
 * Valid schemas already compiled (on the schema thread), by their JSON: the judge workflow
 * checks the same request once per task, and callers repeat their schemas. Bounded,
 * oldest dropped first.
 */
const MAX_COMPILED = 100;
const compiled = new BoundedMap<string, OutputValidator>(MAX_COMPILED);

/**
 * Compiles a schema that passed `checkResponseSchema` (given as its JSON): its patterns
 * (ECMA-262 syntax, then for RE2), then the whole with ajv. Returns the validator every output is checked with, or
 * the fields at fault. Runs on the schema thread: up to 160 ms of compiling (docs/structured-output.md).
 */
export function compileResponseSchema(json: string, path: string): { errors: FieldError[]; validate?: OutputValidator } {
  const known = compiled.get(json);
  if (known) return { errors: [], validate: known };
  const schema = JSON.parse(json) as Record<string, unknown>;
  // ajv reads a root `$id` as a string before it checks the schema against its meta-schema
  // (and again when it forgets the schema), so one that is not is refused here.
  if (schema.$id !== undefined && typeof schema.$id !== 'string') return { errors: [{ field: `${path}/$id`, message: 'must be a string' }] };
  const errors: FieldError[] = [];
  for (const { pattern, field } of walkSchema(schema, path).patterns) {
    const problem = patternSyntaxProblem(pattern) ?? linearPatternProblem(pattern);
    if (problem) errors.push({ field, message: problem });
  }
  if (errors.length > 0) return { errors };
  try {
    const validate = compiler().compile(schema);
    compiled.set(json, validate);
    return { errors, validate };
  } catch (error) {
    return { errors: [{ field: path, message: `is not a valid JSON Schema: ${(error as Error).message}` }] };
  } finally {
    // The compiled function stays usable; ajv's own cache (by schema object) would only grow.
    compiler().removeSchema(schema);
  }
}
