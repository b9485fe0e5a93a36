import { bradleyTerry, type Games } from './bradley-terry.js';
import type { Evaluation, RankingEntry } from './types.js';

const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

/**
 * The models ranked across the completed evaluations that count (`inRanking`: see
 * self-preference.ts), as Chatbot Arena ranks (arXiv 2403.04132): a Bradley-Terry strength
 * per model by maximum likelihood, each evaluation one game (a tie half a win to each), with
 * a 95 % interval from a seeded parametric bootstrap (bradley-terry.ts), the same for the
 * same evaluations whatever their order or the models'; a model's rank is 1
 * plus the number of models of its group whose interval lies wholly above its own, so models
 * whose intervals overlap share ranks. `winRate` ((wins + ties / 2) / evaluations, as FastChat's MT-Bench reports it) is
 * kept beside it. A model no such evaluation judged comes last, without rank or strength.
 * `catalogId` gives the catalog ID a model ID (as the caller spelled it) stands for.
 */
export async function rankModels(
  modelIds: readonly string[],
  evaluations: readonly Evaluation[],
  catalogId: (modelId: string) => string = (modelId) => modelId,
): Promise<RankingEntry[]> {
  const records = new Map(modelIds.map((modelId) => [modelId, { wins: 0, ties: 0, losses: 0 }]));
  const counted: { modelA: string; modelB: string; winsA: number }[] = [];
  for (const evaluation of evaluations) {
    if (evaluation.status !== 'completed' || evaluation.winner === null || !evaluation.inRanking) continue;
    const recordA = records.get(evaluation.modelA);
    const recordB = records.get(evaluation.modelB);
    if (recordA === undefined || recordB === undefined) continue;
    const winsA = evaluation.winner === 'tie' ? 0.5 : evaluation.winner === evaluation.modelA ? 1 : 0;
    if (winsA === 0.5) {
      recordA.ties++;
      recordB.ties++;
    } else {
      (winsA === 1 ? recordA : recordB).wins++;
      (winsA === 1 ? recordB : recordA).losses++;
    }
    counted.push({ modelA: evaluation.modelA, modelB: evaluation.modelB, winsA });
  }
  // The models that played, numbered in the order of their catalog IDs (UTF-16 code units, no
  // locale), not the request's order nor the caller's spelling of an ID (`gemini-3.1-pro` for
  // `fam_b-3.1-pro`): the numbering decides the bootstrap's seed and draws and the fit's last
  // bits, so either would move interval ends and, where two nearly meet, ranks. bradleyTerry
  // itself takes the games in the order of their pairs.
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const played = [...new Set(counted.flatMap(({ modelA, modelB }) => [modelA, modelB]))].sort((x, y) => order(catalogId(x), catalogId(y)) || order(x, y));
  const index = new Map(played.map((modelId, i) => [modelId, i]));
  const games = counted.map(({ modelA, modelB, winsA }): Games => ({ a: index.get(modelA) as number, b: index.get(modelB) as number, winsA, winsB: 1 - winsA }));
  const { strengths, intervals, groups } = await bradleyTerry(played.length, games);
  const entries = modelIds.map((modelId, order): { order: number; group: number | null; entry: RankingEntry } => {
    const record = records.get(modelId) as { wins: number; ties: number; losses: number };
    const games = record.wins + record.ties + record.losses;
    const item = index.get(modelId);
    const strength = item === undefined ? null : (strengths[item] ?? null);
    const interval = item === undefined ? null : (intervals[item] ?? null);
    return {
      order,
      group: item === undefined ? null : (groups[item] ?? null),
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
  for (const { group, entry } of entries) {
    if (entry.interval === null) continue;
    const [, upper] = entry.interval;
    entry.rank = 1 + entries.filter((other) => other.group === group && other.entry.interval !== null && other.entry.interval[0] > upper).length;
  }
  entries.sort((x, y) => (x.entry.rank ?? Infinity) - (y.entry.rank ?? Infinity) || (y.entry.strength ?? -Infinity) - (x.entry.strength ?? -Infinity) || x.order - y.order);
  return entries.map(({ entry }) => entry);
}
