import type { Endpoint, ModelCall, PreparedCall } from '../types.js';
import { converseStream } from './client.js';
import { fromSdkError, fromStreamError } from './errors.js';
import { finishStream, withPartial } from '../stream-http.js';
import { toConverseRequest } from './request.js';
import { ConverseStreamReader } from './stream.js';
import { converseLimits } from './limits.js';
import { DEFAULT_SSE_LIMITS, streamLineCap } from '../sse.js';

/** One ConverseStream call: the request mapped once as for Converse; each send reads its events as they come, the SDK's errors mapped as Converse's are. */
export function prepareConverseStream(call: ModelCall, endpoint: Endpoint, onDelta: (text: string) => void): PreparedCall {
  const { input, warnings } = toConverseRequest(call, endpoint.region);
  // As an SSE vendor's stream (prepared-http.ts): its messages capped as their lines are, by the output it may bill.
  const limits = { ...DEFAULT_SSE_LIMITS, maxMessages: streamLineCap(converseLimits.billedOutputBound(call)) };
  return {
    warnings,
    async send(signal) {
      const reader = new ConverseStreamReader(input.toolConfig !== undefined, onDelta);
      // Stops the call's connection once its answer is whole (the vendor's signal aside).
      const whole = new AbortController();
      let started = false;
      try {
        const answer = await converseStream(input, endpoint, AbortSignal.any([signal, whole.signal]), limits);
        started = true;
        if (!answer.stream) throw new Error('The provider answered without an event stream');
        for await (const event of answer.stream) {
          reader.onEvent(event as Parameters<ConverseStreamReader['onEvent']>[0]);
          if (reader.ended()) break;
        }
      } catch (error) {
        if (!started) throw fromSdkError(error, signal);
        throw withPartial(fromStreamError(error, signal), reader.partial());
      } finally {
        // A vendor that holds the connection open after its last event: closed, not left to it.
        whole.abort();
      }
      const reply = finishStream(reader);
      return { ...reply, warnings: [...warnings, ...reply.warnings] };
    },
  };
}
