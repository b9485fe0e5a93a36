import type { ModelCall, ProtocolAdapter } from '../types.js';
import { dialectFor, modelListed } from './dialects.js';
import { toChatRequest } from './request.js';
import { fromChatResponse } from './response.js';
import { postJson } from '../http.js';
import { fromErrorResponse } from './errors.js';
import { postSse } from '../stream-http.js';
import { ChatStream } from './stream.js';

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
  async stream(call, endpoint, signal, onDelta, ready) {
    const dialect = dialectFor(call.entry.provider);
    const { body, warnings } = toChatRequest(call, dialect);
    body.stream = true;
    if (dialect.streamUsageOption) body.stream_options = { include_usage: true };
    const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
    const reader = new ChatStream(dialect, onDelta);
    await postSse(`${endpoint.baseUrl}/chat/completions`, body, headers, signal, {
      mapError: (status, text, retryAfter) => fromErrorResponse(dialect, status, text, retryAfter),
      ready,
      onEvent: (event) => reader.onEvent(event),
      partial: () => reader.partial(),
    });
    const reply = reader.finish();
    return { ...reply, warnings: [...warnings, ...reply.warnings] };
  },
  billedOutputBound: chatOutputBound,
  sentOutputLimit: (call) => call.maxTokens,
};

/**
 * The output limit sent (max_tokens or max_completion_tokens), which counts reasoning for
 * every dialect that reports it inside completion_tokens (OpenAI, Cerebras, DeepSeek: "含思维链",
 * Mistral, Groq). xAI bills reasoning beside completion_tokens and documents no bound on it:
 * its reasoning models may bill up to the model's maximum output.
 */
export function chatOutputBound(call: Pick<ModelCall, 'entry' | 'maxTokens' | 'tuning'>): number {
  const dialect = dialectFor(call.entry.provider);
  const model = call.entry.upstreamModel;
  // 'none' turns reasoning off only where reasoning_effort is sent at all.
  const turnedOff = call.tuning.reasoningEffort === 'none' && modelListed(dialect.reasoningEffortModels, model);
  const reasons = dialect.unboundedReasoningModels !== undefined && modelListed(dialect.unboundedReasoningModels, model) && !turnedOff;
  return reasons ? Math.max(call.maxTokens, call.entry.maxOutputTokens) : call.maxTokens;
}
