import { planCall, type PlannedCall } from '../compare/model-call.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { answerAllowance, judgePairBound } from '../judging/judge-prompt.js';
import { callCostBound, modelInputTokens, textInputBound, type CostBound } from '../pricing/bound.js';

/** A model's call as the request plans it, with the most it can cost. */
export interface BoundedCall extends PlannedCall {
  bound: CostBound;
}

/** One judge's share of a judged request: its call (the answers left out) and the bound of each call it may make. */
export interface PlannedJudge {
  judge: RequestedModel;
  /** One bound per ordered pair of models (n(n-1) of them), each answer at the longest its model can give. */
  bounds: CostBound[];
}

/**
 * Every upstream call of a request, built once, before anything runs: the models' calls
 * (the fan-out sends exactly these; the estimate reserves their bounds) and, for a judged
 * request, what each judge's calls may cost. The judge calls themselves are built where
 * they run (the workflow's judge task), once the answers they compare exist.
 */
export interface RequestPlan {
  /** One per model, in request order. */
  calls: BoundedCall[];
  /**
   * About what the models' request bodies come to together: the request's text (its bytes)
   * and attachments (their base64), once for each model. What preparing them all costs.
   */
  bodyBytes: number;
  /** One per judge; empty for an unjudged request (or one with fewer than two models). */
  judges: PlannedJudge[];
}

export function planRequest(request: PromptRequest): RequestPlan {
  // Every model is sent the same text (prompt, system, history, schema): counted once; its
  // attachments, and what its vendor adds, count by model.
  let textTokens: number | undefined;
  const calls = request.models.map((model) => {
    const planned = planCall(request, model);
    textTokens ??= textInputBound(planned.call);
    return { ...planned, bound: callCostBound(planned.call, textTokens + modelInputTokens(planned.call)) };
  });
  // The text's bound is its bytes (textTokenBound), plus a few tokens a turn.
  let attachmentChars = 0;
  for (const attachment of request.body.attachments ?? []) attachmentChars += attachment.base64.length;
  return { calls, judges: planJudges(request, calls), bodyBytes: calls.length * ((textTokens ?? 0) + attachmentChars) };
}

/**
 * The judge calls at most: judges x n(n-1) for the n requested models (every pair, both
 * orders, as if every model completed). Each call's input is what the judge is shown (the
 * instructions, the verdict schema, the prompt, system prompt and conversation) plus the
 * longest answer each contestant can give; its output is the judge's billed output bound.
 */
function planJudges(request: PromptRequest, calls: readonly PlannedCall[]): PlannedJudge[] {
  if (calls.length < 2) return [];
  const answerAllowances = calls.map(({ call }) => answerAllowance(call));
  return request.judges.map((judge) => {
    const bounds: CostBound[] = [];
    for (let i = 0; i < answerAllowances.length; i++) {
      for (let j = 0; j < answerAllowances.length; j++) {
        if (i !== j) bounds.push(judgePairBound(request, judge, answerAllowances[i] as number, answerAllowances[j] as number));
      }
    }
    return { judge, bounds };
  });
}
