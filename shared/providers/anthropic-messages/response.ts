import { UpstreamError, vendorWord } from '../errors.js';
import type { ModelReply } from '../types.js';
import { errorBodyToUpstreamError } from './errors.js';
import { textTokens } from '../../text/text-tokens.js';
import { toUsage, usageHints } from './usage.js';
import type { AnthropicUsage } from './usage.js';

interface MessagesResponse {
  type?: unknown;
  content?: unknown;
  stop_reason?: unknown;
  usage?: AnthropicUsage | null;
  error?: unknown;
}

/** Stop reasons that mean the answer is not the whole answer (max_tokens: cutAtMaxTokens). */
const STOP_WARNINGS: Readonly<Record<string, string>> = {
  model_context_window_exceeded: "The output was cut at the model's context window",
  refusal: 'The model declined to answer (stop_reason refusal)',
};

/**
 * A Messages API answer as the gateway's reply: the `text` blocks joined (thinking and
 * redacted thinking are not output); usage dropped when absent or inconsistent.
 */
export function fromMessagesResponse(body: unknown): ModelReply {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UpstreamError('upstream_malformed_response', 'The provider answered without a message');
  }
  const response = body as MessagesResponse;
  if (response.type === 'error') throw errorBodyToUpstreamError(response, 200);
  if (!Array.isArray(response.content)) {
    throw new UpstreamError('upstream_malformed_response', 'The provider answered without message content');
  }
  const texts: string[] = [];
  /** Thinking, billed as output and never shown: counted for the estimate, should the usage not be believed. */
  let thinkingTokens = 0;
  for (const block of response.content as unknown[]) {
    const { type, text, thinking } = (block ?? {}) as { type?: unknown; text?: unknown; thinking?: unknown };
    if (type === 'text' && typeof text === 'string') texts.push(text);
    else if (type === 'thinking' && typeof thinking === 'string') thinkingTokens += textTokens(thinking);
  }
  const warnings: string[] = [];
  const finishReason = vendorWord(response.stop_reason);
  const stopWarning = finishReason === undefined ? undefined : STOP_WARNINGS[finishReason];
  const cutAtMaxTokens = finishReason === 'max_tokens';
  if (stopWarning) warnings.push(stopWarning);
  const usage = toUsage(response.usage);
  const hints = usageHints(response.usage, thinkingTokens);
  return {
    output: texts.join(''),
    usage,
    ...(Object.keys(hints).length > 0 ? { hints } : {}),
    finishReason,
    ...(cutAtMaxTokens ? { cutAtMaxTokens } : {}),
    ...(stopWarning ? { cutShort: true as const } : {}),
    warnings,
  };
}
