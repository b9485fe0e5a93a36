import type { ModelEntry } from '../catalog/types.js';
import type { Evaluation, SelfPreference } from './types.js';

/**
 * Who made a model: the maker of an open-weight model a host serves (its family token names
 * the host: `fam_e`, `fam_i`); else the vendor its family token stands for, the small and
 * code models (`fam_k`, `fam_l`) being the European family's own (spec, naming note); `o*`
 * models already carry `fam_c` in the catalog.
 */
function maker(entry: ModelEntry): string {
  if (entry.openWeights) return entry.openWeights.maker;
  return entry.family === 'fam_k' || entry.family === 'fam_l' ? 'fam_g' : entry.family;
}

/**
 * The same model: one catalog entry under either spelling, one vendor model under two IDs (a
 * retired ID its successor answers, shared/catalog), or the same open weights on two hosts.
 */
function sameModel(x: ModelEntry, y: ModelEntry): boolean {
  return (x.provider === y.provider && x.upstreamModel === y.upstreamModel) || (x.openWeights !== undefined && x.openWeights.weights === y.openWeights?.weights);
}

/**
 * Whether a judge judges itself (the same model as a contestant) or its own maker's model:
 * judges prefer their own answers (MT-Bench, Zheng et al. 2023; PoLL, Verga et al. 2024).
 * Undefined for an independent judge.
 */
export function selfPreferenceOf(judge: ModelEntry, contestants: readonly { modelId: string; entry: ModelEntry }[]): SelfPreference | undefined {
  const same = contestants.find((c) => sameModel(c.entry, judge));
  if (same) return { modelId: same.modelId, relation: 'same-model' };
  const family = contestants.find((c) => maker(c.entry) === maker(judge));
  return family ? { modelId: family.modelId, relation: 'same-family' } : undefined;
}

/**
 * Which evaluations the ranking counts: those that completed with a winner, but that a judge
 * never silently crowns itself, so an evaluation flagged for self-preference is left out
 * wherever an independent judge's completed evaluation of the same pair exists; where none
 * does, it counts (and stays flagged, for the caller to weigh). A failed one counts nowhere.
 */
export function rankedEvaluations(evaluations: readonly Omit<Evaluation, 'inRanking'>[]): Evaluation[] {
  const independent = new Set(evaluations.filter((e) => e.status === 'completed' && e.selfPreference === undefined).map((e) => JSON.stringify([e.modelA, e.modelB])));
  const counts = (e: Omit<Evaluation, 'inRanking'>) =>
    e.status === 'completed' && e.winner !== null && (e.selfPreference === undefined || !independent.has(JSON.stringify([e.modelA, e.modelB])));
  return evaluations.map((e) => ({ ...e, inRanking: counts(e) }));
}
