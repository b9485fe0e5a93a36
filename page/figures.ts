import { isObject, num } from './answer.js';

/** How the page writes numbers: counts with their thousands grouped, costs to three significant digits, credits to the micro-credit. */

/** Counts (tokens, milliseconds, calls, pairs) with their thousands grouped, in the page's English: 1,234,567. Not costs (usd) or credits: amounts, with rules of their own. */
const COUNT = new Intl.NumberFormat('en');

/** A count as the page shows it (1,234,567), or `missing` where the answer has no number. */
export function grouped(value: unknown, missing = '?'): string {
  return typeof value === 'number' && Number.isFinite(value) ? COUNT.format(value) : missing;
}

/**
 * A cost in USD to three significant digits ($0.000000400, $0.0123, $12.3), whole dollars
 * grouped from $1,000 on: a call of a cheap model costs millionths of a dollar, which six
 * decimals showed as $0.000000, and two different costs as the same figure. Never 0 for a
 * cost that is not 0. Rounded before its decimals are counted: 0.00099996 is 0.00100, not
 * the four digits of 0.001000.
 */
export function usd(value: number): string {
  if (value === 0) return '0';
  const rounded = Number(value.toPrecision(3));
  const decimals = 2 - Math.floor(Math.log10(Math.abs(rounded)));
  // toFixed takes up to 100 decimals; below 1e-18 an exponent reads better than the zeros.
  if (decimals > 20) return value.toPrecision(3);
  return decimals > 0 ? rounded.toFixed(decimals) : COUNT.format(Math.round(value));
}

/** Credits to the micro-credit the gateway counts in, thousands grouped: 1,234.5, 0.000001. */
const CREDITS = new Intl.NumberFormat('en', { maximumFractionDigits: 6 });

/**
 * An amount of credits as the page shows it (1,234.567891), or `missing` where the answer has
 * no number. The gateway counts in millionths of a credit, so six decimals show every amount
 * it sends; a smaller one (no gateway of ours sends it) reads with an exponent, never as 0.
 * As JSON gave them, 0.0000001 read `1e-7` and a balance of 12345.5 ungrouped.
 */
export function credits(value: unknown, missing = '?'): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return missing;
  const shown = CREDITS.format(value);
  return value !== 0 && /^-?0$/.test(shown) ? value.toPrecision(3) : shown;
}

/** Calls' costs added up: in USD, the part of it estimated (none: undefined), and whether a call had no cost at all. */
export interface Costs {
  usd: number;
  estimated: number | undefined;
  unknown: boolean;
}

export function sumCosts(calls: unknown[]): Costs {
  const sum: Costs = { usd: 0, estimated: undefined, unknown: false };
  for (const call of calls.filter(isObject)) {
    const provider = num(call.providerCost);
    const estimated = provider === undefined ? num(call.estimatedCost) : undefined;
    if (provider !== undefined) sum.usd += provider;
    else if (estimated !== undefined) {
      sum.usd += estimated;
      sum.estimated = (sum.estimated ?? 0) + estimated;
    } else sum.unknown = true;
  }
  return sum;
}

/** "$0.0158", "at least $0.0158" when a call had no cost, "$0.0158 (incl. $0.00100 estimated)" when some of it is an estimate. */
export function costText(sum: Costs): string {
  return `${sum.unknown ? 'at least ' : ''}$${usd(sum.usd)}${sum.estimated === undefined ? '' : ` (incl. $${usd(sum.estimated)} estimated)`}`;
}
