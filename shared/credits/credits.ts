import type { GatewayConfig } from '../config.js';

import { MICRO_PER_CREDIT } from '../pricing/micro-credits.js';

export { creditsToMicro, MICRO_PER_CREDIT, microToCredits } from '../pricing/micro-credits.js';

export type CreditRates = Pick<GatewayConfig, 'creditsPerUsd' | 'markup'>;

export function usdToMicroCredits(usd: number, rates: CreditRates): number {
  return Math.round(usd * rates.creditsPerUsd * rates.markup * MICRO_PER_CREDIT);
}
