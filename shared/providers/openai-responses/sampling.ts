import type { ModelEntry } from '../../catalog/types.js';
import type { ModelTuning } from '../../contract/types.js';

/**
 * Whether OpenAI accepts `temperature` and `top_p` for a call:
 * - `accepted`: a model without reasoning (gpt-4.1, gpt-4o, gpt-4-turbo);
 * - `with-effort-none`: GPT-5.1 and later, except the `-pro` variants, accept them only while
 *   `reasoning.effort` is `none` (OpenAI's "GPT-5.x parameter compatibility"); the request then says so;
 * - `rejected`: every other reasoning model (o-series, gpt-5, gpt-5-mini, gpt-5-nano, `-pro`), and any
 *   reasoning model asked to reason (`reasoningEffort` low, medium or high): OpenAI answers 400.
 * Decided by the model called, not by what the caller may tune: a retired ID's successor
 * (shared/catalog) may reason where the ID's own model did not.
 */
export type SamplingSupport = 'accepted' | 'with-effort-none' | 'rejected';

export function samplingSupport(entry: ModelEntry, tuning: ModelTuning): SamplingSupport {
  if (!reasons(entry.upstreamModel)) return 'accepted';
  return reasonsAsCalled(entry.upstreamModel, tuning) ? 'rejected' : 'with-effort-none';
}

/**
 * Whether a call reasons: a reasoning model does unless it takes effort `none` (GPT-5.1 and
 * later, not `-pro`) and is asked no effort or `none`, `none` being their default ("gpt-5.1
 * defaults to none"; the models before it default to medium, `-pro` to its least).
 */
export function reasonsAsCalled(upstreamModel: string, tuning: ModelTuning): boolean {
  if (!reasons(upstreamModel)) return false;
  if (!reasonsOptionally(upstreamModel)) return true;
  return tuning.reasoningEffort !== undefined && tuning.reasoningEffort !== 'none';
}

/** OpenAI's reasoning models: the o-series (`o3`, `o4-mini`), and GPT-5 and later. */
export function reasons(upstreamModel: string): boolean {
  if (/^o\d/.test(upstreamModel)) return true;
  const major = /^gpt-(\d+)/.exec(upstreamModel)?.[1];
  return major !== undefined && Number(major) >= 5;
}

/** GPT-5.1 and later (`gpt-5.4`, `gpt-5.4-mini`, `gpt-6`...) take `reasoning.effort: none`; the `-pro` variants always reason. */
export function reasonsOptionally(upstreamModel: string): boolean {
  const match = /^gpt-(\d+)(?:\.(\d+))?(?:-(.+))?$/.exec(upstreamModel);
  if (!match) return false;
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  const variant = match[3] ?? '';
  if (variant.startsWith('pro')) return false;
  return major > 5 || (major === 5 && minor >= 1);
}

/**
 * The least `reasoning.effort` OpenAI takes for a model, where it is above `none`'s and `low`'s:
 * the `-pro` variants answer 400 below `medium` (gpt-5-pro below `high`, its only effort).
 */
export function leastEffort(upstreamModel: string): 'medium' | 'high' | undefined {
  const pro = /^gpt-(\d+)(?:\.(\d+))?-pro(?:-|$)/.exec(upstreamModel);
  if (!pro) return undefined;
  return pro[1] === '5' && pro[2] === undefined ? 'high' : 'medium';
}
