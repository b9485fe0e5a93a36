/** Small statistics for the benchmarks: nearest-rank percentiles and medians. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The method of every comparison here: the median of each round's median (or other statistic). */
export function medianOfRounds<T>(rounds: readonly T[], statistic: (round: T) => number): number {
  return median(rounds.map(statistic));
}

/** `order` rotated by `round`, so that no path always runs first (or last) within a round. */
export function rotate<T>(order: readonly T[], round: number): T[] {
  const k = order.length === 0 ? 0 : round % order.length;
  return [...order.slice(k), ...order.slice(0, k)];
}

/**
 * `order` rotated by `round` and, every other round, reversed: no path always runs first
 * (or last), nor always right after the same other path (whose leftover work, such as the
 * writes after a gateway's answer, would then always fall on it).
 */
export function rotateBothWays<T>(order: readonly T[], round: number): T[] {
  const rotated = rotate(order, Math.floor(round / 2));
  return round % 2 === 0 ? rotated : rotated.reverse();
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The median of each named figure over `samples` (a figure missing from some samples is taken over those that have it). */
export function medianByName(samples: readonly Record<string, number>[]): Record<string, number> {
  const names = [...new Set(samples.flatMap((sample) => Object.keys(sample)))];
  return Object.fromEntries(names.map((name) => [name, median(samples.flatMap((sample) => (name in sample ? [sample[name]!] : [])))]));
}

/** `reserve 1.2, models 0.6, ... ms`: named figures in one line, in their order, to 0.1 ms. */
export function describeFigures(figures: Record<string, number>): string {
  return `${Object.entries(figures)
    .map(([name, value]) => `${name} ${value.toFixed(1)}`)
    .join(', ')} ms`;
}
