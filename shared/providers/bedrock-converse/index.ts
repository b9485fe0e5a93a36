import { lazyAsync } from '../../lazy.js';
import type { PreparedCall, ProtocolAdapter } from '../types.js';

const loadSend = lazyAsync(() => import('./send.js'));
const loadStream = lazyAsync(() => import('./send-stream.js'));

/**
 * Amazon Bedrock Converse (the Nova models), through @aws-sdk/client-bedrock-runtime. The
 * mapping and the SDK load on the first Bedrock call: a cold start that serves none parses
 * neither. The call is mapped as soon as its module has loaded; the SDK signs each attempt
 * as it sends it.
 */
export const bedrockConverse: ProtocolAdapter = {
  prepare(call, endpoint, onDelta) {
    const prepared: Promise<PreparedCall> = onDelta
      ? loadStream().then(({ prepareConverseStream }) => prepareConverseStream(call, endpoint, onDelta))
      : loadSend().then(({ prepareConverse }) => prepareConverse(call, endpoint));
    // Heard at once, so that a call never sent leaves no unhandled rejection; `send` rethrows it.
    prepared.catch(() => undefined);
    return { send: async (signal) => (await prepared).send(signal) };
  },
  // inferenceConfig.maxTokens bounds the output; the Nova models of the catalog do not reason.
  billedOutputBound: (call) => call.maxTokens,
  sentOutputLimit: (call) => call.maxTokens,
};
