import { toModelCall } from '../compare/model-call.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { judgeCall } from '../judging/judge-prompt.js';
import { callCostBound, inputTokenBound } from '../pricing/bound.js';
import { ADAPTERS } from '../providers/adapters.js';
import type { ModelCall } from '../providers/types.js';
import { usdToMicroCredits, type CreditRates } from './credits.js';

/**
 * Credits a request may cost at most, before it runs: the bound of each model's call, built
 * exactly as the fan-out will send it (see callCostBound: the adapter's own billed output
 * bound, thinking and reasoning included where the vendor bills it), then the judge calls
 * the request implies.
 */
export function estimateMicroCredits(request: PromptRequest, rates: CreditRates): number {
  return estimateBreakdown(request, rates).micro;
}

/** What the estimate is made of: each model's call (its output bound drives it) and the judge calls. */
export interface EstimateBreakdown {
  micro: number;
  models: { modelId: string; micro: number; outputTokens: number }[];
  judgeCalls: { calls: number; micro: number };
}

export function estimateBreakdown(request: PromptRequest, rates: CreditRates): EstimateBreakdown {
  // Each model's call built once, for its own bound and for what the judges are shown of it.
  const calls = modelCalls(request);
  const models = calls.map((call, i) => {
    const bound = callCostBound(call);
    return { modelId: (request.models[i] as RequestedModel).requestedId, micro: usdToMicroCredits(bound.usd, rates), outputTokens: bound.outputTokens };
  });
  const judging = { calls: judgeCallCount(request), micro: estimateJudgingMicroCredits(request, rates, calls) };
  return { micro: models.reduce((sum, m) => sum + m.micro, judging.micro), models, judgeCalls: judging };
}

function modelCalls(request: PromptRequest): ModelCall[] {
  return request.models.map((model) => toModelCall(request, model).call);
}

/** Judge calls the request may make: judges x n(n-1) for its n models. */
function judgeCallCount(request: PromptRequest): number {
  const n = request.models.length;
  return n < 2 ? 0 : request.judges.length * n * (n - 1);
}

/**
 * The judge calls at most: judges x n(n-1) for the n requested models (every pair, both
 * orders, as if every model completed). Each call's input is what the judge is shown (the
 * instructions, the verdict schema, the prompt, system prompt and conversation) plus the
 * longest answer each contestant can give; its output is the judge's billed output bound.
 */
export function estimateJudgingMicroCredits(request: PromptRequest, rates: CreditRates, calls: readonly ModelCall[] = modelCalls(request)): number {
  if (request.judges.length === 0 || request.models.length < 2) return 0;
  // The longest answer each model can give: the limit its adapter sends (Anthropic's includes the thinking budget, which a brief thought leaves to the answer).
  const answerAllowances = calls.map((call) => ADAPTERS[call.entry.protocol].sentOutputLimit(call));
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
