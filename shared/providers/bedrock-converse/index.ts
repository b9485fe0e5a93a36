import type { ProtocolAdapter } from '../types.js';

/**
 * Amazon Bedrock Converse (the Nova models), through @aws-sdk/client-bedrock-runtime. The
 * mapping and the SDK load on the first Bedrock call: a cold start that serves none parses neither.
 */
export const bedrockConverse: ProtocolAdapter = {
  async send(call, endpoint, signal) {
    const { sendConverse } = await import('./send.js');
    return sendConverse(call, endpoint, signal);
  },
};
