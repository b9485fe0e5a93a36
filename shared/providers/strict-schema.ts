type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords whose value is one subschema, or a list or map of them. */
const SUBSCHEMA_KEYWORDS = ['items', 'additionalProperties', 'not'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const SUBSCHEMA_MAPS = ['properties', '$defs', 'definitions'] as const;

/**
 * The first object level that a strict structured-output mode would refuse (400), as a JSON
 * pointer ('' for the root), or undefined when strict mode takes the schema. OpenAI's strict
 * Structured Outputs and Groq's `strict: true` (constrained decoding) both want
 * `additionalProperties: false` and every property listed in `required` at each object level
 * ("all fields must be required"); the contract guarantees the first, not the second.
 */
export function strictViolation(schema: unknown, at = ''): string | undefined {
  if (!isObject(schema)) return undefined;
  const properties = isObject(schema['properties']) ? schema['properties'] : undefined;
  if (properties || schema['type'] === 'object') {
    const required = Array.isArray(schema['required']) ? schema['required'] : [];
    const missing = Object.keys(properties ?? {}).find((key) => !required.includes(key));
    if (missing !== undefined) return `${at}/properties/${escapePointerToken(missing)}`;
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
    warning: `response_schema was sent to ${modelId} without strict enforcement: ${vendor}'s strict mode needs every property listed in required and additionalProperties false (${violation || 'the root'} is not)`,
  };
}
