import type { ModelCall, ProtocolAdapter } from '../types.js';
import { dialectFor, modelListed } from './dialects.js';
import { toChatRequest } from './request.js';
import { fromChatResponse } from './response.js';
import { fromErrorResponse } from './errors.js';
import { preparedHttpCall } from '../prepared-http.js';
import { ChatStream } from './stream.js';

export { dialectFor } from './dialects.js';
export type { ChatDialect } from './dialects.js';

/** OpenAI-compatible chat completions: xAI, Cerebras, DeepSeek, Mistral, Groq, each in its dialect. One attempt per send. */
export const openaiChat: ProtocolAdapter = {
  prepare(call, endpoint, onDelta) {
    const dialect = dialectFor(call.entry.provider);
    const { body, warnings } = toChatRequest(call, dialect);
    return preparedHttpCall(
      {
        url: `${endpoint.baseUrl}/chat/completions`,
        body,
        headers: endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {},
        warnings,
        // Dialect error mapping keeps Mistral's validation details and knows Groq's 498.
        mapError: (status, text, retryAfter) => fromErrorResponse(dialect, status, text, retryAfter),
        fromAnswer: (answer) => fromChatResponse(answer, dialect),
        stream: {
          body: { ...body, stream: true, ...(dialect.streamUsageOption ? { stream_options: { include_usage: true } } : {}) },
          reader: (onText) => new ChatStream(dialect, onText),
        },
      },
      onDelta,
    );
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
