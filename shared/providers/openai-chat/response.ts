import { textTokens } from '../../text/text-tokens.js';
import { unusableAnswer, UpstreamError, vendorWord } from '../errors.js';
import type { ModelReply } from '../types.js';
import { dialectFor } from './dialects.js';
import type { ChatDialect } from './dialects.js';
import { vendorMessage } from './errors.js';
import { toUsage } from './usage.js';
import type { ChatUsage } from './usage.js';
import { firstChoice } from '../first-choice.js';

export { toUsage } from './usage.js';

/**
 * The parts of a chat completion the gateway reads. Reasoning text (DeepSeek
 * `reasoning_content`, Groq and Cerebras `reasoning`, Mistral `thinking` chunks) is never read:
 * it is not part of the output; its tokens are counted through usage.
 */
interface ChatResponse {
  choices?: { index?: unknown; message?: { content?: unknown; refusal?: unknown; reasoning_content?: unknown; reasoning?: unknown }; finish_reason?: unknown }[];
  usage?: ChatUsage | null;
  /** Groq repeats usage here (and sends it only here in some streamed answers). */
  x_groq?: { usage?: ChatUsage | null } | null;
  error?: unknown;
}

/**
 * Finish reasons of an answer cut short, each with its warning: what came is the output
 * (nothing, when reasoning took it all). And `length`, maxTokens, which the fan-out words
 * (cutAtMaxTokens).
 */
const CUT: ReadonlyMap<string, string> = new Map([
  // Mistral: the model's context window filled before maxTokens.
  ['model_length', "The output was cut at the model's context window"],
  // DeepSeek: "interrupted due to insufficient resource of the inference system".
  ['insufficient_system_resource', "The output was cut short: the provider's inference system ran out of resources"],
]);
/** Finish reasons of an answer that ended as the model meant it to (no tools are sent, but a vendor may still say tool_calls). */
const ENDED: ReadonlySet<string> = new Set(['stop', 'tool_calls']);

/**
 * A chat completions answer as the gateway's reply; usage is dropped (with a warning) when
 * absent or inconsistent. Mistral's finish_reason `error` (the generation failed part-way)
 * fails the call, retryable as a vendor's error event is (the fan-out retries no stream whose
 * text went out); an answer filtered away whole is blocked, as Gemini's and Bedrock's are; a
 * cut one, or one ended for a reason the gateway does not know, is completed with a warning.
 * `streamedReasoningTokens`: a stream's reasoning, counted as it came (its text not kept).
 */
export function fromChatResponse(body: unknown, dialect: ChatDialect = dialectFor('openai'), streamedReasoningTokens = 0): ModelReply {
  const response = (typeof body === 'object' && body !== null ? body : {}) as ChatResponse;
  const choice = Array.isArray(response.choices) ? firstChoice(response.choices) : undefined;
  if (!choice) {
    // Some vendors put an error body behind a 200.
    const message = response.error === undefined ? undefined : vendorMessage(response);
    if (message) throw new UpstreamError('upstream_error', message);
    // No choice the gateway asked for (none, or only one numbered otherwise): charged the usage reported with it, as a stream's is.
    const reported = response.usage ?? response.x_groq?.usage;
    throw unusableAnswer('upstream_malformed_response', 'The provider answered without a message', reported, { usage: toUsage(reported, dialect) });
  }
  const warnings: string[] = [];
  const finishReason = vendorWord(choice.finish_reason);
  if (finishReason === 'error') {
    throw new UpstreamError('upstream_error', 'The provider reported that generating the answer failed (finish_reason error)', { upstreamStatus: 200, retryable: true });
  }
  const text = textOf(choice.message?.content);
  const refused = text === undefined && typeof choice.message?.refusal === 'string';
  const cutAtMaxTokens = finishReason === 'length';
  let output: string | undefined;
  if (text !== undefined) {
    output = withoutThinking(text);
  } else if (refused) {
    output = '';
    warnings.push('The model refused to answer');
  } else if (cutAtMaxTokens || (finishReason !== undefined && (CUT.has(finishReason) || finishReason === 'content_filter' || finishReason === 'stop'))) {
    output = ''; // cut: everything went into reasoning before the limit; filtered: nothing was left; stopped: an answer of no text
  }
  const reported = response.usage ?? response.x_groq?.usage;
  const usage = toUsage(reported, dialect);
  // Reasoning (in its fields, or inline) is billed output that is not shown: counted, should the usage be missing, as a stream counts it.
  const inline = text !== undefined && output !== undefined && text.length > output.length ? textTokens(text) - textTokens(output) : 0;
  const reasoning = reasoningOf(choice.message);
  const thinking = inline + (reasoning === '' ? 0 : textTokens(reasoning)) + streamedReasoningTokens;
  const hints = thinking > 0 ? { hints: { unseenOutputTokens: thinking } } : {};
  // No content for another finish reason (a tool call, one unknown): a failure, charged the usage reported with it.
  if (output === undefined) throw unusableAnswer('upstream_malformed_response', 'The provider answered without content', reported, { usage, ...hints });
  let cutShort = false;
  if (finishReason === 'content_filter') {
    if (output === '' && !refused) throw unusableAnswer('upstream_blocked', 'The provider blocked the answer (content_filter)', reported, { usage, ...hints });
    warnings.push('The provider filtered the output');
    cutShort = true;
  } else if (finishReason !== undefined && !cutAtMaxTokens && !ENDED.has(finishReason)) {
    warnings.push(CUT.get(finishReason) ?? `The provider ended the output with finish_reason ${finishReason}`);
    cutShort = true;
  }

  return { output, usage, finishReason, ...(cutAtMaxTokens ? { cutAtMaxTokens } : {}), ...(cutShort ? { cutShort } : {}), warnings, ...hints };
}

/** `content` as text: a string, or the text chunks of Mistral's chunk array (thinking chunks left out). */
export function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const chunk of content as unknown[]) {
    const part = chunk as { type?: unknown; text?: unknown };
    if (part?.type === 'text' && typeof part.text === 'string') text += part.text;
  }
  return text;
}

/** Reasoning a model wrote inline (`<think>…</think>` before the answer) is not output. */
export function withoutThinking(text: string): string {
  const start = /^\s*<think>/.exec(text);
  if (!start) return text;
  // A block that never closes (the limit reached while thinking) is all thinking: no answer, as a stream shows it.
  const close = text.indexOf('</think>', start[0].length);
  return close < 0 ? '' : text.slice(close + 8).trimStart();
}

/** The reasoning text of a message or a streamed delta: `reasoning_content` (DeepSeek), `reasoning` (Groq, Cerebras), Mistral's thinking chunks. */
export function reasoningOf(message: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown } | null | undefined): string {
  if (!message) return '';
  let text = '';
  if (typeof message.reasoning_content === 'string') text += message.reasoning_content;
  if (typeof message.reasoning === 'string') text += message.reasoning;
  if (Array.isArray(message.content)) {
    for (const chunk of message.content as unknown[]) {
      const part = chunk as { type?: unknown; thinking?: unknown };
      if (part?.type === 'thinking') text += textOf(part.thinking) ?? '';
    }
  }
  return text;
}
