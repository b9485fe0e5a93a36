import { postJson } from '../http.js';
import type { ProtocolAdapter } from '../types.js';
import { toChatRequest } from './request.js';
import { fromChatResponse } from './response.js';

/** OpenAI-compatible chat completions: xAI, Cerebras, DeepSeek, Mistral, Groq. */
export const openaiChat: ProtocolAdapter = {
  async send(call, endpoint, signal) {
    const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
    const body = await postJson(`${endpoint.baseUrl}/chat/completions`, toChatRequest(call), headers, signal);
    return fromChatResponse(body);
  },
};
