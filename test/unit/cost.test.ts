import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import { providerCost } from '../../shared/pricing/cost.js';

describe('Function: providerCost', () => {
  it('prices each observed token class at its own price', () => {
    const prices = { input: 2.5, cachedInput: 0.25, cacheWrite: 3.125, output: 15, takenOn: '2026-11-22' };
    // 1000 uncached x 2.5 + 200 cached x 0.25 + 100 written x 3.125 + 500 out x 15, per million.
    expect(providerCost(prices, { inputTokens: 1300, cachedInputTokens: 200, cacheWriteTokens: 100, outputTokens: 500, reasoningTokens: 100 })).toBe(0.0103625);
  });

  it('charges cached tokens at the input price when a model has no cache price', () => {
    const prices = { input: 1, cachedInput: null, cacheWrite: null, output: 2, takenOn: '2026-11-22' };
    expect(providerCost(prices, { inputTokens: 10, cachedInputTokens: 10, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 })).toBe(0.00001);
  });

  it('prices a request above the long-context threshold at the long-context rates, all its tokens', () => {
    const prices = {
      input: 2,
      cachedInput: 0.2,
      cacheWrite: null,
      output: 12,
      longContext: { aboveInputTokens: 200_000, input: 4, cachedInput: 0.4, cacheWrite: null, output: 18 },
      takenOn: '2026-11-22',
    };
    const usage = (inputTokens: number) => ({ inputTokens, cachedInputTokens: 100_000, cacheWriteTokens: 0, outputTokens: 1_000, reasoningTokens: 0 });
    // At the threshold: base rates. 100,000 x 2 + 100,000 x 0.2 + 1,000 x 12, per million.
    expect(providerCost(prices, usage(200_000))).toBe(0.232);
    // One token above: every token at the long-context rates. 100,001 x 4 + 100,000 x 0.4 + 1,000 x 18.
    expect(providerCost(prices, usage(200_001))).toBe(0.458004);
  });

  it("prices a call started outside a time-of-day vendor's peak hours at its off-peak rates, and at peak rates without a time", () => {
    const prices = {
      input: 1.32,
      cachedInput: 0.044,
      cacheWrite: null,
      output: 3.96,
      offPeak: {
        peakHoursUtc: [
          [1, 4],
          [6, 10],
        ] as const,
        peakDaysUtc: [1, 2, 3, 4, 5],
        factor: 0.5,
      },
      takenOn: '2026-11-22',
    };
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 500_000, cacheWriteTokens: 0, outputTokens: 1_000_000, reasoningTokens: 0 };
    const peak = 0.66 + 0.022 + 3.96;
    expect(providerCost(prices, usage)).toBe(peak);
    // Monday 2026-11-23.
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 1, 0, 0))).toBe(peak);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 9, 59, 59))).toBe(peak);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 4, 0, 0))).toBe(peak / 2);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 10, 0, 0))).toBe(peak / 2);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 0, 59, 59))).toBe(peak / 2);
    // Friday peak; Saturday and Sunday off-peak all day.
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 27, 2, 0, 0))).toBe(peak);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 28, 2, 0, 0))).toBe(peak / 2);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 22, 7, 0, 0))).toBe(peak / 2);
  });

  it('prices a catalog model to the last digit', () => {
    const entry = resolveModel('fam_c-5.4')!;
    const usage = { inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 82, reasoningTokens: 0 };
    expect(providerCost(entry.prices, usage)).toBe((7 * entry.prices.input + 82 * entry.prices.output) / 1e6);
  });
});
