import { setTimeout as after } from 'node:timers/promises';
import type { Endpoint, ModelCall, PreparedCall } from '../types.js';
import { converseStream } from './client.js';
import { fromSdkError, fromStreamError } from './errors.js';
import { AFTER_END_MS, COUNT_WAIT_MS, finishStream, withPartial } from '../stream-http.js';
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
      // Closes the call's connection where the vendor holds it open after a whole answer.
      const whole = new AbortController();
      let started = false;
      try {
        const answer = await converseStream(input, endpoint, AbortSignal.any([signal, whole.signal]), limits);
        started = true;
        if (!answer.stream) throw new Error('The provider answered without an event stream');
        const events = answer.stream[Symbol.asyncIterator]();
        // Once messageStop came, its metadata is waited for COUNT_WAIT_MS at most (as postSse waits for an SSE answer's count).
        let graceOver: Promise<'over'> | undefined;
        for (;;) {
          const pending = events.next();
          const next = graceOver ? await Promise.race([pending, graceOver]) : await pending;
          if (next === 'over') {
            pending.catch(() => undefined);
            whole.abort();
            break;
          }
          if (next.done) break;
          reader.onEvent(next.value as Parameters<ConverseStreamReader['onEvent']>[0]);
          if (reader.ended()) {
            dropRest(events, whole);
            break;
          }
          if (!graceOver && reader.stopped()) graceOver = after(COUNT_WAIT_MS, 'over' as const, { ref: false });
        }
      } catch (error) {
        // Its connection closed with the call, not left to a vendor that holds it.
        whole.abort();
        if (!started) throw fromSdkError(error, signal);
        throw withPartial(fromStreamError(error, signal), reader.partial());
      }
      const reply = finishStream(reader);
      return { ...reply, warnings: [...warnings, ...reply.warnings] };
    },
  };
}

/**
 * Reads what a stream sends after its answer is whole, dropping it, so that its connection can
 * serve another call once the vendor ends it; a vendor that has not ended it within
 * AFTER_END_MS has it closed (it had held the call until the deadline). As SSE streams' dropRest.
 */
function dropRest(events: AsyncIterator<unknown>, whole: AbortController): void {
  const timer = setTimeout(() => whole.abort(), AFTER_END_MS);
  timer.unref();
  void (async () => {
    try {
      while (!(await events.next()).done);
    } catch {
      // Broken off, or closed: the answer was whole before; its connection goes with it.
      whole.abort();
    } finally {
      clearTimeout(timer);
    }
  })();
}
