/**
 * `npm run bench`: every benchmark of issue 7 on this machine; prints a table and writes
 * bench/results/latest.{json,md} and a dated copy.
 *
 *   npm run bench                         all, full size (a few minutes)
 *   npm run bench -- --only=overhead,4    some (by id or number)
 *   npm run bench -- --smoke              tiny counts: checks the benchmarks still run (not written)
 *   npm run bench -- --cpu-prof           gateway processes write CPU profiles to bench/.cache/profiles
 *   npm run bench -- --no-portkey         leave the Portkey comparison out
 *   npm run bench -- --no-write           print only
 */
import { join } from 'node:path';
import { ROOT } from './children.js';
import { formatText, writeReport } from './report.js';
import { runSuite } from './suite.js';
import { BENCH_IDS, type BenchId } from './types.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const known = ['smoke', 'cpu-prof', 'no-portkey', 'no-write', 'only', 'help'];
const unknown = args.filter((a) => !known.includes(a.replace(/^--/, '').split('=')[0]!));
if (flag('help') || unknown.length > 0) {
  if (unknown.length > 0) process.stderr.write(`unknown argument(s): ${unknown.join(' ')}\n`);
  process.stderr.write(`usage: npm run bench -- [--only=${BENCH_IDS.join(',')}|1..${BENCH_IDS.length}] [--smoke] [--cpu-prof] [--no-portkey] [--no-write]\n`);
  process.exit(unknown.length > 0 ? 2 : 0);
}

let only: Set<BenchId> | undefined;
const onlyArg = value('only');
if (onlyArg) {
  only = new Set();
  for (const part of onlyArg.split(',').map((p) => p.trim())) {
    const id = /^\d+$/.test(part) ? BENCH_IDS[Number(part) - 1] : BENCH_IDS.find((b) => b === part);
    if (!id) {
      process.stderr.write(`--only: unknown benchmark "${part}" (one of ${BENCH_IDS.join(', ')} or 1..${BENCH_IDS.length})\n`);
      process.exit(2);
    }
    only.add(id);
  }
}

const smoke = flag('smoke');
const cpuProfDir = flag('cpu-prof') ? join(ROOT, 'bench', '.cache', 'profiles') : undefined;
const report = await runSuite({
  command: ['npm run bench', ...(args.length ? ['--', ...args] : [])].join(' '),
  smoke,
  only,
  portkey: flag('no-portkey') ? 'off' : 'install',
  cpuProfDir,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(formatText(report));
if (!smoke && !flag('no-write')) {
  for (const file of writeReport(report)) process.stderr.write(`wrote ${file.slice(ROOT.length)}\n`);
}
if (cpuProfDir) process.stderr.write(`CPU profiles in ${cpuProfDir.slice(ROOT.length)}: npx tsx test/bench/profile-summary.ts <file.cpuprofile>\n`);
process.exit(report.results.some((r) => r.status === 'failed') ? 1 : 0);
