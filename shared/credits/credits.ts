import type { GatewayConfig } from '../config.js';

import { MICRO_PER_CREDIT } from '../pricing/micro-credits.js';

export { creditsToMicro, MICRO_PER_CREDIT, microToCredits } from '../pricing/micro-credits.js';

export type CreditRates = Pick<GatewayConfig, 'creditsPerUsd' | 'markup'>;

const microCredits = (usd: number, rates: CreditRates): number => usd * rates.creditsPerUsd * rates.markup * MICRO_PER_CREDIT;

/**
 * A charge in micro-credits: to the nearest, and never 0 for a cost above 0 (an operator
 * whose credits are dollars, CREDITS_PER_USD=1, would otherwise give away every call under
 * half a micro-dollar). The estimate, rounded up, is at least as much.
 */
export function usdToMicroCredits(usd: number, rates: CreditRates): number {
  const micro = microCredits(usd, rates);
  return micro > 0 ? Math.max(1, Math.round(micro)) : 0;
}

/**
 * An estimate in micro-credits: rounded up, call by call, so that a request's estimate is
 * never below the charge of the same calls, whose total is rounded once to the nearest.
 */
export function usdToMicroCreditsUp(usd: number, rates: CreditRates): number {
  return Math.ceil(microCredits(usd, rates));
}
