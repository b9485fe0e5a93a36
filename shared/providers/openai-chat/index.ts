import type { ProtocolAdapter } from '../types.js';
import { chatLimits } from './limits.js';
import { dialectFor } from './dialects.js';
import { toChatRequest } from './request.js';
import { fromChatResponse } from './response.js';
import { fromErrorResponse } from './errors.js';
import { preparedHttpCall } from '../prepared-http.js';
import { ChatStream } from './stream.js';
import { PROVIDER_NAMES } from '../../catalog/types.js';

export { dialectFor } from './dialects.js';
export type { ChatDialect } from './dialects.js';

/** OpenAI-compatible chat completions: xAI, Cerebras, DeepSeek, Mistral, Groq, each in its dialect. One attempt per send. */
export const openaiChat: ProtocolAdapter = {
  prepare(call, endpoint, onDelta) {
    const dialect = dialectFor(call.entry.provider);
    const { body, warnings } = toChatRequest(call, dialect);
    const schemaCall = body.response_format !== undefined;
    const whole = dialect.wholeSchemaCalls === true && schemaCall;
    if (whole && onDelta) warnings.push(`${PROVIDER_NAMES[dialect.id]} does not stream structured output: ${call.entry.id}'s answer was read whole, not streamed`);
    return preparedHttpCall(
      {
        call,
        outputTokens: chatLimits.billedOutputBound(call),
        url: `${endpoint.baseUrl}/chat/completions`,
        body,
        headers: endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {},
        warnings,
        // Dialect error mapping keeps Mistral's validation details and knows Groq's 498.
        mapError: (status, text, retryAfter) => fromErrorResponse(dialect, status, text, retryAfter, { schemaCall }),
        fromAnswer: (answer) => fromChatResponse(answer, dialect),
        stream: whole
          ? undefined
          : {
              body: { ...body, stream: true, ...(dialect.streamUsageOption ? { stream_options: { include_usage: true } } : {}) },
              reader: (onText) => new ChatStream(dialect, onText),
            },
      },
      onDelta,
    );
  },
  ...chatLimits,
};
