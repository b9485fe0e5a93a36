import type { ModelCall, OutputLimits } from '../types.js';
import { dialectFor, modelListed } from './dialects.js';

/**
 * The output limit sent (max_tokens or max_completion_tokens), which counts reasoning for
 * every dialect that reports it inside completion_tokens (OpenAI, Cerebras, DeepSeek: "含思维链",
 * Mistral, Groq). xAI bills reasoning beside completion_tokens and documents no bound on it:
 * its reasoning models may bill the limit sent (the answer) plus up to the model's maximum
 * output (the reasoning).
 */
export function chatOutputBound(call: Pick<ModelCall, 'entry' | 'maxTokens' | 'tuning'>): number {
  return reasonsBeside(call) ? call.maxTokens + call.entry.maxOutputTokens : call.maxTokens;
}

/** Whether the call's model reasons beside its limit (xAI's reasoning models), reasoning it bills and does not show. */
function reasonsBeside(call: Pick<ModelCall, 'entry' | 'tuning'>): boolean {
  const dialect = dialectFor(call.entry.provider);
  const model = call.entry.upstreamModel;
  // 'none' turns reasoning off only where reasoning_effort is sent at all.
  const turnedOff = call.tuning.reasoningEffort === 'none' && modelListed(dialect.reasoningEffortModels, model);
  return dialect.unboundedReasoningModels !== undefined && modelListed(dialect.unboundedReasoningModels, model) && !turnedOff;
}

export const chatLimits: OutputLimits = { billedOutputBound: chatOutputBound, sentOutputLimit: (call) => call.maxTokens, hidesReasoning: reasonsBeside };
