import { UpstreamError, streamEndedEarly, type PartialReply } from '../errors.js';
import type { SseEvent } from '../sse.js';
import { eventJson } from '../stream-http.js';
import type { ModelReply } from '../types.js';
import { fromResponsesResponse, reportedFailure } from './response.js';
import { toUsage, type ResponsesUsage } from './usage.js';

/** The events whose `response` is the whole answer, usage included. */
const FINAL: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Reads a streamed Responses answer: `response.output_text.delta` pieces become deltas
 * (reasoning summary and other events never do); `response.completed` / `incomplete` /
 * `failed` carry the whole response, which fromResponsesResponse maps as it maps a
 * non-streamed one (so usage is priced by the same code); an `error` event fails the call.
 * The first final event ends the answer, and a stream without one ended early (a failed call): whatever follows it (more deltas, a second final
 * response) is not read. Once text was streamed, it is the output (the final response's
 * own copy may differ), so that the deltas joined are the result's output.
 */
export class ResponsesStream {
  private text = '';
  private final: unknown;
  private finished = false;
  private events = 0;

  constructor(private readonly onDelta: (text: string) => void) {}

  onEvent(event: SseEvent): void {
    if (this.finished) return;
    const data = eventJson(event);
    this.events++;
    const type = typeof data['type'] === 'string' ? data['type'] : event.event;
    if (type === 'response.output_text.delta') {
      // A delta without text is no text, as a whole answer's part without text is (it had failed the call, free, where the whole answer was charged).
      if (typeof data['delta'] !== 'string') return;
      this.text += data['delta'];
      this.onDelta(data['delta']);
    } else if (FINAL.has(type)) {
      this.finished = true;
      this.final = data['response'];
    } else if (type === 'error') {
      // Flat, as the reference shows it, or nested under `error`, as it is also sent.
      const nested = typeof data['error'] === 'object' && data['error'] !== null ? (data['error'] as Record<string, unknown>) : {};
      throw reportedFailure(nested['code'] ?? data['code'], nested['message'] ?? data['message'], 'The provider reported an error in the stream', { upstreamStatus: 200 });
    }
  }

  ended(): boolean {
    return this.finished;
  }

  /**
   * The text so far, with the final response's usage where it came: read alone, since the
   * partial is asked for when the call failed (its stream broke off after the final event, a
   * `failed` response), where mapping the whole response would throw in place of that failure.
   */
  partial(): PartialReply {
    const final = typeof this.final === 'object' && this.final !== null ? (this.final as { usage?: ResponsesUsage | null }) : {};
    const usage = toUsage(final.usage);
    return usage ? { output: this.text, usage } : { output: this.text };
  }

  /** The reply; a stream that ended before its final event failed. */
  finish(): ModelReply {
    if (this.events === 0) throw new UpstreamError('upstream_malformed_response', 'The provider streamed no answer', { upstreamStatus: 200 });
    if (!this.finished) throw streamEndedEarly('response.completed event');
    // A final event without its response: the text streamed, without usage.
    return fromResponsesResponse(this.final ?? { status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: this.text }] }] }, this.text);
  }
}
