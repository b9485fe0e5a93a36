import { describe, expect, it } from 'vitest';
import { creditsToMicro, microToCredits, usdToMicroCredits, usdToMicroCreditsUp } from '../../shared/credits/credits.js';

describe('Module: credits', () => {
  it('converts USD to integer micro-credits with CREDITS_PER_USD and MARKUP', () => {
    expect(usdToMicroCredits(0.0012475, { creditsPerUsd: 100, markup: 1 })).toBe(124_750);
    expect(usdToMicroCredits(0.01, { creditsPerUsd: 100, markup: 1.2 })).toBe(1_200_000);
    expect(microToCredits(124_750)).toBe(0.12475);
    expect(creditsToMicro(50)).toBe(50_000_000);
  });

  it('rounds a half micro-credit up and takes a whole estimate as it is, whatever binary floating point makes of the product', () => {
    const rates = { creditsPerUsd: 100, markup: 1 };
    // 0.001417575 USD is 141,757.5 micro-credits; times 100 times 1e6 in binary, 141,757.49999…
    expect(usdToMicroCredits(0.001417575, rates)).toBe(141_758);
    expect(usdToMicroCredits(0.004578825, rates)).toBe(457_883);
    expect(usdToMicroCredits(1.75e-7, rates)).toBe(18);
    // An estimate of exactly 0.2442 credits: 244,200, not 244,201.
    expect(usdToMicroCreditsUp(0.002442, rates)).toBe(244_200);
    expect(usdToMicroCreditsUp(0.0024420001, rates)).toBe(244_201);
    // A markup written as a decimal, and rates as small or as large as the limits allow.
    expect(usdToMicroCredits(0.001417575, { creditsPerUsd: 100, markup: 1.2 })).toBe(170_109);
    expect(usdToMicroCreditsUp(0.1, { creditsPerUsd: 100, markup: 1.1 })).toBe(11_000_000);
    expect(usdToMicroCredits(0.5, { creditsPerUsd: 1e-7, markup: 1 })).toBe(1);
    expect(usdToMicroCredits(1234.5, { creditsPerUsd: 10_000, markup: 1 })).toBe(12_345_000_000_000);
  });

  it('charges a call that cost anything at least a micro-credit: none is free, whatever CREDITS_PER_USD', () => {
    // "Hi" on fam_i-3.1-8b, 6 tokens in and 1 out: 3.8e-7 USD, a third of a micro-credit at one credit a dollar.
    expect(usdToMicroCredits(3.8e-7, { creditsPerUsd: 1, markup: 1 })).toBe(1);
    expect(usdToMicroCredits(1e-15, { creditsPerUsd: 1, markup: 1 })).toBe(1);
    expect(usdToMicroCredits(0, { creditsPerUsd: 1, markup: 1 })).toBe(0);
    expect(usdToMicroCredits(1.6e-6, { creditsPerUsd: 1, markup: 1 })).toBe(2);
  });
});
