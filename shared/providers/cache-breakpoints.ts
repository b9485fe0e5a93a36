import type { ModelCall } from './types.js';

/**
 * The warning for `cache_control` breakpoints (spec 2.7, 2.8) sent to a protocol that takes
 * none (OpenAI Responses, chat completions): they are left out, and the caller hears why,
 * from the model's cache rule in the catalog. Undefined when the call marks none.
 */
export function breakpointsWarning(call: ModelCall, vendor: string): string | undefined {
  if (!call.system.some((block) => block.cache_control) && !call.history.some((turn) => turn.cache_control)) return undefined;
  const { mode, minTokens } = call.entry.capabilities.cache;
  const why =
    mode === 'automatic'
      ? `${vendor} caches prompt prefixes${minTokens === undefined ? '' : ` of ${minTokens.toLocaleString('en-US')} tokens or more`} automatically`
      : `${vendor} does not cache prompts for this model`;
  return `cache_control breakpoints have no effect on ${call.entry.id}: ${why}`;
}
