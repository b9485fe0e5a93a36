import { UpstreamError, unusableAnswer, vendorWord } from '../errors.js';
import type { ModelReply } from '../types.js';
import { errorBodyToUpstreamError } from './errors.js';
import { textTokens } from '../../text/text-tokens.js';
import { toUsage, usageHints } from './usage.js';
import type { AnthropicUsage } from './usage.js';
import { isBlank } from '../../text/characters.js';

interface MessagesResponse {
  type?: unknown;
  content?: unknown;
  stop_reason?: unknown;
  usage?: AnthropicUsage | null;
  error?: unknown;
}

/** Stop reasons that mean the answer is not the whole answer (max_tokens: cutAtMaxTokens); any other but those that end it is named in a warning. */
const STOP_WARNINGS: Readonly<Record<string, string>> = {
  model_context_window_exceeded: "The output was cut at the model's context window",
  refusal: 'The model declined to answer (stop_reason refusal)',
};
/** Stop reasons of an answer that ended as the model meant it to (no tools are sent, but a vendor may still say tool_use). */
const ENDED: ReadonlySet<string> = new Set(['end_turn', 'stop_sequence', 'tool_use', 'max_tokens']);

/**
 * A Messages API answer as the gateway's reply: the `text` blocks joined (thinking and
 * redacted thinking are not output); usage dropped when absent or inconsistent.
 * `streamedThinkingTokens`: a stream's thinking, counted as it came (its text not kept).
 */
export function fromMessagesResponse(body: unknown, streamedThinkingTokens = 0): ModelReply {
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
  const usage = toUsage(response.usage);
  const hints = usageHints(response.usage, thinkingTokens + streamedThinkingTokens);
  // No text and no stop reason: nothing says the model answered (a whole answer's, or a stream's
  // without its message_delta), as Converse's; charged the usage reported with it, as Converse's.
  if (finishReason === undefined && texts.every(isBlank))
    throw unusableAnswer('upstream_malformed_response', 'The provider answered without text or a stop reason', response.usage, { usage, hints });
  // Any stop reason but those that end an answer (pause_turn, one added later): what came may not be all of it.
  const stopWarning =
    finishReason === undefined || ENDED.has(finishReason) ? undefined : (STOP_WARNINGS[finishReason] ?? `The provider ended the output with stop_reason ${finishReason}`);
  const cutAtMaxTokens = finishReason === 'max_tokens';
  if (stopWarning) warnings.push(stopWarning);
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
