import { UpstreamError, streamEndedEarly, type PartialReply } from '../errors.js';
import type { SseEvent } from '../sse.js';
import { eventJson } from '../stream-http.js';
import { textTokens } from '../../text/text-tokens.js';
import type { ModelReply, UsageHints } from '../types.js';
import { errorBodyToUpstreamError } from './errors.js';
import { fromMessagesResponse } from './response.js';
import { toUsage, usageHints, type AnthropicUsage } from './usage.js';

/**
 * Reads a streamed Messages answer: `message_start` (its usage: input and cache classes),
 * `content_block_delta` of type `text_delta` (the only deltas: thinking_delta and
 * signature_delta are not), `message_delta` (stop_reason and the cumulative usage: output
 * tokens, and any class it repeats), `message_stop`, without which the stream ended early
 * (a failed call); `ping` is ignored and `error` fails the call. `finish` assembles the
 * non-streamed answer for fromMessagesResponse, so usage is priced by the same code. Until
 * `message_delta` the output count is not known: usage stays undefined.
 */
export class MessagesStream {
  private text = '';
  private started = false;
  private messageStopped = false;
  private startUsage: AnthropicUsage = {};
  private finalUsage: AnthropicUsage | undefined;
  private stopReason: unknown;
  /** Thinking streamed (`thinking_delta`), as textTokens counts it: billed as output, never shown. */
  private thinkingTokens = 0;

  constructor(private readonly onDelta: (text: string) => void) {}

  onEvent(event: SseEvent): void {
    const data = eventJson(event);
    switch (data['type']) {
      case 'message_start': {
        this.started = true;
        const usage = (data['message'] as { usage?: unknown } | undefined)?.usage;
        if (typeof usage === 'object' && usage !== null) this.startUsage = usage as AnthropicUsage;
        return;
      }
      case 'content_block_delta': {
        // After the stop reason (message_delta), no more of the answer.
        if (this.stopReason !== undefined || this.messageStopped) return;
        const delta = data['delta'] as { type?: unknown; text?: unknown; thinking?: unknown } | undefined;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string') {
          this.text += delta.text;
          this.onDelta(delta.text);
        } else if (delta?.type === 'thinking_delta' && typeof delta.thinking === 'string') {
          this.thinkingTokens += textTokens(delta.thinking);
        }
        return;
      }
      case 'message_delta': {
        const delta = data['delta'] as { stop_reason?: unknown } | undefined;
        if (delta?.stop_reason !== undefined && delta.stop_reason !== null && this.stopReason === undefined) this.stopReason = delta.stop_reason;
        const usage = data['usage'];
        if (typeof usage === 'object' && usage !== null) {
          // The input classes may come from message_start; the output count only from here
          // (message_start's is a placeholder): without one, the call has no usage to believe.
          const { output_tokens: _placeholder, ...input } = this.startUsage ?? {};
          this.finalUsage = { ...input, ...withoutNulls(usage as Record<string, unknown>) };
        }
        return;
      }
      case 'message_stop':
        this.messageStopped = true;
        return;
      case 'error':
        throw errorBodyToUpstreamError(data, 200);
      default:
        return; // ping, content_block_start/stop, events added later
    }
  }

  /**
   * `message_stop` ends the stream; so does a `message_delta` that gave the stop reason and the
   * usage (only `message_stop` follows it), so that a vendor holding the connection open before
   * it does not turn a whole answer into a timeout.
   */
  ended(): boolean {
    return this.messageStopped || (typeof this.stopReason === 'string' && this.finalUsage !== undefined);
  }

  /** Whether the stop reason came (its usage and `message_stop` may follow), or `message_stop`: the answer is whole, its count aside. */
  stopped(): boolean {
    return this.messageStopped || typeof this.stopReason === 'string';
  }

  partial(): PartialReply {
    const usage = toUsage(this.finalUsage);
    return { output: this.text, ...(usage ? { usage } : {}), hints: this.hints };
  }

  /** The input `message_start` reported and the thinking streamed: for a call whose final usage never came, or cannot be true. */
  private get hints(): UsageHints {
    return usageHints(this.startUsage, this.thinkingTokens);
  }

  finish(): ModelReply {
    if (!this.started) throw new UpstreamError('upstream_malformed_response', 'The provider streamed no message', { upstreamStatus: 200 });
    // A stop reason without its usage is a whole answer that has no count (the estimate is charged), as a chat answer's finish_reason without its usage is.
    if (!this.stopped()) throw streamEndedEarly('message_stop event');
    return {
      // Its thinking streamed counts, should the usage not be believed, as a whole answer's thinking blocks do (on failure too).
      ...fromMessagesResponse(
        { type: 'message', content: this.text === '' ? [] : [{ type: 'text', text: this.text }], stop_reason: this.stopReason, usage: this.finalUsage },
        this.thinkingTokens,
      ),
      hints: this.hints,
    };
  }
}

/** message_delta may repeat a class as null where it has nothing new to say. */
function withoutNulls(usage: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(usage).filter(([, value]) => value !== null));
}
