import { UpstreamError } from '../errors.js';
import type { ModelReply, Usage } from '../types.js';

interface ChatUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  /** DeepSeek reports cache hits and misses instead of cached_tokens. */
  prompt_cache_hit_tokens?: unknown;
}

interface ChatResponse {
  choices?: { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }[];
  usage?: ChatUsage | null;
}

/** A chat completions answer as the gateway's reply; usage is dropped when absent or inconsistent. */
export function fromChatResponse(body: unknown): ModelReply {
  const response = (body ?? {}) as ChatResponse;
  const choice = response.choices?.[0];
  const content = choice?.message?.content;
  if (!choice || (typeof content !== 'string' && content !== null)) {
    throw new UpstreamError('upstream_malformed_response', 'The provider answered without a message');
  }
  const warnings: string[] = [];
  const finishReason = typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined;
  if (finishReason === 'length') warnings.push('The output was cut at maxTokens');
  const usage = toUsage(response.usage);
  if (!usage) warnings.push('The provider reported no usable token usage; cost is unavailable');
  return { output: content ?? '', usage, finishReason, warnings };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

export function toUsage(usage: ChatUsage | null | undefined): Usage | undefined {
  if (!usage) return undefined;
  const inputTokens = count(usage.prompt_tokens);
  const outputTokens = count(usage.completion_tokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const cachedInputTokens = count(usage.prompt_tokens_details?.cached_tokens) ?? count(usage.prompt_cache_hit_tokens) ?? 0;
  const reasoningTokens = count(usage.completion_tokens_details?.reasoning_tokens) ?? 0;
  // Subsets larger than their total mean the numbers cannot be priced.
  if (cachedInputTokens > inputTokens || reasoningTokens > outputTokens) return undefined;
  return { inputTokens, cachedInputTokens, cacheWriteTokens: 0, outputTokens, reasoningTokens };
}
