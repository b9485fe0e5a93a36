import type { ModelResult } from '../compare/result.js';
import type { JudgeWeights } from '../contract/types.js';
import { codePoints, isBlank } from '../text/characters.js';
import type { Evaluation, EvaluationOrder, Judgment, OutputLength } from './types.js';
import { weightedScores, weightsDecide } from './weights.js';

/**
 * The judge's own verdict on a pair by the position-swap rule (MT-Bench's conservative one):
 * the model named in both orders, or a tie when they disagree; never the weighted winner,
 * which speed and cost may decide. Of completed orders.
 */
export function swapVerdict(orders: readonly EvaluationOrder[]): string {
  const [first, second] = orders;
  return first?.winner != null && first.winner === second?.winner ? first.winner : 'tie';
}

export interface PairJudgments {
  judgeModelId: string;
  /** The pair's completed results; `a` comes first in the request's `models`. */
  a: ModelResult;
  b: ModelResult;
  /** The call that showed `a` as Answer A, and the one that showed `b` as Answer A. */
  aFirst: Judgment;
  bFirst: Judgment;
  weights: JudgeWeights;
}

/**
 * One evaluation from the two position-swapped judge calls of a pair. Each order's
 * verdict is mapped back to a model. Both orders name the same model: it wins; they
 * disagree: the pair is a tie and marked inconsistent (the conservative rule of the
 * MT-Bench paper, Zheng et al. 2023). When speed or cost weigh in, the weighted scores
 * decide the winner instead (weights.ts). Either call failed: the evaluation failed,
 * with no winner from one order alone.
 */
export function toEvaluation(pair: PairJudgments): Omit<Evaluation, 'inRanking' | 'selfPreference'> {
  const { a, b } = pair;
  const orders: [EvaluationOrder, EvaluationOrder] = [toOrder(pair.aFirst, a.modelId, b.modelId), toOrder(pair.bFirst, b.modelId, a.modelId)];
  // What the two were charged together; where an order's usage was missing, its estimate counted in, as estimatedCost.
  const charged = round((orders[0].providerCost ?? orders[0].estimatedCost ?? 0) + (orders[1].providerCost ?? orders[1].estimatedCost ?? 0), 12);
  const estimated = orders.some((o) => o.providerCost === null);
  const totals = {
    tokensIn: orders[0].tokensIn + orders[1].tokensIn,
    tokensOut: orders[0].tokensOut + orders[1].tokensOut,
    latencyMs: orders[0].latencyMs + orders[1].latencyMs,
    providerCost: estimated ? null : charged,
    ...(estimated ? { estimatedCost: charged } : {}),
  };
  const base = {
    judgeModelId: pair.judgeModelId,
    modelA: a.modelId,
    modelB: b.modelId,
    lengths: { [a.modelId]: lengthOf(a), [b.modelId]: lengthOf(b) },
  };
  const { aFirst, bFirst } = pair;
  if (!aFirst.verdict || !bFirst.verdict || aFirst.status === 'failed' || bFirst.status === 'failed') {
    const failed = orders.find((o) => o.status === 'failed');
    return {
      ...base,
      status: 'failed',
      winner: null,
      consistent: false,
      scores: null,
      weightedScores: null,
      orders,
      ...totals,
      error: failed?.error ?? { code: 'internal_error', message: 'The judge call gave no verdict' },
    };
  }

  // Each model's score is the mean of the score it got in either position, as reported (4 decimals: 7.6, not 7.6000000000000005).
  const scoreA = round((aFirst.verdict.scoreA + bFirst.verdict.scoreB) / 2, 4);
  const scoreB = round((aFirst.verdict.scoreB + bFirst.verdict.scoreA) / 2, 4);
  const consistent = orders[0].winner === orders[1].winner;
  const judged = swapVerdict(orders);
  const verdictA = judged === 'tie' ? 0.5 : judged === a.modelId ? 1 : 0;
  const [weightedA, weightedB] = weightedScores(
    // A cost estimated from the text (the vendor's usage missing) is no comparison (spec 3, rule 3): the cost criterion tells the two apart by none.
    { verdict: verdictA, score: scoreA, latencyMs: a.latencyMs, providerCost: a.providerCost, answered: !isBlank(a.output) },
    { verdict: 1 - verdictA, score: scoreB, latencyMs: b.latencyMs, providerCost: b.providerCost, answered: !isBlank(b.output) },
    pair.weights,
  );
  // Compared as reported (4 decimals): scores that read the same are a tie, not a win by a millisecond's jitter.
  const [shownA, shownB] = [round(weightedA, 4), round(weightedB, 4)];
  const winner = !weightsDecide(pair.weights) ? judged : shownA === shownB ? 'tie' : shownA > shownB ? a.modelId : b.modelId;
  return {
    ...base,
    status: 'completed',
    winner,
    consistent,
    scores: keyed(a.modelId, scoreA, b.modelId, scoreB),
    weightedScores: keyed(a.modelId, shownA, b.modelId, shownB),
    orders,
    ...totals,
  };
}

function toOrder(judgment: Judgment, answerA: string, answerB: string): EvaluationOrder {
  const { verdict } = judgment;
  const completed = judgment.status === 'completed' && verdict !== undefined;
  return {
    answerA,
    answerB,
    status: completed ? 'completed' : 'failed',
    verdict: completed ? verdict : null,
    winner: !completed ? null : verdict.winner === 'A' ? answerA : verdict.winner === 'B' ? answerB : 'tie',
    tokensIn: judgment.tokensIn,
    tokensOut: judgment.tokensOut,
    latencyMs: judgment.latencyMs,
    providerCost: judgment.providerCost,
    ...(judgment.estimatedCost !== undefined ? { estimatedCost: judgment.estimatedCost } : {}),
    ...(judgment.usage ? { usage: judgment.usage } : {}),
    ...(judgment.error ? { error: judgment.error } : {}),
    ...(judgment.warnings && judgment.warnings.length > 0 ? { warnings: judgment.warnings } : {}),
  };
}

/**
 * The output's tokens as the vendor counted them, without the reasoning it reported apart
 * (hidden from the judges, who read the output alone: a model that thought 512 tokens to
 * write 80 read as the longer one); none where its usage was missing or could not be true
 * (providerCost null; spec 3, rule 3). Where the vendor counts thinking inside the output and
 * reports none apart (Anthropic, Bedrock, a chat vendor without `reasoning_tokens`, inline
 * `<think>`), they include it.
 */
function lengthOf(result: ModelResult): OutputLength {
  const known = lengths.get(result);
  if (known) return known;
  const reasoning = result.usage?.reasoningTokensOut ?? 0;
  const length = { tokens: result.providerCost === null ? null : Math.max(0, result.tokensOut - reasoning), characters: codePoints(result.output) };
  lengths.set(result, length);
  return length;
}

/**
 * Each result's length, counted once: a result is in every evaluation of its pairs, judge by
 * judge (28 pairs of 8 models, by 4 judges, had each output's code points counted 28 times
 * over its whole text).
 */
const lengths = new WeakMap<ModelResult, OutputLength>();

function keyed(idA: string, a: number, idB: string, b: number): Record<string, number> {
  return { [idA]: a, [idB]: b };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
