import { UpstreamError, streamEndedEarly, type PartialReply } from '../errors.js';
import type { SseEvent } from '../sse.js';
import { eventJson } from '../stream-http.js';
import { textTokens } from '../../text/text-tokens.js';
import type { ModelReply, UsageHints } from '../types.js';
import type { ChatDialect } from './dialects.js';
import { vendorMessage } from './errors.js';
import { InlineThinkingFilter } from './inline-thinking.js';
import { OtherChoices } from '../first-choice.js';
import { fromChatResponse, reasoningOf, textOf } from './response.js';
import { toUsage, type ChatUsage } from './usage.js';

interface ChatChunk {
  choices?: { index?: unknown; delta?: { content?: unknown; refusal?: unknown; reasoning_content?: unknown; reasoning?: unknown } | null; finish_reason?: unknown }[] | null;
  usage?: ChatUsage | null;
  x_groq?: { usage?: ChatUsage | null } | null;
  error?: unknown;
}

/**
 * Reads a streamed chat completion (`data:` chunks, then `data: [DONE]`): the `delta.content`
 * pieces become deltas (reasoning fields — `reasoning_content`, `reasoning`, Mistral's
 * thinking chunks — and an inline `<think>` block never do); the usage chunk (`usage`, or
 * Groq's `x_groq.usage`) is kept. A stream that ends with neither a `finish_reason` nor
 * `[DONE]` ended early (a failed call). `finish` assembles the answer the non-streamed call would
 * have had and maps it with fromChatResponse, so usage is priced by the same code.
 */
export class ChatStream {
  private readonly text: InlineThinkingFilter;
  private refusal = '';
  private finishReason: unknown;
  private usage: ChatUsage | undefined;
  private chunks = 0;
  private done = false;
  /** A chunk carried a `content` (an empty one too): without any, the answer had none, as a whole answer's `content: null`. */
  private contentSent = false;
  /** A usage chunk came with the finish_reason or after it: the answer and its count are whole, whether or not `[DONE]` follows. */
  private counted = false;
  /** Reasoning streamed in its own fields, as textTokens counts it: billed as output, never shown. */
  private reasoningTokens = 0;
  private readonly choices = new OtherChoices<NonNullable<ChatChunk['choices']>[number]>('finish_reason');

  constructor(
    private readonly dialect: ChatDialect,
    onDelta: (text: string) => void,
  ) {
    this.text = new InlineThinkingFilter(onDelta);
  }

  onEvent(event: SseEvent): void {
    if (event.data === '[DONE]') {
      this.done = true;
      return;
    }
    const chunk = eventJson(event) as ChatChunk;
    if (chunk.error !== undefined && chunk.error !== null) {
      const { code, retryable } = streamError(chunk.error);
      throw new UpstreamError(code, vendorMessage(chunk) ?? 'The provider reported an error in the stream', { upstreamStatus: 200, retryable });
    }
    this.chunks++;
    const usage = chunk.usage ?? chunk.x_groq?.usage;
    if (usage) this.usage = usage;
    // The first choice only (a vendor asked for one may send more, each by its index), and nothing of it after its finish_reason.
    const choice = this.finishReason === undefined && Array.isArray(chunk.choices) ? this.choices.read(chunk.choices) : undefined;
    if (choice) {
      const piece = textOf(choice.delta?.content);
      if (piece !== undefined) {
        this.contentSent = true;
        this.text.add(piece);
      }
      const reasoning = reasoningOf(choice.delta);
      if (reasoning !== '') this.reasoningTokens += textTokens(reasoning);
      if (typeof choice.delta?.refusal === 'string') this.refusal += choice.delta.refusal;
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    }
    if (usage && this.finishReason !== undefined) this.counted = true;
  }

  /**
   * `[DONE]` ends the stream; so does a usage chunk with the finish_reason or after it (a usage
   * chunk may follow the finish_reason), so that a vendor holding the connection open before
   * its `[DONE]` does not turn a whole answer into a timeout.
   */
  ended(): boolean {
    return this.done || this.counted;
  }

  /** The finish_reason came: its usage and [DONE] may follow. */
  stopped(): boolean {
    return this.finishReason !== undefined;
  }

  partial(): PartialReply {
    const usage = toUsage(this.usage, this.dialect);
    return { output: this.text.output, ...(usage ? { usage } : {}), hints: this.hints() };
  }

  /** The reasoning streamed, in its fields and inline (`<think>`): for a call whose usage never came. */
  private hints(): UsageHints {
    // What was received and not shown: the inline thinking (the output is a part of all of it).
    const inline = this.text.all.length > this.text.output.length ? textTokens(this.text.all) - textTokens(this.text.output) : 0;
    return { unseenOutputTokens: this.reasoningTokens + inline };
  }

  finish(): ModelReply {
    if (this.chunks === 0) throw new UpstreamError('upstream_malformed_response', 'The provider streamed no answer', { upstreamStatus: 200 });
    // Ended with only choices numbered otherwise, finished: the whole answer's failure (no message), charged the usage reported.
    if (this.choices.only) return fromChatResponse({ choices: [], usage: this.usage }, this.dialect);
    // The model's end is its finish_reason (a usage chunk may follow it); the vendor's, [DONE].
    if (this.finishReason === undefined && !this.done) throw streamEndedEarly('finish_reason');
    this.text.end();
    // The message a whole answer would have had: a refusal, its content, or no content at all (then, for a tool call, a failure as a whole one is).
    const message = this.refusal !== '' && this.text.all === '' ? { refusal: this.refusal } : { content: this.contentSent ? this.text.all : null };
    // The reasoning streamed in its fields is counted as it came; inline thinking is in the content.
    const reply = fromChatResponse({ choices: [{ message, finish_reason: this.finishReason }], usage: this.usage }, this.dialect, this.reasoningTokens);
    // The output is what was streamed: also when a `<think>` block never closed (all of it thinking).
    return { ...reply, ...('content' in message ? { output: this.text.output } : {}) };
  }
}

/**
 * An error a vendor sent inside its stream, by the words of its `code`, `type` or status: a rate
 * limit (`rate_limit_exceeded`, `rate_limit_error`, 429) or the vendor's capacity (`overloaded`,
 * `service_unavailable`, 503, 529), as its status would have said before the stream, else
 * `upstream_error`; retryable those and a server error (`server_error`, `api_error`, 5xx), while
 * none of the call's text has gone out.
 */
function streamError(error: unknown): { code: 'upstream_rate_limited' | 'upstream_overloaded' | 'upstream_error'; retryable: boolean } {
  const { code, type, status } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; type?: unknown; status?: unknown };
  const words = [code, type, status].map((word) => (typeof word === 'string' || typeof word === 'number' ? String(word).slice(0, 64).toLowerCase() : '')).join(' ');
  if (/rate_limit|\b429\b/.test(words)) return { code: 'upstream_rate_limited', retryable: true };
  if (/overloaded|service_unavailable|\b503\b|\b529\b/.test(words)) return { code: 'upstream_overloaded', retryable: true };
  return { code: 'upstream_error', retryable: /server_error|api_error|\b5\d\d\b/.test(words) };
}
