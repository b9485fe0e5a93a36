/**
 * Sizes the contract leaves open (spec 8: "not shown"), decided here and documented in
 * the README. The body limit keeps a request inside Lambda's 6 MB synchronous payload.
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
} as const;
