/** Runs the benchmarks in order, one at a time, and gathers their results into one report. */
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { coldStart } from './cold-start.js';
import { contention } from './contention.js';
import { fanout } from './fanout.js';
import { judging } from './judging.js';
import { largeRequest } from './large-request.js';
import { overhead } from './overhead.js';
import { schemaStall } from './schema-stall.js';
import { throughput } from './throughput.js';
import type { BenchContext, BenchId, BenchReport, BenchResult, Benchmark, MachineInfo } from './types.js';

export const BENCHMARKS: readonly Benchmark[] = [overhead, fanout, judging, throughput, coldStart, contention, schemaStall, largeRequest];

export interface SuiteOptions extends BenchContext {
  /** Only these benchmarks; all when absent. */
  only?: ReadonlySet<BenchId>;
  command: string;
}

export function machineInfo(): Omit<MachineInfo, 'loadAverageEnd'> {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    loadAverageStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

export async function runSuite(options: SuiteOptions): Promise<BenchReport> {
  const started = Date.now();
  const machine = machineInfo();
  const results: BenchResult[] = [];
  for (const benchmark of BENCHMARKS) {
    if (options.only && !options.only.has(benchmark.id)) continue;
    options.log(`${benchmark.title} ...`);
    const t0 = performance.now();
    let result: BenchResult;
    try {
      const outcome = await benchmark.run(options);
      result = { id: benchmark.id, title: benchmark.title, ...outcome, durationMs: Math.round(performance.now() - t0) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      result = {
        id: benchmark.id,
        title: benchmark.title,
        status: 'failed',
        notes: [`failed: ${message}`],
        method: '',
        columns: [],
        rows: [],
        targets: [],
        durationMs: Math.round(performance.now() - t0),
      };
    }
    options.log(`  ${result.status} in ${(result.durationMs / 1000).toFixed(1)} s`);
    results.push(result);
  }
  return {
    command: options.command,
    mode: options.smoke ? 'smoke' : 'full',
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    machine: { ...machine, loadAverageEnd: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    results,
  };
}
