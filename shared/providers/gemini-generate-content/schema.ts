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

/** Keywords whose value is a map of sub-schemas (`dependencies`' entries may be lists of names instead, which hold none). */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas', 'dependencies']);

/** Keywords whose value is a sub-schema, or a list of them. */
const SCHEMA_VALUES: ReadonlySet<string> = new Set([
  'items',
  'prefixItems',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'anyOf',
  'oneOf',
  'allOf',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Each sub-schema of the schema, handed to `each`: the values of the keywords that hold
 * sub-schemas (SCHEMA_VALUES, SCHEMA_MAPS' entries), never those of other keywords (`enum`,
 * `const`, `default`, `dependentRequired`'s lists of names, a keyword no draft has), whose
 * members are data or names, not keywords.
 */
function eachNode(schema: unknown, each: (node: Record<string, unknown>) => void): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isObject(node)) return;
    each(node);
    for (const [key, value] of Object.entries(node)) {
      if (SCHEMA_MAPS.has(key) && isObject(value)) {
        for (const sub of Object.values(value)) visit(sub);
      } else if (SCHEMA_VALUES.has(key)) {
        visit(value);
      }
    }
  };
  visit(schema);
}

/** Keywords used anywhere in the schema that Gemini does not enforce, sorted, each once. */
export function unenforcedKeywords(schema: unknown): string[] {
  const found = new Set<string>();
  eachNode(schema, (node) => {
    for (const key of Object.keys(node)) if (!ENFORCED.has(key)) found.add(key);
  });
  return [...found].sort();
}

/**
 * Where the schema departs from what Gemini documents for `responseJsonSchema` beside its
 * keywords (its API reference, the field's description): a `$ref` with other keywords than
 * `$`-prefixed ones beside it, an `enum` of other values than strings and numbers. Each
 * once, described, in the order met; Gemini may refuse such a schema or not enforce it (not
 * observed: said as a warning, the output validated afterwards as always).
 */
export function undocumentedUses(schema: unknown): string[] {
  const found = new Set<string>();
  eachNode(schema, (node) => {
    if (typeof node.$ref === 'string' && Object.keys(node).some((key) => !key.startsWith('$'))) found.add('$ref beside other keywords');
    if (Array.isArray(node.enum) && node.enum.some((value) => typeof value !== 'string' && typeof value !== 'number')) found.add('enum values other than strings and numbers');
  });
  return [...found];
}
