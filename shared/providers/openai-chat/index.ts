import type { ProtocolAdapter } from '../types.js';
import { dialectFor } from './dialects.js';
import { toChatRequest } from './request.js';
import { fromChatResponse } from './response.js';
import { postJson } from '../http.js';
import { fromErrorResponse } from './errors.js';

export { dialectFor } from './dialects.js';
export type { ChatDialect } from './dialects.js';

/** OpenAI-compatible chat completions: xAI, Cerebras, DeepSeek, Mistral, Groq, each in its dialect. One attempt per call. */
export const openaiChat: ProtocolAdapter = {
  async send(call, endpoint, signal, ready) {
    const dialect = dialectFor(call.entry.provider);
    const { body, warnings } = toChatRequest(call, dialect);
    const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
    // Dialect error mapping keeps Mistral's validation details and knows Groq's 498.
    const answer = await postJson(`${endpoint.baseUrl}/chat/completions`, body, headers, signal, {
      mapError: (status, text, retryAfter) => fromErrorResponse(dialect, status, text, retryAfter),
      ready,
    });
    const reply = fromChatResponse(answer, dialect);
    return { ...reply, warnings: [...warnings, ...reply.warnings] };
  },
};
