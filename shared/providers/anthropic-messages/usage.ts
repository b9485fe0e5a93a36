import type { Usage, UsageHints } from '../types.js';

/** The `usage` object of a Messages API answer. */
export interface AnthropicUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
}

/** A count Anthropic sent, where it is one. */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A cache class Anthropic may leave out or null (no caching), but never mistype. */
function optionalCount(value: unknown): number | undefined {
  return value === undefined || value === null ? 0 : count(value);
}

/**
 * Anthropic's token classes as the gateway's Usage. Anthropic's `input_tokens` counts only
 * the input after the last cache breakpoint: cache reads and writes come on top, so all
 * three add up to the input. `output_tokens` already includes thinking, which Anthropic
 * does not report apart: no reasoningTokens (thinking is priced as output anyway).
 */
export function toUsage(usage: AnthropicUsage | null | undefined): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const uncached = count(usage.input_tokens);
  const outputTokens = count(usage.output_tokens);
  const cacheWriteTokens = optionalCount(usage.cache_creation_input_tokens);
  const cachedInputTokens = optionalCount(usage.cache_read_input_tokens);
  if (uncached === undefined || outputTokens === undefined || cacheWriteTokens === undefined || cachedInputTokens === undefined) {
    return undefined;
  }
  return {
    inputTokens: uncached + cachedInputTokens + cacheWriteTokens,
    cachedInputTokens,
    cacheWriteTokens,
    outputTokens,
  };
}

/**
 * What an answer showed of its usage for the estimate, should its usage block not be believed
 * (pricing/charge.ts): the input `usage` reported (all its classes; each class apart where all
 * are well-formed, so that cache reads are priced as such), and the thinking it carried, as
 * textTokens counts it.
 */
export function usageHints(usage: AnthropicUsage | null | undefined, thinkingTokens: number): UsageHints {
  const { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: written } = usage ?? {};
  const counts = [input, read, written].map(count).filter((tokens) => tokens !== undefined);
  const classes = toUsage({ input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: written, output_tokens: 0 });
  return {
    ...(counts.length > 0 ? { inputTokens: counts.reduce((sum, tokens) => sum + tokens, 0) } : {}),
    ...(classes && classes.cachedInputTokens + classes.cacheWriteTokens > 0 ? { cachedInputTokens: classes.cachedInputTokens, cacheWriteTokens: classes.cacheWriteTokens } : {}),
    ...(thinkingTokens > 0 ? { unseenOutputTokens: thinkingTokens } : {}),
  };
}
