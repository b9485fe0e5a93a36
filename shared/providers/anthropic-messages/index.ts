import type { ProtocolAdapter } from '../types.js';
import { refineUpstreamError } from './errors.js';
import { preparedHttpCall } from '../prepared-http.js';
import { MessagesStream } from './stream.js';
import { toMessagesRequest } from './request.js';
import { fromMessagesResponse } from './response.js';
import { anthropicLimits } from './limits.js';
import { anthropicOutputBound } from './thinking.js';

export { anthropicOutputBound };

/** The Messages API version every request pins. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic Messages API: `POST {baseUrl}/messages`, one attempt per call. */
export const anthropicMessages: ProtocolAdapter = {
  prepare(call, endpoint, onDelta) {
    const { body, warnings } = toMessagesRequest(call);
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (endpoint.apiKey) headers['x-api-key'] = endpoint.apiKey;
    return preparedHttpCall(
      {
        call,
        outputTokens: anthropicLimits.billedOutputBound(call),
        url: `${endpoint.baseUrl}/messages`,
        body,
        headers,
        warnings,
        refine: refineUpstreamError,
        fromAnswer: fromMessagesResponse,
        stream: { body: { ...body, stream: true }, reader: (onText) => new MessagesStream(onText) },
      },
      onDelta,
    );
  },
  ...anthropicLimits,
};
