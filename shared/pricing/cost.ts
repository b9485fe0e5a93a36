import type { Prices } from '../catalog/types.js';
import type { Usage } from '../providers/types.js';

/**
 * Provider cost in USD from the token classes the vendor reported (spec 3 rule 4): a
 * cached price applies only to tokens reported as cached. Computed in micro-USD with
 * prices per million tokens, rounded to the pico-dollar so sums stay exact in floating point.
 */
export function providerCost(prices: Prices, usage: Usage): number {
  const uncachedInput = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens;
  const microUsd =
    uncachedInput * prices.input +
    usage.cachedInputTokens * (prices.cachedInput ?? prices.input) +
    usage.cacheWriteTokens * (prices.cacheWrite ?? prices.input) +
    usage.outputTokens * prices.output;
  return Math.round(microUsd * 1e6) / 1e12;
}
