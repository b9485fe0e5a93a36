import { postJson } from '../http.js';
import type { ProtocolAdapter } from '../types.js';
import { refineUpstreamError } from './errors.js';
import { postSse } from '../stream-http.js';
import { MessagesStream } from './stream.js';
import { toMessagesRequest } from './request.js';
import { fromMessagesResponse } from './response.js';
import { anthropicOutputBound } from './thinking.js';

export { anthropicOutputBound };

/** The Messages API version every request pins. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic Messages API: `POST {baseUrl}/messages`, one attempt per call. */
export const anthropicMessages: ProtocolAdapter = {
  async send(call, endpoint, signal, ready) {
    const { body, warnings } = toMessagesRequest(call);
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (endpoint.apiKey) headers['x-api-key'] = endpoint.apiKey;
    let answer: unknown;
    try {
      answer = await postJson(`${endpoint.baseUrl}/messages`, body, headers, signal, { ready });
    } catch (error) {
      throw refineUpstreamError(error);
    }
    const reply = fromMessagesResponse(answer);
    return { ...reply, warnings: [...warnings, ...reply.warnings] };
  },
  async stream(call, endpoint, signal, onDelta, ready) {
    const { body, warnings } = toMessagesRequest(call);
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (endpoint.apiKey) headers['x-api-key'] = endpoint.apiKey;
    const reader = new MessagesStream(onDelta);
    try {
      await postSse(`${endpoint.baseUrl}/messages`, { ...body, stream: true }, headers, signal, {
        ready,
        onEvent: (event) => reader.onEvent(event),
        partial: () => reader.partial(),
      });
    } catch (error) {
      throw refineUpstreamError(error);
    }
    const reply = reader.finish();
    return { ...reply, warnings: [...warnings, ...reply.warnings] };
  },
  billedOutputBound: anthropicOutputBound,
  sentOutputLimit: anthropicOutputBound,
};
