type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords whose value is one subschema, or a list or map of them. */
const SUBSCHEMA_KEYWORDS = ['items', 'additionalProperties', 'not'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const SUBSCHEMA_MAPS = ['properties', '$defs', 'definitions'] as const;

/**
 * The keywords strict mode takes (OpenAI's Structured Outputs guide, "Supported schemas"):
 * the structure (`anyOf` but no other composition, `$ref` into `$defs`), annotations, and the
 * few constraints its decoding enforces. OpenAI refuses any other with a 400 ("'minLength' is
 * not permitted", "'default' is not permitted"); the contract accepts any of JSON Schema's.
 * A keyword left out here only costs the schema its strict enforcement (the gateway checks
 * every output against it still), one wrongly let in the call itself: the list is the
 * documented one (`definitions` beside `$defs` among its examples), and `title`, which
 * schemas made by OpenAI's own SDK helpers carry on every level, no more.
 */
const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
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

/** The string formats strict mode takes ("Supported properties"); any other is refused (400 "'uri' is not a valid format"). */
const STRICT_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

/** The keywords that say what a subschema is, one of which strict mode wants at every level. */
const TYPED_BY = ['type', 'anyOf', '$ref', 'enum', 'const'] as const;

/** OpenAI's limit on a long string enum in strict mode: past 250 values, 15,000 characters in all. */
const STRICT_LONG_ENUM_VALUES = 250;
const STRICT_LONG_ENUM_CHARACTERS = 15_000;

/**
 * Where a strict structured-output mode would refuse the schema (400), as a JSON pointer ('' for
 * the root), or undefined when strict mode takes it. OpenAI's strict Structured Outputs and
 * Groq's `strict: true` (constrained decoding) both want `additionalProperties: false` and
 * every property listed in `required` at each object level ("all fields must be required"),
 * and no other name there,
 * and take only the keywords of STRICT_KEYWORDS (`format` only of STRICT_FORMATS), no `anyOf` at the root, and no string enum
 * of more than 250 values past 15,000 characters ("Supported schemas", its limits); the
 * contract guarantees the first of these, not the others.
 */
export function strictViolation(schema: unknown, at = ''): string | undefined {
  // A subschema `true` or `false` (but `additionalProperties: false`, which strict mode wants) is no schema strict mode reads.
  if (typeof schema === 'boolean') return schema === false && at.endsWith('/additionalProperties') ? undefined : at;
  if (!isObject(schema)) return undefined;
  for (const key in schema) if (!STRICT_KEYWORDS.has(key)) return `${at}/${escapePointerToken(key)}`;
  if ('format' in schema && !(typeof schema['format'] === 'string' && STRICT_FORMATS.has(schema['format']))) return `${at}/format`;
  // "schema must have a 'type' key": `{}` or a description alone (any JSON value) is refused; a
  // reference, a union, an enum or a constant says what it is without one.
  if (!TYPED_BY.some((key) => key in schema)) return at;
  // "The root level object must be an object, and not use anyOf."
  if (at === '' && 'anyOf' in schema) return '/anyOf';
  // A string enum of more than 250 values may hold 15,000 characters in all at most.
  const values = Array.isArray(schema['enum']) ? schema['enum'] : [];
  if (values.length > STRICT_LONG_ENUM_VALUES) {
    let characters = 0;
    for (const value of values) if (typeof value === 'string') characters += value.length;
    if (characters > STRICT_LONG_ENUM_CHARACTERS) return `${at}/enum`;
  }
  const properties = isObject(schema['properties']) ? schema['properties'] : undefined;
  if (properties || schema['type'] === 'object') {
    const required = Array.isArray(schema['required']) ? schema['required'] : [];
    const missing = Object.keys(properties ?? {}).find((key) => !required.includes(key));
    if (missing !== undefined) return `${at}/properties/${escapePointerToken(missing)}`;
    // A required name that is no property: refused too ("Extra required key supplied"), as `required` must be the properties' names.
    if (required.some((key) => typeof key !== 'string' || !Object.hasOwn(properties ?? {}, key))) return `${at}/required`;
    if (schema['additionalProperties'] !== false) return at;
  }
  for (const key of SUBSCHEMA_KEYWORDS) {
    const found = strictViolation(schema[key], `${at}/${key}`);
    if (found !== undefined) return found;
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = schema[key];
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) {
      const found = strictViolation(list[i], `${at}/${key}/${i}`);
      if (found !== undefined) return found;
    }
  }
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key];
    if (!isObject(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      const found = strictViolation(sub, `${at}/${key}/${escapePointerToken(name)}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Whether a schema can go out with `strict: true` to `vendor`, and otherwise the warning
 * for the result: the schema is then sent non-strict (the vendor's best effort), and the
 * output is still validated against it by the gateway.
 */
export function strictMode(schema: unknown, modelId: string, vendor: string): { strict: boolean; warning?: string } {
  const violation = strictViolation(schema);
  if (violation === undefined) return { strict: true };
  return {
    strict: false,
    warning: `response_schema was sent to ${modelId} without strict enforcement: ${vendor}'s strict mode needs every property listed in required and additionalProperties false at each object level, and takes only some of JSON Schema's keywords (${violation || 'the root'} does not fit)`,
  };
}
