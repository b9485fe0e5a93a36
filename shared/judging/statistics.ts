import { swapVerdict } from './evaluation.js';
import type { Evaluation } from './types.js';

/** How one judge behaved across its calls and pairs (null where nothing was there to count). */
export interface JudgeStatistics {
  judgeModelId: string;
  /** Pairs whose two orders both completed. */
  pairs: number;
  /** Share of those pairs whose two orders named the same winner (or both a tie). */
  positionConsistency: number | null;
  /** Completed calls (each order counts once). */
  calls: number;
  /** Share of completed calls whose verdict chose the answer shown first (position A). */
  chosePositionA: number | null;
  /** Share of completed calls whose verdict named a winner rather than a tie. */
  decisive: number | null;
  /** Among decisive calls between answers of different lengths (characters), the share won by the longer one. */
  longerWon: number | null;
}

/** How far two judges agree on the pairs both judged. */
export interface JudgePairAgreement {
  judges: [string, string];
  /** Pairs with a completed evaluation from both. */
  pairs: number;
  /** Share of those pairs with the same final verdict (the same winner, or both a tie). */
  agreement: number | null;
  /** Cohen's kappa over the three outcomes (first model, second model, tie); null when chance agreement is total. */
  cohensKappa: number | null;
}

export interface JudgeAgreement {
  judgePairs: JudgePairAgreement[];
  /** Fleiss' kappa over the pairs every judge evaluated, with three judges or more; null otherwise or when chance agreement is total. */
  fleissKappa: number | null;
  /** The pairs Fleiss' kappa counts. */
  fleissPairs: number;
}

export interface JudgingStatistics {
  judges: JudgeStatistics[];
  /** With two judges or more. */
  agreement?: JudgeAgreement;
}

const round4 = (value: number) => Math.round(value * 10_000) / 10_000;
const share = (part: number, whole: number) => (whole > 0 ? round4(part / whole) : null);

/** The statistics of every judge, and their agreement, from the evaluations of one answer (their outputs' lengths as each evaluation gives them). */
export function judgingStatistics(judgeIds: readonly string[], evaluations: readonly Evaluation[]): JudgingStatistics {
  const judges = judgeIds.map((judgeModelId) =>
    judgeStatistics(
      judgeModelId,
      evaluations.filter((e) => e.judgeModelId === judgeModelId),
    ),
  );
  return judgeIds.length < 2 ? { judges } : { judges, agreement: agreement(judgeIds, evaluations) };
}

function judgeStatistics(judgeModelId: string, evaluations: readonly Evaluation[]): JudgeStatistics {
  let pairs = 0;
  let consistent = 0;
  let calls = 0;
  let positionA = 0;
  let decisive = 0;
  let lengthDecided = 0;
  let longerWon = 0;
  for (const evaluation of evaluations) {
    const [first, second] = evaluation.orders;
    if (first.status === 'completed' && second.status === 'completed') {
      pairs++;
      if (first.winner === second.winner) consistent++;
    }
    for (const order of evaluation.orders) {
      if (order.status !== 'completed' || !order.verdict) continue;
      calls++;
      if (order.verdict.winner === 'A') positionA++;
      if (order.verdict.winner === 'tie') continue;
      decisive++;
      const [winner, loser] = order.verdict.winner === 'A' ? [order.answerA, order.answerB] : [order.answerB, order.answerA];
      const characters = (modelId: string) => evaluation.lengths[modelId]?.characters ?? 0;
      const difference = characters(winner) - characters(loser);
      if (difference === 0) continue;
      lengthDecided++;
      if (difference > 0) longerWon++;
    }
  }
  return {
    judgeModelId,
    pairs,
    positionConsistency: share(consistent, pairs),
    calls,
    chosePositionA: share(positionA, calls),
    decisive: share(decisive, calls),
    longerWon: share(longerWon, lengthDecided),
  };
}

type Outcome = 0 | 1 | 2;

