/**
 * Summarises a V8 CPU profile (`--cpu-prof`, e.g. from `npm run bench -- --cpu-prof`):
 * the functions with the most self time, and the time spent under each of a few
 * inclusive groupings (by package or project file), so that the causes of a missed
 * target can be named by file and function.
 *
 *   npx tsx test/bench/profile-summary.ts bench/.cache/profiles/<file>.cpuprofile [--top=25]
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Summary {
  totalMs: number;
  idleMs: number;
  self: { name: string; ms: number }[];
  selfByFile: { name: string; ms: number }[];
  inclusive: { name: string; ms: number }[];
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Per generated line: [generated column, source index][] from a source map's VLQ mappings. */
function decodeMappings(mappings: string): [number, number][][] {
  const lines: [number, number][][] = [];
  let source = 0;
  for (const line of mappings.split(';')) {
    const segments: [number, number][] = [];
    let column = 0;
    for (const segment of line.split(',')) {
      if (!segment) continue;
      const fields: number[] = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = BASE64.indexOf(char);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += fields[0] ?? 0;
      if (fields.length >= 4) {
        source += fields[1]!;
        segments.push([column, source]);
      }
    }
    lines.push(segments);
  }
  return lines;
}

/** A bundle's source map (file.map beside it), to name the original file of a bundled function. */
const maps = new Map<string, { sources: string[]; lines: [number, number][][] } | null>();
function originalSource(file: string, line: number, column: number): string | undefined {
  if (!maps.has(file)) {
    const mapFile = `${file}.map`;
    if (!existsSync(mapFile)) maps.set(file, null);
    else {
      const map = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[]; mappings: string };
      maps.set(file, { sources: map.sources, lines: decodeMappings(map.mappings) });
    }
  }
  const map = maps.get(file);
  const segments = map?.lines[line];
  if (!map || !segments) return undefined;
  let found: number | undefined;
  for (const [generated, source] of segments) {
    if (generated > column) break;
    found = source;
  }
  return found === undefined ? undefined : map.sources[found];
}

function where(frame: CallFrame): string {
  let url = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
  if (/\.m?js$/.test(url) && url.includes('/bench/.cache/bundles/')) url = originalSource(url, frame.lineNumber, frame.columnNumber) ?? url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (pkg) return `${pkg[1]}/${pkg[2]}`;
  const project = /\/work\/[^/]+\/(.*)$/.exec(url) ?? /((?:infra|shared|functions|test)\/.*)$/.exec(url);
  return project ? project[1]! : url || '(native)';
}

/** A package name for package code, the file for project code, the module for Node's own. */
function group(frame: CallFrame): string {
  const path = where(frame);
  if (path.startsWith('node:')) return path.split('/')[0]!;
  if (/^(?:infra|shared|functions|test)\//.test(path) || path.startsWith('(')) return path;
  return /^((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path;
}

function label(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'} ${where(frame)}:${frame.lineNumber + 1}`;
}

export function summarise(profile: Profile, top = 25): Summary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });

  const self = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    total += us;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    self.set(label(node.callFrame), (self.get(label(node.callFrame)) ?? 0) + us);
    const file = group(node.callFrame);
    selfByFile.set(file, (selfByFile.get(file) ?? 0) + us);
    // Inclusive time: every distinct function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const name = label(byId.get(cursor)!.callFrame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const sorted = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 100) / 10 }));
  return { totalMs: Math.round(total / 1000), idleMs: Math.round(idle / 1000), self: sorted(self), selfByFile: sorted(selfByFile), inclusive: sorted(inclusive) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv.slice(2).find((a) => !a.startsWith('--'));
  const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
  if (!file) {
    process.stderr.write('usage: npx tsx test/bench/profile-summary.ts <file.cpuprofile> [--top=25]\n');
    process.exit(2);
  }
  const summary = summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, top);
  const print = (title: string, list: { name: string; ms: number }[]) => {
    process.stdout.write(`\n${title}\n`);
    for (const { name, ms } of list) process.stdout.write(`${ms.toFixed(1).padStart(9)} ms  ${name}\n`);
  };
  process.stdout.write(`profile: ${summary.totalMs} ms sampled, ${summary.idleMs} ms idle\n`);
  print('self time by function', summary.self);
  print('self time by file or package', summary.selfByFile);
  print('inclusive time (function and everything it calls)', summary.inclusive);
}
