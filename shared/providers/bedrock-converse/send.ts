import type { Endpoint, ModelCall, PreparedCall } from '../types.js';
import { converse } from './client.js';
import { fromSdkError } from './errors.js';
import { toConverseRequest } from './request.js';
import { fromConverseResponse } from './response.js';

/** One Converse call: the request mapped once; each send goes through the SDK, the answer (or the SDK's error) mapped back. */
export function prepareConverse(call: ModelCall, endpoint: Endpoint): PreparedCall {
  const { input, warnings } = toConverseRequest(call, endpoint.region);
  return {
    warnings,
    async send(signal) {
      let answer: unknown;
      try {
        answer = await converse(input, endpoint, signal);
      } catch (error) {
        throw fromSdkError(error, signal);
      }
      const reply = fromConverseResponse(answer, input.toolConfig !== undefined);
      return { ...reply, warnings: [...warnings, ...reply.warnings] };
    },
  };
}
