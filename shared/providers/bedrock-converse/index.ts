import { lazyAsync } from '../../lazy.js';
import type { ProtocolAdapter } from '../types.js';

const loadSend = lazyAsync(() => import('./send.js'));
const loadStream = lazyAsync(() => import('./send-stream.js'));

/**
 * Amazon Bedrock Converse (the Nova models), through @aws-sdk/client-bedrock-runtime. The
 * mapping and the SDK load on the first Bedrock call: a cold start that serves none parses neither.
 */
export const bedrockConverse: ProtocolAdapter = {
  async send(call, endpoint, signal, ready) {
    // Heard at once, so that a refusal while the SDK loads is never an unhandled rejection; the send rethrows it.
    ready?.catch(() => undefined);
    const { sendConverse } = await loadSend();
    return sendConverse(call, endpoint, signal, ready);
  },
  async stream(call, endpoint, signal, onDelta, ready) {
    ready?.catch(() => undefined);
    const { streamConverse } = await loadStream();
    return streamConverse(call, endpoint, signal, onDelta, ready);
  },
  // inferenceConfig.maxTokens bounds the output; the Nova models of the catalog do not reason.
  billedOutputBound: (call) => call.maxTokens,
  sentOutputLimit: (call) => call.maxTokens,
};
