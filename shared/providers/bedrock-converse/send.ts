import type { ProtocolAdapter } from '../types.js';
import { converse, NotSentError } from './client.js';
import { fromSdkError } from './errors.js';
import { toConverseRequest } from './request.js';
import { fromConverseResponse } from './response.js';

/** One Converse call: the request mapped, sent through the SDK, the answer (or the SDK's error) mapped back. */
export const sendConverse: ProtocolAdapter['send'] = async (call, endpoint, signal, ready) => {
  const { input, warnings } = toConverseRequest(call, endpoint.region);
  let answer: unknown;
  try {
    answer = await converse(input, endpoint, signal, ready);
  } catch (error) {
    // Not sent because `ready` rejected: its reason, as every adapter fails then.
    throw error instanceof NotSentError ? error.reason : fromSdkError(error, signal);
  }
  const reply = fromConverseResponse(answer, input.toolConfig !== undefined);
  return { ...reply, warnings: [...warnings, ...reply.warnings] };
};
