import type { ModelCall } from '../types.js';
import { acceptsOnlyAdaptiveThinking } from './models.js';

/** Anthropic's smallest `budget_tokens`. */
export const MIN_THINKING_BUDGET = 1024;

export type ThinkingConfig = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' };

/** `output_config.effort`: how much an adaptive model thinks (and writes). Anthropic's default is `high`; `max` is not sent. */
export type Effort = 'low' | 'medium' | 'high' | 'xhigh';

/** The effort a budget stands for: up to 1,024 a little, up to 8,192 a fair amount, up to 16,384 a lot, more still more (as Gemini's levels read a budget). */
export function effortForBudget(budget: number): Effort {
  if (budget <= 1024) return 'low';
  if (budget <= 8192) return 'medium';
  if (budget <= 16_384) return 'high';
  return 'xhigh';
}

export interface ThinkingPlan {
  /** `max_tokens` to send: the answer's allowance plus the thinking budget, within the model's maximum. */
  maxTokens: number;
  /** Absent when thinking stays off. */
  thinking?: ThinkingConfig;
  /** With adaptive thinking: the effort the budget stands for. */
  effort?: Effort;
  warnings: string[];
}

type AllowanceInput = Pick<ModelCall, 'entry' | 'maxTokens' | 'tuning'>;

/**
 * Extended thinking for a call. With Anthropic, `max_tokens` bounds thinking and answer
 * together, so the budget is added on top of the answer's own allowance (capped at the
 * model's maximum); when the cap leaves no room above the budget, the budget gives way.
 */
export function planThinking(call: AllowanceInput): ThinkingPlan {
  const requested = call.tuning.thinkingBudget ?? 0;
  if (requested <= 0) return { maxTokens: call.maxTokens, warnings: [] };
  const { entry } = call;
  if (!entry.capabilities.tuning.thinkingBudget) {
    return { maxTokens: call.maxTokens, warnings: [`${entry.id} has no extended thinking; thinkingBudget was not sent`] };
  }
  const maxTokens = Math.min(call.maxTokens + requested, entry.maxOutputTokens);
  const capped = maxTokens < call.maxTokens + requested;

  if (acceptsOnlyAdaptiveThinking(entry.upstreamModel)) {
    // No token budget: the effort it stands for, and room for it in max_tokens.
    const effort = effortForBudget(requested);
    return {
      maxTokens,
      thinking: { type: 'adaptive' },
      effort,
      warnings: [
        `${entry.id} takes an effort, not a thinking budget: thinkingBudget ${requested} was sent as effort '${effort}', the model deciding how much to think within max_tokens ${maxTokens}`,
      ],
    };
  }

  if (maxTokens <= requested) {
    const budget = Math.max(MIN_THINKING_BUDGET, maxTokens - MIN_THINKING_BUDGET);
    if (budget >= maxTokens) {
      return {
        maxTokens,
        warnings: [`${entry.id} allows ${maxTokens} output tokens, too few for the minimum thinking budget of ${MIN_THINKING_BUDGET}: thinking was not enabled`],
      };
    }
    return {
      maxTokens,
      thinking: { type: 'enabled', budget_tokens: budget },
      warnings: [`thinkingBudget lowered from ${requested} to ${budget}: ${entry.id} allows ${entry.maxOutputTokens} output tokens, thinking included`],
    };
  }
  const warnings = capped ? [`max_tokens capped at ${entry.id}'s maximum of ${maxTokens}: thinking (up to ${requested}) and the answer share it`] : [];
  return { maxTokens, thinking: { type: 'enabled', budget_tokens: requested }, warnings };
}

/**
 * The most output tokens an Anthropic call can bill: the `max_tokens` the adapter sends,
 * which bounds thinking and answer together (extended-thinking docs: "max_tokens is a strict
 * limit" that includes the thinking budget). Not the bare `maxTokens`.
 */
export function anthropicOutputBound(call: AllowanceInput): number {
  return planThinking(call).maxTokens;
}
