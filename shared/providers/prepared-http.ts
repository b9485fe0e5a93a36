import { UpstreamError, type PartialReply } from './errors.js';
import { jsonRequest, postJson, type ErrorMapper } from './http.js';
import type { SseEvent } from './sse.js';
import { finishStream, postSse } from './stream-http.js';
import type { ModelCall, ModelReply, PreparedCall } from './types.js';
import { DEFAULT_SSE_LIMITS, streamLineCap } from './sse.js';

/** What reads one streamed attempt: each event, what it delivered so far, and the reply once the stream ended. */
export interface StreamReader {
  onEvent(event: SseEvent): void;
  /**
   * Whether the vendor's event that ends its answer arrived (`[DONE]`, `message_stop`, a final
   * response): the answer is whole, and what follows is not read. Absent where only the
   * stream's close ends the answer.
   */
  ended?(): boolean;
  /**
   * Whether the model's answer has stopped (its finish or stop reason came), though the event
   * that ends it has not: what may follow is only its count and the vendor's end, waited for
   * COUNT_WAIT_MS at most (postSse).
   */
  stopped?(): boolean;
  partial(): PartialReply;
  finish(): ModelReply;
}

/** An HTTP vendor's call, mapped by its adapter: where it goes, its body, and how its answers read. */
export interface HttpCallShape {
  /** The call the body was built for: its prompt, sent in pieces where it has them (jsonRequest). */
  call: Pick<ModelCall, 'prompt' | 'promptPieces'>;
  url: string;
  body: object;
  headers: Record<string, string>;
  /** The warnings of mapping the call, ahead of the reply's own. */
  warnings: string[];
  /** The protocol's error mapper, when its error bodies say more than the default reads. */
  mapError?: ErrorMapper;
  /** Turns what a send threw into what the adapter throws (a protocol that refines or redacts vendor errors). */
  refine?: (error: unknown) => unknown;
  /** The non-streamed answer's JSON as a reply. */
  fromAnswer(answer: unknown): ModelReply;
  /** The most output tokens the vendor may bill for the call (its adapter's billedOutputBound): what bounds the lines of its stream (streamLineCap). */
  outputTokens: number;
  /**
   * The streamed call: its URL and body where they differ, and a fresh reader for each attempt.
   * Absent where the vendor cannot stream this call: it is then sent whole to a streaming caller
   * too, whose one delta is its text (run-models hands on a reply that streamed nothing).
   */
  stream?: { url?: string; body: object; reader(onDelta: (text: string) => void): StreamReader };
}

/**
 * The prepared call of an HTTP adapter: the JSON request, or with `onDelta` the
 * event-stream request, serialised once; each `send` posts it and reads the answer.
 */
export function preparedHttpCall(shape: HttpCallShape, onDelta?: (text: string) => void): PreparedCall {
  const { mapError, refine = (error: unknown) => error, warnings } = shape;
  const withWarnings = (reply: ModelReply): ModelReply => (warnings.length > 0 ? { ...reply, warnings: [...warnings, ...reply.warnings] } : reply);
  const { stream } = shape;
  if (!onDelta || !stream) {
    const request = jsonRequest(shape.url, shape.body, shape.headers, { prompt: shape.call });
    return {
      warnings,
      async send(signal) {
        let answer: unknown;
        try {
          answer = await postJson(request, signal, { mapError });
        } catch (error) {
          // An answer the vendor refused itself, sent back with the refusal: the answer, which the gateway checks, not a failure with nothing.
          const refused = error instanceof UpstreamError ? error.details.refusedAnswer : undefined;
          if (refused) return withWarnings(refused);
          throw refine(error);
        }
        return withWarnings(shape.fromAnswer(answer));
      },
    };
  }
  const request = jsonRequest(stream.url ?? shape.url, stream.body, shape.headers, { accept: 'text/event-stream', prompt: shape.call });
  const limits = { ...DEFAULT_SSE_LIMITS, maxLines: streamLineCap(shape.outputTokens) };
  return {
    warnings,
    async send(signal) {
      const reader = stream.reader(onDelta);
      await postSse(request, signal, {
        mapError,
        onEvent: (event) => reader.onEvent(event),
        ended: reader.ended?.bind(reader),
        stopped: reader.stopped?.bind(reader),
        partial: () => reader.partial(),
        limits,
      }).catch((error: unknown) => {
        throw refine(error);
      });
      return withWarnings(finishStream(reader));
    },
  };
}
