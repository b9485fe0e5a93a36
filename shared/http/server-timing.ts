/**
 * The durations of a request's phases, answered in a `Server-Timing` header (W3C Server
 * Timing): `reserve;dur=1.2, models;dur=201.7, total;dur=203.6`. With them a
 * caller sees what the gateway added to the models' own time, request by request, in
 * curl or a browser's network panel. Names only and milliseconds: nothing of the content.
 */
export class ServerTiming {
  private readonly phases: { name: string; ms: number }[] = [];
  private readonly startedAt = performance.now();

  /** Runs `work`, timed as `name` whether it ends or throws. */
  async measure<T>(name: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.phases.push({ name, ms: performance.now() - started });
    }
  }

  /** The header value: the phases in the order they ended, then `total` since this timing began. */
  header(): string {
    return [...this.phases, { name: 'total', ms: performance.now() - this.startedAt }].map(({ name, ms }) => `${name};dur=${ms.toFixed(1)}`).join(', ');
  }
}

/** The phases of a `Server-Timing` header value, by name (ms); a repeated name keeps its first value. */
export function parseServerTiming(value: string | null | undefined): Record<string, number> {
  const phases: Record<string, number> = {};
  for (const entry of (value ?? '').split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([0-9.]+)\s*$/.exec(p)?.[1]).find((d) => d !== undefined);
    if (name && dur !== undefined && !(name in phases)) phases[name] = Number(dur);
  }
  return phases;
}
