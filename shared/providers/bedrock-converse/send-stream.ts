import type { ProtocolAdapter } from '../types.js';
import { converseStream, NotSentError } from './client.js';
import { fromSdkError } from './errors.js';
import { withPartial } from '../stream-http.js';
import { toConverseRequest } from './request.js';
import { ConverseStreamReader } from './stream.js';

/** One ConverseStream call: the request mapped as for Converse, its events read as they come, the SDK's errors mapped as `send` maps them. */
export const streamConverse: ProtocolAdapter['stream'] = async (call, endpoint, signal, onDelta, ready) => {
  const { input, warnings } = toConverseRequest(call, endpoint.region);
  const reader = new ConverseStreamReader(input.toolConfig !== undefined, onDelta);
  let started = false;
  try {
    const answer = await converseStream(input, endpoint, signal, ready);
    started = true;
    if (!answer.stream) throw new Error('The provider answered without an event stream');
    for await (const event of answer.stream) reader.onEvent(event as Parameters<ConverseStreamReader['onEvent']>[0]);
  } catch (error) {
    if (error instanceof NotSentError) throw error.reason;
    const failure = fromSdkError(error, signal);
    throw started ? withPartial(failure, reader.partial()) : failure;
  }
  const reply = reader.finish();
  return { ...reply, warnings: [...warnings, ...reply.warnings] };
};
