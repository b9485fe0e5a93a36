import { describe, expect, it } from 'vitest';
import { creditsToMicro, microToCredits, usdToMicroCredits } from '../../shared/credits/credits.js';

describe('Module: credits', () => {
  it('converts USD to integer micro-credits with CREDITS_PER_USD and MARKUP', () => {
    expect(usdToMicroCredits(0.0012475, { creditsPerUsd: 100, markup: 1 })).toBe(124_750);
    expect(usdToMicroCredits(0.01, { creditsPerUsd: 100, markup: 1.2 })).toBe(1_200_000);
    expect(microToCredits(124_750)).toBe(0.12475);
    expect(creditsToMicro(50)).toBe(50_000_000);
  });
});
