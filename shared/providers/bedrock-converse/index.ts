import type { ProtocolAdapter } from '../types.js';
import { converseLimits } from './limits.js';
import { prepareConverseStream } from './send-stream.js';
import { prepareConverse } from './send.js';

/**
 * Amazon Bedrock Converse (the Nova models), through @aws-sdk/client-bedrock-runtime, which
 * loads with the first call (client.ts); the SDK signs each attempt as it sends it.
 */
export const bedrockConverse: ProtocolAdapter = {
  prepare: (call, endpoint, onDelta) => (onDelta ? prepareConverseStream(call, endpoint, onDelta) : prepareConverse(call, endpoint)),
  ...converseLimits,
};
