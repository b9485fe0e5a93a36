import type { GatewayConfig } from '../config.js';

import { MICRO_PER_CREDIT } from '../pricing/micro-credits.js';
import { decimalDigits } from '../text/decimal.js';

export { creditsToMicro, MICRO_PER_CREDIT, microToCredits } from '../pricing/micro-credits.js';

export type CreditRates = Pick<GatewayConfig, 'creditsPerUsd' | 'markup'>;

/**
 * `usd` in micro-credits as a fraction, exactly: the cost to the pico-dollar (the precision a
 * call's cost is rounded to) and each rate as the decimal it is written as (1.2, 1e-7), so that
 * no binary rounding moves a charge across a half or an estimate across a whole micro-credit
 * (141,757.5 had been rounded down as 141,757.4999…, and an estimate of exactly 244,200 taken
 * up to 244,201).
 */
function microCredits(usd: number, rates: CreditRates): { numerator: bigint; denominator: bigint } {
  const { factor, denominator } = exactRate(rates);
  return { numerator: BigInt(Math.round(usd * 1e12)) * factor, denominator };
}

/** The micro-credits of a pico-dollar as a fraction, worked out once for each rates' object (a configuration's). */
const exactRates = new WeakMap<CreditRates, { factor: bigint; denominator: bigint }>();

function exactRate(rates: CreditRates): { factor: bigint; denominator: bigint } {
  let exact = exactRates.get(rates);
  if (exact === undefined) {
    const credits = decimalDigits(rates.creditsPerUsd);
    const markup = decimalDigits(rates.markup);
    const product = BigInt(credits.digits) * BigInt(markup.digits);
    // usd = pico × 10^-12, and a credit is MICRO_PER_CREDIT (10^6) micro-credits.
    const exponent = credits.power + markup.power - 12 + Math.log10(MICRO_PER_CREDIT);
    exact = exponent >= 0 ? { factor: product * 10n ** BigInt(exponent), denominator: 1n } : { factor: product, denominator: 10n ** BigInt(-exponent) };
    exactRates.set(rates, exact);
  }
  return exact;
}

/**
 * A charge in micro-credits: to the nearest (a half up), and never 0 for a cost above 0 (an
 * operator whose credits are dollars, CREDITS_PER_USD=1, would otherwise give away every call
 * under half a micro-dollar). The estimate, rounded up, is at least as much.
 */
export function usdToMicroCredits(usd: number, rates: CreditRates): number {
  if (!(usd > 0)) return 0;
  const { numerator, denominator } = microCredits(usd, rates);
  return Math.max(1, Number((2n * numerator + denominator) / (2n * denominator)));
}

/**
 * An estimate in micro-credits: rounded up, call by call, so that a request's estimate is
 * never below the charge of the same calls, whose total is rounded once to the nearest.
 */
export function usdToMicroCreditsUp(usd: number, rates: CreditRates): number {
  if (!(usd > 0)) return 0;
  const { numerator, denominator } = microCredits(usd, rates);
  return Math.max(1, Number((numerator + denominator - 1n) / denominator));
}
