/**
 * What individual Claude models refuse, by upstream model name. Anthropic documents these
 * per model (migration guide, "Migrating to Claude Opus 4.7"): Opus 4.7 answers 400 to
 * `thinking: {type: 'enabled', budget_tokens}` and to any of temperature, top_p, top_k.
 */
const ADAPTIVE_THINKING_ONLY: ReadonlySet<string> = new Set(['claude-opus-4-7']);
const NO_SAMPLING_PARAMETERS: ReadonlySet<string> = new Set(['claude-opus-4-7']);

/** The model takes only `thinking: {type: 'adaptive'}`; a token budget is a 400. */
export function acceptsOnlyAdaptiveThinking(upstreamModel: string): boolean {
  return ADAPTIVE_THINKING_ONLY.has(upstreamModel);
}

/** The model rejects temperature, top_p and top_k outright. */
export function rejectsSamplingParameters(upstreamModel: string): boolean {
  return NO_SAMPLING_PARAMETERS.has(upstreamModel);
}
