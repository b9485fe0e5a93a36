/**
 * 5. Cold start: every Lambda entry point under functions/ (a file that exports
 * `handler`) bundled by infra/stack/bundle.ts, the very function the stack's
 * GatewayFunction bundles with, then imported in fresh Node processes. Import time is
 * `await import(bundle)` inside the new process, as deployed (no source maps: the stack
 * sets no --enable-source-maps) and, for reference, with `--enable-source-maps`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Metafile } from 'esbuild';
import { BUNDLE_OPTIONS, bundleEntry, bundleFunction, bundleSizes, FUNCTIONS_DIR } from '../../infra/stack/bundle.js';
import { childEnv, freshNode, ROOT } from './children.js';
import { measureFirstInvocations } from './first-invocation.js';
import { median, rotate, round } from './stats.js';
import { check, type BenchContext, type BenchOutcome, type Benchmark, type Row } from './types.js';

const OUT_DIR = join(ROOT, 'bench', '.cache', 'bundles');
/** How late DynamoDB and Secrets Manager answer each request of a cold api container's first invocations: about a call over a new connection in a region (a warm connection answers faster there). */
const AWS_LATENCY_MS = 25;
const KB = 1_000;

/** Lambda entry points: functions/*.ts that export a `handler`. */
export function lambdaEntries(): string[] {
  return readdirSync(FUNCTIONS_DIR)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .filter((file) => /export\s+(?:const|async\s+function|function|let)\s+handler\b/.test(readFileSync(join(FUNCTIONS_DIR, file), 'utf8')))
    .map((file) => basename(file, '.ts'))
    .sort((a, b) => (a === 'api' ? -1 : b === 'api' ? 1 : a.localeCompare(b)));
}

interface Bundle {
  name: string;
  file: string;
  eagerFiles: string[];
  eagerBytes: number;
  lazyBytes: number;
  mapBytes: number;
  metafile: Metafile;
}

function bundle(name: string, dir: string): Bundle {
  const outdir = join(dir, name);
  const metafile = name === FLOOR ? bundleEntry(FLOOR_ENTRY, outdir) : bundleFunction(name, outdir);
  return { name, file: join(outdir, 'index.mjs'), ...bundleSizes(metafile, outdir), metafile };
}

/** The floor row: an entry that only imports and constructs the api function's dependencies (the SDK clients, Middy, Powertools). */
const FLOOR = 'floor: dependencies only';
const FLOOR_ENTRY = fileURLToPath(new URL('./floor/dependencies-only.ts', import.meta.url));

