/**
 * 5. Cold start: every Lambda entry point under functions/ (a file that exports
 * `handler`) bundled with esbuild exactly as the stack's GatewayFunction has CDK bundle
 * it (ESM, minified, external source map without sources content, `@aws-sdk/*` external,
 * the CommonJS `require` banner, the stack's target), then imported in fresh Node
 * processes. Import time is `await import(bundle)` inside the new process, with
 * `--enable-source-maps` as the function's NODE_OPTIONS sets it, and without.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { childEnv, ROOT } from './children.js';
import { median, rotate, round } from './stats.js';
import { check, type BenchContext, type BenchOutcome, type Benchmark, type Row } from './types.js';

const FUNCTIONS_DIR = join(ROOT, 'functions');
const STACK_FUNCTION = join(ROOT, 'infra', 'stack', 'gateway-function.ts');
const OUT_DIR = join(ROOT, 'bench', '.cache', 'bundles');
const KB = 1_000;

/** Lambda entry points: functions/*.ts that export a `handler`. */
export function lambdaEntries(): string[] {
  return readdirSync(FUNCTIONS_DIR)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .filter((file) => /export\s+(?:const|async\s+function|function|let)\s+handler\b/.test(readFileSync(join(FUNCTIONS_DIR, file), 'utf8')))
    .map((file) => basename(file, '.ts'))
    .sort((a, b) => (a === 'api' ? -1 : b === 'api' ? 1 : a.localeCompare(b)));
}

/**
 * The bundling options of infra/stack/gateway-function.ts, read from its source so that a
 * change there (a new target, another banner) is measured here too; the rest mirrors what
 * CDK's NodejsFunction passes to esbuild for the options it sets.
 */
export function stackBundling(): { target: string; banner: string; notes: string[] } {
  const source = readFileSync(STACK_FUNCTION, 'utf8');
  const notes: string[] = [];
  const target = /bundling:\s*{[^}]*?\btarget:\s*'([^']+)'/s.exec(source)?.[1];
  const banner = /const CJS_REQUIRE_SHIM =\s*"((?:[^"\\]|\\.)*)"/s.exec(source)?.[1];
  if (!target) notes.push('could not read the bundling target from gateway-function.ts; used node20');
  if (!banner) notes.push('could not read the require banner from gateway-function.ts; used none');
  return { target: target ?? 'node20', banner: banner ?? '', notes };
}

interface Bundle {
  name: string;
  file: string;
  bytes: number;
  mapBytes: number;
  metafile: Metafile;
}

