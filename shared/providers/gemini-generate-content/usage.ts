import type { Usage, UsageHints } from '../types.js';

/**
 * Gemini's usageMetadata. promptTokenCount includes the cached content
 * (cachedContentTokenCount is its subset); tool-use prompt tokens (search grounding) are
 * counted apart and billed as input; thoughtsTokenCount is apart from candidatesTokenCount
 * and billed as output. totalTokenCount is the sum of the four. Zero counts are omitted
 * from the JSON (proto3), so an absent class means 0.
 */
export interface UsageMetadata {
  promptTokenCount?: unknown;
  cachedContentTokenCount?: unknown;
  candidatesTokenCount?: unknown;
  thoughtsTokenCount?: unknown;
  toolUsePromptTokenCount?: unknown;
  totalTokenCount?: unknown;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A class that may be omitted (meaning 0) but, when present, must be a count; null when malformed. */
function optionalCount(value: unknown): number | null {
  return value === undefined ? 0 : (count(value) ?? null);
}

/** The reported classes as Usage; undefined when absent or inconsistent (cost is then unavailable). */
export function toUsage(metadata: UsageMetadata | null | undefined): Usage | undefined {
  if (!metadata || typeof metadata !== 'object') return undefined;
  const prompt = count(metadata.promptTokenCount);
  const cached = optionalCount(metadata.cachedContentTokenCount);
  const candidates = optionalCount(metadata.candidatesTokenCount);
  const thoughts = optionalCount(metadata.thoughtsTokenCount);
  const toolUse = optionalCount(metadata.toolUsePromptTokenCount);
  if (prompt === undefined || cached === null || candidates === null || thoughts === null || toolUse === null) return undefined;
  if (cached > prompt) return undefined;
  const inputTokens = prompt + toolUse;
  const outputTokens = candidates + thoughts;
  // A total that disagrees with its parts means a class we do not know how to price.
  if (metadata.totalTokenCount !== undefined && count(metadata.totalTokenCount) !== inputTokens + outputTokens) return undefined;
  return { inputTokens, cachedInputTokens: cached, cacheWriteTokens: 0, outputTokens, reasoningTokens: thoughts };
}

/**
 * The hints of a running usageMetadata that parts came after (a stream's): usageHints, and
 * the output it had counted by then (candidates and thoughts, where it is a usage that can
 * be read), which the call is charged at least.
 */
export function runningUsageHints(metadata: UsageMetadata | null | undefined): UsageHints {
  const outputTokens = toUsage(metadata)?.outputTokens;
  return { ...usageHints(metadata), ...(outputTokens !== undefined && outputTokens > 0 ? { outputTokensAtLeast: outputTokens, reasoningCounted: true } : {}) };
}

/**
 * What a running usageMetadata shows of a call whose usage cannot be believed, for the
 * estimate (pricing/charge.ts): its input (prompt and tool-use prompt), its cached part and
 * its thoughts, each where it is a count.
 */
export function usageHints(metadata: UsageMetadata | null | undefined): UsageHints {
  if (!metadata || typeof metadata !== 'object') return {};
  const prompt = count(metadata.promptTokenCount);
  const toolUse = optionalCount(metadata.toolUsePromptTokenCount);
  const cached = optionalCount(metadata.cachedContentTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const inputTokens = prompt === undefined ? undefined : prompt + (toolUse ?? 0);
  return {
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(inputTokens !== undefined && toolUse !== null && cached !== null && cached > 0 ? { cachedInputTokens: cached } : {}),
    ...(thoughts !== undefined ? { unseenOutputTokens: thoughts, reasoningCounted: true } : {}),
  };
}
