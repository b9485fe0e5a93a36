import type { ModelCall, OutputLimits } from '../types.js';
import { reasonsAsCalled } from './sampling.js';

/** The Responses API refuses `max_output_tokens` below 16 (400 integer_below_min_value). */
export const MIN_OUTPUT_TOKENS = 16;

/**
 * `max_output_tokens` as sent: the call's limit, raised to the API's minimum. It bounds
 * "visible output tokens and reasoning tokens" together (Responses API reference), so it is
 * also the most output a call can bill.
 */
export function responsesOutputLimit(call: Pick<ModelCall, 'maxTokens'>): number {
  return Math.max(call.maxTokens, MIN_OUTPUT_TOKENS);
}

/** A call that reasons (sampling.ts) reasons unseen: the API returns no reasoning text, only its count in the usage. */
function hidesReasoning(call: Pick<ModelCall, 'entry' | 'tuning'>): boolean {
  return reasonsAsCalled(call.entry.upstreamModel, call.tuning);
}

export const responsesLimits: OutputLimits = { billedOutputBound: responsesOutputLimit, sentOutputLimit: responsesOutputLimit, hidesReasoning };
