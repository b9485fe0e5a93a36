import type { ProtocolAdapter } from '../types.js';
import { converse } from './client.js';
import { fromSdkError } from './errors.js';
import { toConverseRequest } from './request.js';
import { fromConverseResponse } from './response.js';

/** One Converse call: the request mapped, sent through the SDK, the answer (or the SDK's error) mapped back. */
export const sendConverse: ProtocolAdapter['send'] = async (call, endpoint, signal, ready) => {
  const { input, warnings } = toConverseRequest(call);
  let answer: unknown;
  try {
    answer = await converse(input, endpoint, signal, ready);
  } catch (error) {
    throw fromSdkError(error, signal);
  }
  const reply = fromConverseResponse(answer, input.toolConfig !== undefined);
  return { ...reply, warnings: [...warnings, ...reply.warnings] };
};
