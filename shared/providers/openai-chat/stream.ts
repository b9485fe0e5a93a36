import { UpstreamError, streamEndedEarly, type PartialReply } from '../errors.js';
import type { SseEvent } from '../sse.js';
import { eventJson } from '../stream-http.js';
import type { ModelReply } from '../types.js';
import type { ChatDialect } from './dialects.js';
import { vendorMessage } from './errors.js';
import { InlineThinkingFilter } from './inline-thinking.js';
import { fromChatResponse, textOf } from './response.js';
import { toUsage, type ChatUsage } from './usage.js';

interface ChatChunk {
  choices?: { delta?: { content?: unknown; refusal?: unknown } | null; finish_reason?: unknown }[] | null;
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
      throw new UpstreamError('upstream_error', vendorMessage(chunk) ?? 'The provider reported an error in the stream', { upstreamStatus: 200 });
    }
    this.chunks++;
    const usage = chunk.usage ?? chunk.x_groq?.usage;
    if (usage) this.usage = usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!choice) return;
    const piece = textOf(choice.delta?.content);
    if (piece !== undefined) this.text.add(piece);
    if (typeof choice.delta?.refusal === 'string') this.refusal += choice.delta.refusal;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finishReason = choice.finish_reason;
  }

  partial(): PartialReply {
    const usage = toUsage(this.usage, this.dialect);
    return usage ? { output: this.text.output, usage } : { output: this.text.output };
  }

  finish(): ModelReply {
    if (this.chunks === 0) throw new UpstreamError('upstream_malformed_response', 'The provider streamed no answer', { upstreamStatus: 200 });
    // The model's end is its finish_reason (a usage chunk may follow it); the vendor's, [DONE].
    if (this.finishReason === undefined && !this.done) throw streamEndedEarly('finish_reason');
    const message = this.refusal !== '' && this.text.all === '' ? { refusal: this.refusal } : { content: this.text.all };
    const reply = fromChatResponse({ choices: [{ message, finish_reason: this.finishReason }], usage: this.usage }, this.dialect);
    // The output is what was streamed: also when a `<think>` block never closed (all of it thinking).
    return 'content' in message ? { ...reply, output: this.text.output } : reply;
  }
}
