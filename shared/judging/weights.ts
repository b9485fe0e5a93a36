import type { JudgeWeights } from '../contract/types.js';

/** What the weights of one pair are computed from, for each of its two models. */
export interface Contestant {
  /** The judge's verdict for this model, both orders together (the position-swap rule): 1 won, 0.5 tie, 0 lost. */
  verdict: number;
  /** The judge's score of this model (1 to 10), the mean of both orders. */
  score: number;
  latencyMs: number;
  /** USD from the usage its vendor reported; null where that usage was missing or could not be true (an estimate is no comparison). */
  providerCost: number | null;
  /** Whether the model answered any text: one that answered none earns no speed or cost share against one that did. */
  answered: boolean;
}

/**
 * `judge_weights` applied to one pair (X, Y). Each criterion is normalised within the
 * pair to a share between 0 and 1, the two models' shares adding up to 1:
 *
 *   accuracy_X = (verdict_X + score_X / (score_X + score_Y)) / 2
 *                the judge's verdict (1 won in both orders, 0.5 a tie or orders that disagree,
 *                0 lost) and its mean score, both orders: the verdict comes first, so that a
 *                judge that scores both alike but picks one in both orders is not overruled
 *                by the smallest speed or cost weight
 *   speed_X    = latency_Y / (latency_X + latency_Y)       the faster model gets the larger share
 *   cost_X     = cost_Y / (cost_X + cost_Y)                the cheaper model gets the larger share
 *
 *   weighted_X = (w_accuracy accuracy_X + w_speed speed_X + w_cost cost_X)
 *                / (w_accuracy + w_speed + w_cost)
 *
 * A criterion with nothing to tell the two apart (both latencies 0, both costs 0, or a
 * cost unknown) gives each model 0.5. A model that answered no text against one that did
 * gets no speed or cost share (0, the other 1): an empty answer is quick and cheap, and had
 * won pairs its judge gave the other in both orders. weighted_X + weighted_Y = 1. With the
 * default weights (1, 0, 0), and with all three 0, this is the accuracy share alone.
 */
export function weightedScores(x: Contestant, y: Contestant, weights: JudgeWeights): [number, number] {
  const accuracy = (x.verdict + share(x.score, y.score)) / 2;
  const forfeit = x.answered === y.answered ? undefined : x.answered ? 1 : 0;
  const speed = forfeit ?? share(y.latencyMs, x.latencyMs);
  const cost = forfeit ?? (x.providerCost === null || y.providerCost === null ? 0.5 : share(y.providerCost, x.providerCost));
  // The weights as shares of the largest: the formula is the same at any scale, and weights as
  // small as 5e-324 (in range) would otherwise underflow to 0 in the products.
  const largest = Math.max(weights.accuracy, weights.speed, weights.cost);
  // All three 0, which the contract's ranges allow: nothing weighed, the accuracy share stands, as with the defaults.
  if (!(largest > 0)) return [accuracy, 1 - accuracy];
  const [wa, ws, wc] = [weights.accuracy / largest, weights.speed / largest, weights.cost / largest];
  const wx = (wa * accuracy + ws * speed + wc * cost) / (wa + ws + wc);
  return [wx, 1 - wx];
}

/** first / (first + second), or 0.5 when both are 0. */
function share(first: number, second: number): number {
  const sum = first + second;
  return sum > 0 ? first / sum : 0.5;
}

/** Whether the weighted result decides a pair's winner: only when speed or cost weigh in. */
export function weightsDecide(weights: JudgeWeights): boolean {
  return weights.speed > 0 || weights.cost > 0;
}
