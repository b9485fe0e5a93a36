import type { LongContextPrices, OffPeakPricing, Prices } from '../catalog/types.js';
import type { Usage } from '../providers/types.js';

/**
 * Provider cost in USD from the token classes the vendor reported (spec 3 rule 4): a
 * cached price applies only to tokens reported as cached, and a request whose input is
 * above the model's long-context threshold is priced at its long-context rates; a call
 * started (`startedAt`, epoch ms) outside a time-of-day vendor's peak hours at its
 * off-peak rates (without `startedAt`: the peak rates, the worst case); search queries at
 * the model's price a query, where it bills its search grounding so. Computed in
 * micro-USD with prices per million tokens, rounded to the pico-dollar so sums stay exact
 * in floating point.
 */
export function providerCost(basePrices: Prices, usage: Usage, startedAt?: number): number {
  const prices: Omit<LongContextPrices, 'aboveInputTokens'> = isLong(basePrices, usage.inputTokens) ? basePrices.longContext! : basePrices;
  const uncachedInput = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens;
  const microUsd =
    uncachedInput * prices.input +
    usage.cachedInputTokens * (prices.cachedInput ?? prices.input) +
    usage.cacheWriteTokens * (prices.cacheWrite ?? prices.input) +
    usage.outputTokens * prices.output;
  const factor = startedAt !== undefined && basePrices.offPeak && !isPeak(basePrices.offPeak, startedAt) ? basePrices.offPeak.factor : 1;
  const searchMicroUsd = (usage.searchQueries ?? 0) * (basePrices.searchQueryUsd ?? 0) * 1e6;
  return Math.round((microUsd * factor + searchMicroUsd) * 1e6) / 1e12;
}

function isPeak(offPeak: OffPeakPricing, at: number): boolean {
  const time = new Date(at);
  const hour = time.getUTCHours();
  return offPeak.peakDaysUtc.includes(time.getUTCDay()) && offPeak.peakHoursUtc.some(([start, end]) => hour >= start && hour < end);
}

function isLong(prices: Prices, inputTokens: number): boolean {
  return prices.longContext !== undefined && inputTokens > prices.longContext.aboveInputTokens;
}
