import type { RequestPlan } from '../plan/request-plan.js';
import { usdToMicroCreditsUp, type CreditRates } from './credits.js';

/** What the estimate is made of: each model's call (its output bound drives it) and the judge calls. */
export interface EstimateBreakdown {
  micro: number;
  models: { modelId: string; micro: number }[];
  judgeCalls: { calls: number; micro: number };
}

/**
 * Credits a request may cost at most, before it runs, read from its plan: the bound of each
 * model's call, exactly as the fan-out will send it (see callCostBound: the adapter's own
 * billed output bound, thinking and reasoning included where the vendor bills it), then the
 * bound of every judge call the request implies.
 */
export function estimateBreakdown(plan: RequestPlan, rates: CreditRates): EstimateBreakdown {
  const models = plan.calls.map(({ model, bound }) => ({ modelId: model.requestedId, micro: usdToMicroCreditsUp(bound.usd, rates) }));
  const judgeBounds = plan.judges.flatMap((judge) => judge.bounds);
  const judgeCalls = { calls: judgeBounds.length, micro: judgeBounds.reduce((sum, bound) => sum + usdToMicroCreditsUp(bound.usd, rates), 0) };
  return { micro: models.reduce((sum, m) => sum + m.micro, judgeCalls.micro), models, judgeCalls };
}
