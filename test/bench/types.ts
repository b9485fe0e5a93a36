/** The shapes every benchmark returns and the runner prints and writes. */

export const BENCH_IDS = ['overhead', 'fanout', 'judging', 'throughput', 'cold-start', 'contention', 'schema-stall', 'large-request'] as const;
export type BenchId = (typeof BENCH_IDS)[number];

export interface Column {
  key: string;
  label: string;
  /** Digits after the point when printed; integers print without. */
  digits?: number;
}

/** null: not measured in this run (a skipped comparison), printed as "n/a". */
export type Cell = number | string | null;
export type Row = Record<string, Cell>;

export interface TargetCheck {
  /** What the issue asks, in words: "api bundle size". */
  name: string;
  comparison: '<=' | '>=';
  /** null when the limit is itself measured (a peer's figure) and could not be. */
  limit: number | null;
  /** null when it could not be measured in this run (e.g. Portkey unavailable). */
  actual: number | null;
  unit: string;
  /** null when not measured. */
  met: boolean | null;
}

export interface BenchResult {
  id: BenchId;
  title: string;
  status: 'ok' | 'skipped' | 'failed';
  /** Why it was skipped or failed, or a caveat about this run. */
  notes: string[];
  /** How it was measured (rounds, samples, what the ratio divides by). */
  method: string;
  columns: Column[];
  rows: Row[];
  targets: TargetCheck[];
  durationMs: number;
}

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** 1-minute load average when the run started and ended: other work on the machine makes figures noisy. */
  loadAverageStart: number;
  loadAverageEnd: number;
}

export interface BenchReport {
  command: string;
  mode: 'full' | 'smoke';
  startedAt: string;
  durationMs: number;
  machine: MachineInfo;
  results: BenchResult[];
}

/** What every benchmark module receives. */
export interface BenchContext {
  /** Tiny iteration counts: only checks that each benchmark produces well-formed figures. */
  smoke: boolean;
  /** Portkey comparison: install on demand, use only if already installed, or leave out. */
  portkey: 'install' | 'if-cached' | 'off';
  /** When set, every gateway process runs with --cpu-prof and writes its profile here. */
  cpuProfDir?: string;
  log(line: string): void;
}

/** What a benchmark module measures; the runner adds its id, title and duration. */
export type BenchOutcome = Omit<BenchResult, 'id' | 'title' | 'durationMs'>;

export interface Benchmark {
  id: BenchId;
  title: string;
  run(context: BenchContext): Promise<BenchOutcome>;
}

export function check(name: string, comparison: TargetCheck['comparison'], limit: number | null, actual: number | null, unit: string): TargetCheck {
  const measured = (value: number | null): value is number => value !== null && Number.isFinite(value);
  const met = !measured(actual) || !measured(limit) ? null : comparison === '<=' ? actual <= limit : actual >= limit;
  return { name, comparison, limit, actual, unit, met };
}