/** Bytes of the bundle's outputs (all, or those named) by package (node_modules/<pkg>) or `(project)`, largest first. */
export function contributions(metafile: Metafile, files: readonly string[] = Object.keys(metafile.outputs)): { name: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const output of files.map((file) => metafile.outputs[file]!)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const name = match ? match[1]! : '(project)';
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const IMPORT_SCRIPT = `const t0 = performance.now(); await import(process.env.BENCH_BUNDLE_URL); const t1 = performance.now(); process.stdout.write('\\n' + JSON.stringify({ importMs: t1 - t0, sinceStartMs: t1 }) + '\\n');`;

/** One fresh process that imports the bundle; its import time and its time from process start. */
function importOnce(file: string, sourceMaps: boolean, env: Record<string, string>, extraArgs: string[] = []): Promise<{ importMs: number; sinceStartMs: number }> {
  const args = [...extraArgs, ...(sourceMaps ? ['--enable-source-maps'] : [])];
  return freshNode(IMPORT_SCRIPT, { ...env, BENCH_BUNDLE_URL: pathToFileURL(file).href }, `importing ${file}`, args);
}

export const coldStart: Benchmark = {
  id: 'cold-start',
  title: '5. Cold start of the Lambda bundles',
  async run(context) {
    // A folder of this run's own (concurrent runs, e.g. two `npm test`, must not share one); kept for --cpu-prof.
    const dir = join(OUT_DIR, `${process.pid}-${Date.now()}`);
    try {
      return await measure(context, dir);
    } finally {
      if (!context.cpuProfDir) rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function measure(context: BenchContext, dir: string): Promise<BenchOutcome> {
  const rounds = context.smoke ? 1 : 5;
  const perRound = context.smoke ? 1 : 3;
  const notes: string[] = [];
  const bundles = [...lambdaEntries(), FLOOR].map((name) => bundle(name, dir));
  // What the function's environment holds at import (gateway-function.ts), Powertools quiet.
  const env = childEnv({
    POWERTOOLS_SERVICE_NAME: 'model-compare-gateway',
    POWERTOOLS_METRICS_NAMESPACE: 'ModelCompareGateway',
    POWERTOOLS_LOGGER_LOG_EVENT: 'false',
    POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
    POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
  });

  type Sample = { importMs: number; sinceStartMs: number; mapsImportMs: number };
  const samples = new Map<string, Sample[][]>(bundles.map((b) => [b.name, []]));
  for (const b of bundles) await importOnce(b.file, false, env); // the OS file cache, as a warm Lambda host has it
  for (let r = 0; r < rounds; r++) {
    const perBundle = new Map<string, Sample[]>(bundles.map((b) => [b.name, []]));
    for (let i = 0; i < perRound; i++) {
      for (const b of rotate(bundles, r + i)) {
        const deployed = await importOnce(b.file, false, env);
        const withMaps = await importOnce(b.file, true, env);
        perBundle.get(b.name)!.push({ ...deployed, mapsImportMs: withMaps.importMs });
      }
    }
    for (const b of bundles) samples.get(b.name)!.push(perBundle.get(b.name)!);
  }
  if (context.cpuProfDir) {
    // One profiled import per bundle; profile-summary.ts names bundled functions' files through the source map.
    for (const b of bundles) {
      const dir = join(context.cpuProfDir, `cold-start-${b.name}-${Date.now()}`);
      mkdirSync(dir, { recursive: true });
      await importOnce(b.file, false, env, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    }
  }
  const rows: Row[] = bundles.map((b) => {
    const list = samples.get(b.name)!;
    const statistic = (key: keyof Sample) => round(median(list.map((s) => median(s.map((x) => x[key])))), 1);
    return {
      function: b.name,
      sizeKB: round(b.eagerBytes / KB, 1),
      lazyKB: round(b.lazyBytes / KB, 1),
      mapKB: round(b.mapBytes / KB, 1),
      importMs: statistic('importMs'),
      mapsImportMs: statistic('mapsImportMs'),
      sinceStartMs: statistic('sinceStartMs'),
    };
  });
  for (const b of bundles) {
    const top = contributions(b.metafile, b.eagerFiles)
      .slice(0, 6)
      .map((c) => `${c.name} ${round(c.bytes / KB, 1)}`)
      .join(', ');
    notes.push(`${b.name} bundle by package (KB): ${top}`);
  }
  const api = rows.find((row) => row.function === 'api');
  if (!api) notes.push('no functions/api.ts entry found');
  const apiBundle = bundles.find((b) => b.name === 'api');
  if (apiBundle) {
    const processes = context.smoke ? 1 : 15;
    const first = await measureFirstInvocations(apiBundle.file, { processes, latencyMs: AWS_LATENCY_MS, env });
    notes.push(
      `api's first invocations in a fresh process, DynamoDB and Secrets Manager each ${AWS_LATENCY_MS} ms away (every request to either answered ${AWS_LATENCY_MS} ms late: the embedded store behind a delaying forwarder, a Secrets Manager on loopback), the model on the simulator, answers buffered (after the settle): import ${round(first.importMs, 1)} ms, first invocation ${round(first.firstMs, 1)} ms (the provider secret read while the reserve is in flight, the model call, the settle), second ${round(first.secondMs, 1)} ms; median of ${processes} processes (test/bench/first-invocation.ts)`,
    );
  }
  const floor = rows.find((row) => row.function === FLOOR);
  if (api && floor) {
    const over = (key: keyof Row) => round(Number(api[key]) - Number(floor[key]), 1);
    notes.push(
      `api over the floor (test/bench/floor/dependencies-only.ts: the same SDK clients and commands, Middy and its parsers, Powertools, constructed and nothing else): ${over('sizeKB')} KB, ${over('importMs')} ms import; the floor is what the dependencies cost on their own`,
    );
  }
  return {
    status: 'ok',
    notes,
    method: `esbuild ${String(BUNDLE_OPTIONS.target)} ESM bundles built by infra/stack/bundle.ts, as the stack builds them; bundle KB = the entry and the chunks it imports statically (what a cold start loads), chunks on demand = those only a dynamic import loads (KB = 1,000 bytes); import time in a fresh \`node\` process (${process.version}), ${rounds} rounds x ${perRound} processes per bundle and mode, bundles alternating; median of round medians`,
    columns: [
      { key: 'function', label: 'function' },
      { key: 'sizeKB', label: 'bundle KB', digits: 1 },
      { key: 'lazyKB', label: 'chunks on demand KB', digits: 1 },
      { key: 'mapKB', label: 'source maps KB', digits: 1 },
      { key: 'importMs', label: 'import ms (as deployed)', digits: 1 },
      { key: 'mapsImportMs', label: 'import ms with --enable-source-maps', digits: 1 },
      { key: 'sinceStartMs', label: 'process start to imported ms', digits: 1 },
    ],
    rows,
    targets: [
      // Issue 20: no slower than the floor (the same SDK clients, Middy and Powertools, imported and constructed, nothing else).
      check(
        'api import time (as deployed) at or below the floor bundle',
        '<=',
        typeof floor?.importMs === 'number' ? floor.importMs : null,
        typeof api?.importMs === 'number' ? api.importMs : null,
        'ms',
      ),
    ],
  };
}
