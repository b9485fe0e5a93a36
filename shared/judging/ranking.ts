import { bradleyTerry, type Games } from './bradley-terry.js';
import type { Evaluation, RankingEntry } from './types.js';

const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

/**
 * The models ranked across the completed evaluations that count (`inRanking`: see
 * self-preference.ts), as Chatbot Arena ranks (arXiv 2403.04132): a Bradley-Terry strength
 * per model by maximum likelihood, each evaluation one game (a tie half a win to each), with
 * a 95 % interval from a seeded parametric bootstrap (bradley-terry.ts); a model's rank is 1
 * plus the number of models of its group whose interval lies wholly above its own, so models
 * whose intervals overlap share ranks. `winRate` ((wins + ties / 2) / evaluations, as FastChat's MT-Bench reports it) is
 * kept beside it. A model no such evaluation judged comes last, without rank or strength.
 */
export async function rankModels(modelIds: readonly string[], evaluations: readonly Evaluation[]): Promise<RankingEntry[]> {
  const index = new Map(modelIds.map((modelId, i) => [modelId, i]));
  const records = modelIds.map(() => ({ wins: 0, ties: 0, losses: 0 }));
  const games: Games[] = [];
  for (const evaluation of evaluations) {
    if (evaluation.status !== 'completed' || evaluation.winner === null || !evaluation.inRanking) continue;
    const a = index.get(evaluation.modelA);
    const b = index.get(evaluation.modelB);
    if (a === undefined || b === undefined) continue;
    const winsA = evaluation.winner === 'tie' ? 0.5 : evaluation.winner === evaluation.modelA ? 1 : 0;
    const recordA = records[a] as (typeof records)[number];
    const recordB = records[b] as (typeof records)[number];
    if (winsA === 0.5) {
      recordA.ties++;
      recordB.ties++;
    } else {
      (winsA === 1 ? recordA : recordB).wins++;
      (winsA === 1 ? recordB : recordA).losses++;
    }
    games.push({ a, b, winsA, winsB: 1 - winsA });
  }
  const { strengths, intervals, groups } = await bradleyTerry(modelIds.length, games);
  const entries = modelIds.map((modelId, order): { order: number; entry: RankingEntry } => {
    const record = records[order] as (typeof records)[number];
    const games = record.wins + record.ties + record.losses;
    const strength = strengths[order] ?? null;
    const interval = intervals[order] ?? null;
    return {
      order,
      entry: {
        rank: null,
        modelId,
        strength: strength === null ? null : round4(strength),
        interval: strength === null || interval === null ? null : [round4(interval[0]), round4(interval[1])],
        winRate: games > 0 ? round4((record.wins + record.ties / 2) / games) : null,
        ...record,
        evaluations: games,
      },
    };
  });
  // Ranked against the models of its own group only (linked by evaluations, even through
  // others): another group's strengths are centred on their own, not on the same scale.
  for (const { order, entry } of entries) {
    if (entry.interval === null) continue;
    const [, upper] = entry.interval;
    entry.rank = 1 + entries.filter(({ order: other, entry: { interval } }) => groups[other] === groups[order] && interval !== null && interval[0] > upper).length;
  }
  entries.sort((x, y) => (x.entry.rank ?? Infinity) - (y.entry.rank ?? Infinity) || (y.entry.strength ?? -Infinity) - (x.entry.strength ?? -Infinity) || x.order - y.order);
  return entries.map(({ entry }) => entry);
}
