import type { Usage } from '../types.js';

/** `usage` of a Responses API answer, as OpenAI documents it. */
export interface ResponsesUsage {
  /** Every input token, cached ones included. */
  input_tokens?: unknown;
  input_tokens_details?: { cached_tokens?: unknown } | null;
  /** Every output token, reasoning included. */
  output_tokens?: unknown;
  output_tokens_details?: { reasoning_tokens?: unknown } | null;
  total_tokens?: unknown;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A subset OpenAI may leave out (0 then); sent but not a count ("1900", -5), undefined: the block cannot be believed. */
function optionalCount(value: unknown): number | undefined {
  return value === undefined || value === null ? 0 : count(value);
}

/**
 * OpenAI's token classes map one to one: input includes cached reads, output includes
 * reasoning, and automatic caching has no write class. Undefined when absent or inconsistent.
 */
export function toUsage(usage: ResponsesUsage | null | undefined): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const inputTokens = count(usage.input_tokens);
  const outputTokens = count(usage.output_tokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  // Never read as 0 when sent malformed: that would price cached input uncached (or drop the reasoning).
  const cachedInputTokens = optionalCount(usage.input_tokens_details?.cached_tokens);
  const reasoningTokens = optionalCount(usage.output_tokens_details?.reasoning_tokens);
  if (cachedInputTokens === undefined || reasoningTokens === undefined) return undefined;
  // Subsets larger than their totals, or a total that is not their sum, cannot be priced.
  if (cachedInputTokens > inputTokens || reasoningTokens > outputTokens) return undefined;
  if (usage.total_tokens !== undefined && usage.total_tokens !== null && usage.total_tokens !== inputTokens + outputTokens) return undefined;
  return { inputTokens, cachedInputTokens, cacheWriteTokens: 0, outputTokens, reasoningTokens };
}
