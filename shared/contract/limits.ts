/**
 * Sizes the contract leaves open (spec 8: "not shown"), decided here and documented in
 * docs/reference.md. The body limit keeps a request inside Lambda's 6 MB synchronous payload.
 */
export const LIMITS = {
  bodyBytes: 5 * 1024 * 1024,
  models: 32,
  judges: 4,
  /** judges x n(n-1) for n models (every judge, every pair, both orders). */
  judgeCalls: 120,
  promptChars: 500_000,
  systemChars: 200_000,
  systemBlocks: 20,
  historyTurns: 200,
  historyTurnChars: 500_000,
  judgePromptChars: 20_000,
  attachments: 10,
  attachmentNameChars: 255,
  cacheBreakpoints: 4,
  maxTokens: 200_000,
  modelIdChars: 100,
  responseSchemaDepth: 10,
  /** What a `response_schema` may cost to compile: ajv compiles it on the schema thread, one per process, which every request's schema and output check shares (docs/structured-output.md). */
  responseSchemaBytes: 64 * 1024,
  /** JSON objects anywhere in it: each may be a subschema ajv generates code for (a `$ref` can point anywhere). */
  responseSchemaObjects: 100,
  /** `enum` values, all enums together (OpenAI's strict mode allows 1,000). */
  responseSchemaEnumValues: 1_000,
  /** Patterns (`pattern` and `patternProperties` keys): compiling one costs about as much as a dozen subschemas. */
  responseSchemaPatterns: 10,
  /** Characters of one pattern. */
  responseSchemaPatternChars: 256,
  /** Counted repetitions (`{n}`, `{n,m}`), their largest counts summed over all patterns: RE2 compiles `x{100}` as 100 copies of `x`. */
  responseSchemaPatternRepeat: 100,
  /**
   * Names in `dependentRequired` lists (and `dependencies`' lists), all together: ajv compiles a
   * list into one expression that grows with the square of its names (1,500 names in 12.6 KB of
   * schema took over 2 s, 500 took 0.26 s, 256 take about 40 ms here).
   */
  responseSchemaDependentNames: 256,
  /**
   * Subschemas an output may be checked against along one walk of the schema, each `$ref`
   * counting what it points to: 22 `$defs` each an `anyOf` of two references to the next
   * (70 objects) made a check of `{"x": null}` try 4 million paths, 5 s on the schema thread
   * every tenant's checks share.
   */
  responseSchemaExpanded: 10_000,
} as const;
