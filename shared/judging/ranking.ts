import type { Evaluation, RankingEntry } from './types.js';

/**
 * The models ranked across every completed evaluation (all judges, all pairs), by win
 * rate with a tie counting half a win, as FastChat's MT-Bench pairwise results report
 * it: (wins + ties / 2) / evaluations. Equal win rates share a rank and keep the
 * request's order; a model no completed evaluation judged (it failed, or every judge
 * call about it failed) comes last without a rank.
 */
export function rankModels(modelIds: readonly string[], evaluations: readonly Evaluation[]): RankingEntry[] {
  const records = new Map(modelIds.map((modelId) => [modelId, { wins: 0, ties: 0, losses: 0 }]));
  for (const evaluation of evaluations) {
    if (evaluation.status !== 'completed' || evaluation.winner === null) continue;
    for (const modelId of [evaluation.modelA, evaluation.modelB]) {
      const record = records.get(modelId);
      if (!record) continue;
      if (evaluation.winner === 'tie') record.ties++;
      else if (evaluation.winner === modelId) record.wins++;
      else record.losses++;
    }
  }
  const entries = modelIds.map((modelId, order) => {
    const record = records.get(modelId) ?? { wins: 0, ties: 0, losses: 0 };
    const games = record.wins + record.ties + record.losses;
    const winRate = games > 0 ? Math.round(((record.wins + record.ties / 2) / games) * 10_000) / 10_000 : null;
    return { order, entry: { rank: null as number | null, modelId, winRate, ...record, evaluations: games } };
  });
  entries.sort((x, y) => (y.entry.winRate ?? -1) - (x.entry.winRate ?? -1) || x.order - y.order);
  let previous: RankingEntry | undefined;
  entries.forEach(({ entry }, index) => {
    if (entry.winRate === null) return;
    entry.rank = previous && previous.winRate === entry.winRate ? (previous.rank as number) : index + 1;
    previous = entry;
  });
  return entries.map(({ entry }) => entry);
}
