import type { Usage } from '../types.js';
import type { ChatDialect } from './dialects.js';

/** The usage block of every dialect, all fields optional. */
export interface ChatUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  total_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  /** DeepSeek: prompt_tokens = hit + miss. */
  prompt_cache_hit_tokens?: unknown;
  prompt_cache_miss_tokens?: unknown;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A count the vendor may leave out (null then); sent but not a count, undefined: the block cannot be believed. */
function sentCount(value: unknown): number | null | undefined {
  return value === undefined || value === null ? null : count(value);
}

/**
 * The vendor's token counts as the gateway's Usage, or undefined when they are missing or do
 * not add up (the gateway then reports cost unavailable instead of guessing).
 */
export function toUsage(usage: ChatUsage | null | undefined, dialect: ChatDialect): Usage | undefined {
  if (!usage) return undefined;
  const inputTokens = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  if (inputTokens === undefined || completion === undefined) return undefined;

  const cachedInputTokens = cachedTokens(usage, inputTokens);
  if (cachedInputTokens === undefined) return undefined;

  // Sent but malformed ("99900", -1, 99900.5), never read as 0: beside completion_tokens (xAI) that would make the reasoning free.
  const reported = sentCount(usage.completion_tokens_details?.reasoning_tokens);
  if (reported === undefined) return undefined;
  const reasoningTokens = reported ?? 0;
  const outputTokens = outputCount(usage, dialect, inputTokens, completion, reasoningTokens);
  if (outputTokens === undefined || reasoningTokens > outputTokens) return undefined;

  // Not sent (Cerebras, Mistral: any reasoning inside completion_tokens), none is reported apart.
  const apart = reported === null ? {} : { reasoningTokens };
  return { inputTokens, cachedInputTokens, cacheWriteTokens: 0, outputTokens, ...apart };
}

/**
 * Cache reads: DeepSeek's hit count (checked against hit + miss), else OpenAI's cached_tokens.
 * A count sent but malformed ("1900", -5) is never read as 0, which would price cached input
 * uncached: undefined, the block cannot be believed.
 */
function cachedTokens(usage: ChatUsage, inputTokens: number): number | undefined {
  const hit = sentCount(usage.prompt_cache_hit_tokens);
  const miss = sentCount(usage.prompt_cache_miss_tokens);
  const details = sentCount(usage.prompt_tokens_details?.cached_tokens);
  if (hit === undefined || miss === undefined || details === undefined) return undefined;
  const cached = hit ?? details ?? 0;
  if (hit !== null && miss !== null && hit + miss !== inputTokens) return undefined;
  return cached > inputTokens ? undefined : cached;
}

/**
 * Every output token, reasoning included; undefined where total_tokens, when sent, is not the
 * sum of the parts (a class the gateway does not know how to price). Where the dialect
 * reports reasoning beside completion_tokens, total_tokens tells which accounting this
 * answer used: a total of prompt + completion means the reasoning was already inside
 * completion_tokens.
 */
function outputCount(usage: ChatUsage, dialect: ChatDialect, input: number, completion: number, reasoning: number): number | undefined {
  const beside = dialect.reasoningTokens === 'beside-completion' && reasoning > 0;
  const total = sentCount(usage.total_tokens);
  if (total === null) return beside ? completion + reasoning : completion;
  if (beside && total === input + completion + reasoning) return completion + reasoning;
  return total === input + completion ? completion : undefined;
}