/**
 * A completed evaluation's swapVerdict as one of three outcomes: its first model won in both
 * orders, its second, or a tie: agreement measures the judges alone.
 */
function outcome(evaluation: Evaluation): Outcome | undefined {
  if (evaluation.status !== 'completed' || evaluation.winner === null) return undefined;
  const judged = swapVerdict(evaluation.orders);
  return judged === 'tie' ? 2 : judged === evaluation.modelA ? 0 : 1;
}

function agreement(judgeIds: readonly string[], evaluations: readonly Evaluation[]): JudgeAgreement {
  // Each judge's outcome per pair of models.
  const byJudge = new Map<string, Map<string, Outcome>>(judgeIds.map((id) => [id, new Map()]));
  const pairKeys = new Set<string>();
  for (const evaluation of evaluations) {
    const verdict = outcome(evaluation);
    if (verdict === undefined) continue;
    const key = JSON.stringify([evaluation.modelA, evaluation.modelB]);
    pairKeys.add(key);
    byJudge.get(evaluation.judgeModelId)?.set(key, verdict);
  }
  const judgePairs: JudgePairAgreement[] = [];
  for (let x = 0; x < judgeIds.length; x++) {
    for (let y = x + 1; y < judgeIds.length; y++) {
      const first = byJudge.get(judgeIds[x] as string) as Map<string, Outcome>;
      const second = byJudge.get(judgeIds[y] as string) as Map<string, Outcome>;
      const both = [...first.keys()].filter((key) => second.has(key)).map((key) => [first.get(key), second.get(key)] as [Outcome, Outcome]);
      judgePairs.push({
        judges: [judgeIds[x] as string, judgeIds[y] as string],
        pairs: both.length,
        agreement: share(both.filter(([a, b]) => a === b).length, both.length),
        cohensKappa: cohensKappa(both),
      });
    }
  }
  if (judgeIds.length < 3) return { judgePairs, fleissKappa: null, fleissPairs: 0 };
  const everyJudge = [...pairKeys].filter((key) => judgeIds.every((id) => byJudge.get(id)?.has(key)));
  const ratings = everyJudge.map((key) => judgeIds.map((id) => byJudge.get(id)?.get(key) as Outcome));
  return { judgePairs, fleissKappa: fleissKappa(ratings), fleissPairs: ratings.length };
}

/** Cohen's kappa of two raters' outcomes: (observed − chance) / (1 − chance). */
export function cohensKappa(ratings: readonly (readonly [Outcome, Outcome])[]): number | null {
  if (ratings.length === 0) return null;
  const first = [0, 0, 0];
  const second = [0, 0, 0];
  let agreeing = 0;
  for (const [a, b] of ratings) {
    first[a]!++;
    second[b]!++;
    if (a === b) agreeing++;
  }
  const n = ratings.length;
  const observed = agreeing / n;
  const chance = first.reduce((sum, count, k) => sum + (count / n) * ((second[k] as number) / n), 0);
  return chance >= 1 ? null : round4((observed - chance) / (1 - chance));
}

/** Fleiss' kappa of m ≥ 2 raters who each rated every subject: (P̄ − P̄e) / (1 − P̄e). */
export function fleissKappa(ratings: readonly (readonly Outcome[])[]): number | null {
  const subjects = ratings.length;
  const raters = ratings[0]?.length ?? 0;
  if (subjects === 0 || raters < 2) return null;
  const totals = [0, 0, 0];
  let agreementSum = 0;
  for (const subject of ratings) {
    const counts = [0, 0, 0];
    for (const rating of subject) counts[rating]!++;
    counts.forEach((count, k) => {
      totals[k] = (totals[k] as number) + count;
    });
    agreementSum += (counts.reduce((sum, count) => sum + count * count, 0) - raters) / (raters * (raters - 1));
  }
  const meanAgreement = agreementSum / subjects;
  const chance = totals.reduce((sum, count) => sum + (count / (subjects * raters)) ** 2, 0);
  return chance >= 1 ? null : round4((meanAgreement - chance) / (1 - chance));
}
