/**
 * The response schema travels unchanged as `generationConfig.responseJsonSchema` (Gemini
 * takes JSON Schema there since 2.5, additionalProperties included). Gemini enforces only a
 * documented subset of keywords and ignores the rest; the gateway validates the output
 * against the full schema afterwards, so an ignored keyword is a warning, not an error.
 */
const ENFORCED: ReadonlySet<string> = new Set([
  '$id',
  '$defs',
  '$ref',
  '$anchor',
  '$schema',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
]);

/** Keywords whose value is a map of sub-schemas. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords used anywhere in the schema that Gemini does not enforce, sorted, each once. */
export function unenforcedKeywords(schema: unknown): string[] {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (!ENFORCED.has(key)) found.add(key);
      if (SCHEMA_MAPS.has(key) && isObject(value)) {
        for (const sub of Object.values(value)) visit(sub);
      } else if (key !== 'enum' && key !== 'const' && key !== 'required' && key !== 'examples' && key !== 'default') {
        visit(value);
      }
    }
  };
  visit(schema);
  return [...found].sort();
}