async function bundle(name: string, options: ReturnType<typeof stackBundling>, dir: string): Promise<Bundle> {
  const outfile = join(dir, name, 'index.mjs');
  const result = await build({
    entryPoints: [join(FUNCTIONS_DIR, `${name}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: options.target,
    mainFields: ['module', 'main'],
    banner: options.banner ? { js: options.banner } : {},
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    external: ['@aws-sdk/*'],
    logLevel: 'warning',
    metafile: true,
  });
  return { name, file: outfile, bytes: statSync(outfile).size, mapBytes: statSync(`${outfile}.map`).size, metafile: result.metafile ?? { inputs: {}, outputs: {} } };
}

/** Bytes of the bundle by package (node_modules/<pkg>) or `(project)`, largest first. */
export function contributions(metafile: Metafile): { name: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const name = match ? match[1]! : '(project)';
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const IMPORT_SCRIPT = `const t0 = performance.now(); await import(process.env.BENCH_BUNDLE_URL); const t1 = performance.now(); process.stdout.write(JSON.stringify({ importMs: t1 - t0, sinceStartMs: t1 }));`;

/** One fresh process that imports the bundle; its import time and its time from process start. */
function importOnce(file: string, sourceMaps: boolean, env: Record<string, string>, extraArgs: string[] = []): Promise<{ importMs: number; sinceStartMs: number }> {
  return new Promise((resolve, reject) => {
    const args = [...extraArgs, ...(sourceMaps ? ['--enable-source-maps'] : []), '--input-type=module', '-e', IMPORT_SCRIPT];
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, BENCH_BUNDLE_URL: pathToFileURL(file).href }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(stdout) as { importMs: number; sinceStartMs: number });
      } catch (error) {
        reject(new Error(`importing ${file} failed (${(error as Error).message}): ${stderr.slice(0, 500)}`));
      }
    });
  });
}

export const coldStart: Benchmark = {
  id: 'cold-start',
  title: '5. Cold start of the Lambda bundles',
  async run(context) {
    const options = stackBundling();
    // A folder of this run's own (concurrent runs, e.g. two `npm test`, must not share one); kept for --cpu-prof.
    const dir = join(OUT_DIR, `${process.pid}-${Date.now()}`);
    try {
      return await measure(context, options, dir);
    } finally {
      if (!context.cpuProfDir) rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function measure(context: BenchContext, options: ReturnType<typeof stackBundling>, dir: string): Promise<BenchOutcome> {
  const rounds = context.smoke ? 1 : 5;
  const perRound = context.smoke ? 1 : 3;
  const notes = [...options.notes];
  const bundles: Bundle[] = [];
  for (const name of lambdaEntries()) bundles.push(await bundle(name, options, dir));
  // What the function's environment holds at import (gateway-function.ts), Powertools quiet.
  const env = childEnv({
    POWERTOOLS_SERVICE_NAME: 'model-compare-gateway',
    POWERTOOLS_METRICS_NAMESPACE: 'ModelCompareGateway',
    POWERTOOLS_LOGGER_LOG_EVENT: 'false',
    POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
  });

  type Sample = { importMs: number; sinceStartMs: number; plainImportMs: number };
  const samples = new Map<string, Sample[][]>(bundles.map((b) => [b.name, []]));
  for (const b of bundles) await importOnce(b.file, true, env); // the OS file cache, as a warm Lambda host has it
  for (let r = 0; r < rounds; r++) {
    const perBundle = new Map<string, Sample[]>(bundles.map((b) => [b.name, []]));
    for (let i = 0; i < perRound; i++) {
      for (const b of rotate(bundles, r + i)) {
        const withMaps = await importOnce(b.file, true, env);
        const plain = await importOnce(b.file, false, env);
        perBundle.get(b.name)!.push({ ...withMaps, plainImportMs: plain.importMs });
      }
    }
    for (const b of bundles) samples.get(b.name)!.push(perBundle.get(b.name)!);
  }
  if (context.cpuProfDir) {
    // One profiled import per bundle; profile-summary.ts names bundled functions' files through the source map.
    for (const b of bundles) {
      const dir = join(context.cpuProfDir, `cold-start-${b.name}-${Date.now()}`);
      mkdirSync(dir, { recursive: true });
      await importOnce(b.file, true, env, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    }
  }
  const rows: Row[] = bundles.map((b) => {
    const list = samples.get(b.name)!;
    const statistic = (key: keyof Sample) => round(median(list.map((s) => median(s.map((x) => x[key])))), 1);
    return {
      function: b.name,
      sizeKB: round(b.bytes / KB, 1),
      mapKB: round(b.mapBytes / KB, 1),
      importMs: statistic('importMs'),
      plainImportMs: statistic('plainImportMs'),
      sinceStartMs: statistic('sinceStartMs'),
    };
  });
  for (const b of bundles) {
    const top = contributions(b.metafile)
      .slice(0, 6)
      .map((c) => `${c.name} ${round(c.bytes / KB, 1)}`)
      .join(', ');
    notes.push(`${b.name} bundle by package (KB): ${top}`);
  }
  const api = rows.find((row) => row.function === 'api');
  if (!api) notes.push('no functions/api.ts entry found');
  return {
    status: 'ok',
    notes,
    method: `esbuild ${options.target} ESM bundles as the stack builds them (KB = 1,000 bytes); import time in a fresh \`node\` process (${process.version}), ${rounds} rounds x ${perRound} processes per bundle and mode, bundles alternating; median of round medians`,
    columns: [
      { key: 'function', label: 'function' },
      { key: 'sizeKB', label: 'bundle KB', digits: 1 },
      { key: 'mapKB', label: 'source map KB', digits: 1 },
      { key: 'importMs', label: 'import ms (--enable-source-maps)', digits: 1 },
      { key: 'plainImportMs', label: 'import ms (no source maps)', digits: 1 },
      { key: 'sinceStartMs', label: 'process start to imported ms', digits: 1 },
    ],
    rows,
    targets: [
      check('api bundle size', '<=', 300, typeof api?.sizeKB === 'number' ? api.sizeKB : null, 'KB'),
      check('api import time (as deployed, --enable-source-maps)', '<=', 40, typeof api?.importMs === 'number' ? api.importMs : null, 'ms'),
    ],
  };
}
