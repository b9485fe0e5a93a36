import type { ValidateFunction } from 'ajv';
import type { FieldError } from '../errors.js';
import { createAjv, type Ajv } from './ajv.js';
import { LIMITS } from './limits.js';
import { escapePointer } from './pointer.js';

/** Compiles callers' schemas; created on first use (after `loadAjv()`), a separate instance so that their keywords never mix with ours. */
let userSchemas: Ajv | undefined;
function compiler(): Ajv {
  userSchemas ??= createAjv({ strict: false, allErrors: true, validateFormats: false });
  return userSchemas;
}

const MAX_SCHEMA_BYTES = 64 * 1024;

/** Keywords whose value is a map of subschemas, or a subschema / list of subschemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_VALUES = ['items', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'propertyNames'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/** Checks an output against the request's schema. */
export type OutputValidator = ValidateFunction;

/**
 * Valid schemas already compiled, by their JSON: the judge workflow validates the same
 * request (and the same verdict schema) once per task, and callers repeat their schemas.
 * Bounded, oldest dropped first.
 */
const compiled = new Map<string, OutputValidator>();
const MAX_COMPILED = 100;

/**
 * `response_schema` rules (spec 2.5): a JSON Schema whose root is an object, with
 * `additionalProperties: false` at every object level (strict structured output needs
 * it), small enough to send to every model, and compilable. Returns the compiled
 * validator that every output is later checked with.
 */
export function checkResponseSchema(schema: Record<string, unknown>, path: string): { errors: FieldError[]; validate?: OutputValidator } {
  const errors: FieldError[] = [];
  const json = JSON.stringify(schema);
  if (json.length > MAX_SCHEMA_BYTES) {
    return { errors: [{ field: path, message: `must be at most ${MAX_SCHEMA_BYTES} bytes of JSON` }] };
  }
  const known = compiled.get(json);
  if (known) return { errors, validate: known };
  if (schema.type !== 'object') errors.push({ field: `${path}/type`, message: 'the root of response_schema must be "object"' });
  walk(schema, path, 0, errors);
  if (errors.length > 0) return { errors };
  try {
    const validate = compiler().compile(schema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(json, validate);
    return { errors, validate };
  } catch (error) {
    errors.push({ field: path, message: `is not a valid JSON Schema: ${(error as Error).message}` });
    return { errors };
  } finally {
    // The compiled function stays usable; ajv's own cache (by schema object) would only grow.
    compiler().removeSchema(schema);
  }
}

function isObjectLevel(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || 'properties' in schema;
}

function walk(node: unknown, path: string, depth: number, errors: FieldError[]): void {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
  if (depth > LIMITS.responseSchemaDepth) {
    errors.push({ field: path, message: `nests deeper than ${LIMITS.responseSchemaDepth} levels` });
    return;
  }
  const schema = node as Record<string, unknown>;
  if (isObjectLevel(schema) && schema.additionalProperties !== false) {
    errors.push({ field: `${path}/additionalProperties`, message: 'must be false at every object level of response_schema' });
  }
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (map && typeof map === 'object' && !Array.isArray(map)) {
      for (const [name, sub] of Object.entries(map)) walk(sub, `${path}/${key}/${escapePointer(name)}`, depth + 1, errors);
    }
  }
  for (const key of SCHEMA_VALUES) walk(schema[key], `${path}/${key}`, depth + 1, errors);
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) list.forEach((sub, i) => walk(sub, `${path}/${key}/${i}`, depth + 1, errors));
  }
}
