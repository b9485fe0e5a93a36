import { describe, expect, it } from 'vitest';
import { creditsToMicro, microToCredits, usdToMicroCredits } from '../../shared/credits/credits.js';

describe('Module: credits', () => {
  it('converts USD to integer micro-credits with CREDITS_PER_USD and MARKUP', () => {
    expect(usdToMicroCredits(0.0012475, { creditsPerUsd: 100, markup: 1 })).toBe(124_750);
    expect(usdToMicroCredits(0.01, { creditsPerUsd: 100, markup: 1.2 })).toBe(1_200_000);
    expect(microToCredits(124_750)).toBe(0.12475);
    expect(creditsToMicro(50)).toBe(50_000_000);
  });

  it('charges a call that cost anything at least a micro-credit: none is free, whatever CREDITS_PER_USD', () => {
    // "Hi" on fam_i-3.1-8b, 6 tokens in and 1 out: 3.8e-7 USD, a third of a micro-credit at one credit a dollar.
    expect(usdToMicroCredits(3.8e-7, { creditsPerUsd: 1, markup: 1 })).toBe(1);
    expect(usdToMicroCredits(1e-15, { creditsPerUsd: 1, markup: 1 })).toBe(1);
    expect(usdToMicroCredits(0, { creditsPerUsd: 1, markup: 1 })).toBe(0);
    expect(usdToMicroCredits(1.6e-6, { creditsPerUsd: 1, markup: 1 })).toBe(2);
  });
});
