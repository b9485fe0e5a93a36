import { toModelCall } from '../compare/model-call.js';
import type { PromptRequest } from '../contract/types.js';
import { judgeCall } from '../judging/judge-prompt.js';
import { callCostBound, inputTokenBound } from '../pricing/bound.js';
import { usdToMicroCredits, type CreditRates } from './credits.js';

/**
 * Credits a request may cost at most, before it runs: the bound of each model's call, built
 * exactly as the fan-out will send it (see callCostBound: the adapter's own billed output
 * bound, thinking and reasoning included where the vendor bills it), then the judge calls
 * the request implies.
 */
export function estimateMicroCredits(request: PromptRequest, rates: CreditRates): number {
  let micro = estimateJudgingMicroCredits(request, rates);
  for (const model of request.models) micro += usdToMicroCredits(callCostBound(toModelCall(request, model).call).usd, rates);
  return micro;
}

/**
 * The judge calls at most: judges x n(n-1) for the n requested models (every pair, both
 * orders, as if every model completed). Each call's input is what the judge is shown (the
 * instructions, the verdict schema, the prompt, system prompt and conversation) plus both
 * contestants' whole output allowances; its output is the judge's billed output bound.
 */
export function estimateJudgingMicroCredits(request: PromptRequest, rates: CreditRates): number {
  if (request.judges.length === 0 || request.models.length < 2) return 0;
  const answerAllowances = request.models.map((model) => toModelCall(request, model).call.maxTokens);
  let micro = 0;
  for (const judge of request.judges) {
    // The judge's own share: everything but the two answers.
    const call = judgeCall(request, judge, '', '');
    const frame = inputTokenBound(call);
    for (let i = 0; i < answerAllowances.length; i++) {
      for (let j = 0; j < answerAllowances.length; j++) {
        if (i === j) continue;
        micro += usdToMicroCredits(callCostBound(call, frame + (answerAllowances[i] as number) + (answerAllowances[j] as number)).usd, rates);
      }
    }
  }
  return micro;
}
