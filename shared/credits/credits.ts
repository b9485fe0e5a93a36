import type { GatewayConfig } from '../config.js';

/** Storage keeps integer micro-credits; the API speaks credits (DESIGN.md, Credits). */
export const MICRO_PER_CREDIT = 1_000_000;

export type CreditRates = Pick<GatewayConfig, 'creditsPerUsd' | 'markup'>;

export function usdToMicroCredits(usd: number, rates: CreditRates): number {
  return Math.round(usd * rates.creditsPerUsd * rates.markup * MICRO_PER_CREDIT);
}

export function microToCredits(micro: number): number {
  return micro / MICRO_PER_CREDIT;
}

export function creditsToMicro(credits: number): number {
  return Math.round(credits * MICRO_PER_CREDIT);
}
