import type { ProtocolAdapter } from '../types.js';
import { converse } from './client.js';
import { fromSdkError } from './errors.js';
import { toConverseRequest } from './request.js';
import { fromConverseResponse } from './response.js';

/** Amazon Bedrock Converse (the Nova models), through @aws-sdk/client-bedrock-runtime. */
export const bedrockConverse: ProtocolAdapter = {
  async send(call, endpoint, signal) {
    const { input, warnings } = toConverseRequest(call);
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
