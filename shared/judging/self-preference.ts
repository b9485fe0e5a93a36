import type { ModelEntry } from '../catalog/types.js';
import type { Evaluation, SelfPreference } from './types.js';

/**
 * The vendor whose models a family token stands for: the small and code models (`fam_k`,
 * `fam_l`) are the European family's own (spec, naming note); `o*` models already carry
 * `fam_c` in the catalog.
 */
function maker(entry: ModelEntry): string {
  return entry.family === 'fam_k' || entry.family === 'fam_l' ? 'fam_g' : entry.family;
}

/**
 * Whether a judge judges itself (the same catalog model as a contestant, under either
 * spelling) or its own vendor's model: judges prefer their own answers (MT-Bench, Zheng et
 * al. 2023; PoLL, Verga et al. 2024). Undefined for an independent judge.
 */
export function selfPreferenceOf(judge: ModelEntry, contestants: readonly { modelId: string; entry: ModelEntry }[]): SelfPreference | undefined {
  const same = contestants.find((c) => c.entry.id === judge.id);
  if (same) return { modelId: same.modelId, relation: 'same-model' };
  const family = contestants.find((c) => maker(c.entry) === maker(judge));
  return family ? { modelId: family.modelId, relation: 'same-family' } : undefined;
}

/**
 * Which evaluations the ranking counts: a judge never silently crowns itself, so an
 * evaluation flagged for self-preference is left out wherever an independent judge's
 * completed evaluation of the same pair exists; where none does, it counts (and stays
 * flagged, for the caller to weigh).
 */
export function rankedEvaluations(evaluations: readonly Omit<Evaluation, 'inRanking'>[]): Evaluation[] {
  const independent = new Set(evaluations.filter((e) => e.status === 'completed' && e.selfPreference === undefined).map((e) => JSON.stringify([e.modelA, e.modelB])));
  return evaluations.map((e) => ({ ...e, inRanking: e.selfPreference === undefined || !independent.has(JSON.stringify([e.modelA, e.modelB])) }));
}
