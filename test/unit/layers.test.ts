import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layer rule (docs/architecture.md): a module imports only from its own layer or the
 * layers below it. Lowest first; a path names a folder (every file under it) or one file,
 * and the longest matching path decides. A file no entry names fails the test, so a new
 * folder gets its layer decided when it is added.
 */
const LAYERS: readonly (readonly string[])[] = [
  // 0. foundation: no domain knowledge
  [
    'shared/errors.ts',
    'shared/ids.ts',
    'shared/lazy.ts',
    'shared/bounded-map.ts',
    'shared/log.ts',
    'shared/seeded-random.ts',
    'shared/text',
    'shared/http/post.ts',
    'shared/http/aws-handler.ts',
    'shared/http/redact.ts',
    'shared/http/server-timing.ts',
    'shared/sdk',
    'shared/aws-client-config.ts',
    'shared/aws-credentials.ts',
    'shared/deadlines.ts',
  ],
  // 1. the contract and the catalog (and the configuration, which names catalog types)
  ['shared/contract', 'shared/catalog', 'shared/config.ts'],
  // 2. one vendor call and its price; the secrets and the claim-check store they read
  ['shared/providers', 'shared/pricing', 'shared/secrets', 'shared/claim-check'],
  // 3. the fan-out: every model of one request
  ['shared/compare'],
  // 4. judging, and the request's plan (every call it makes, with its cost bound)
  ['shared/judging', 'shared/plan'],
  // 5. storage: repositories only
  ['shared/storage'],
  // 6. credits: the money path over the repositories
  ['shared/credits'],
  // 7. the orchestrator: one request from key to log
  ['shared/orchestrator', 'shared/idempotency', 'shared/auth'],
  // 8. composition roots and the HTTP edge
  ['shared/gateway.ts', 'shared/workflow-tasks.ts', 'shared/http'],
  // 9. Lambda entry points
  ['functions'],
  // 10. the CDK app, the local host, the admin CLI, the contract generator
  ['infra'],
];

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE = /\.(ts|mts|mjs|cjs)$/;
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]((?:\.{1,2}\/|#sdk\/)[^'"]+)['"]/g;

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The layer of a repository-relative path, or undefined when no entry names it. */
function layerOf(path: string): number | undefined {
  let best: { layer: number; length: number } | undefined;
  LAYERS.forEach((paths, layer) => {
    for (const entry of paths) {
      if ((path === entry || path.startsWith(`${entry}/`)) && entry.length > (best?.length ?? -1)) best = { layer, length: entry.length };
    }
  });
  return best?.layer;
}

/** Every relative import of a file, and every `#sdk/<name>` (package.json's `imports`), as repository-relative paths (`.js` written for `.ts` resolved back). */
function importsOf(file: string, text: string): string[] {
  return [...text.matchAll(IMPORT)].map((match) => {
    if (match[1]!.startsWith('#sdk/')) return `shared/sdk/${match[1]!.slice('#sdk/'.length)}.ts`;
    const target = relative(ROOT, resolve(ROOT, dirname(file), match[1] as string))
      .split('\\')
      .join('/');
    return target.replace(/\.js$/, '.ts');
  });
}

/** The imports that climb: `from -> to` where the target's layer is above the importer's. */
function upwardImports(files: readonly { path: string; text: string }[]): string[] {
  return files.flatMap(({ path, text }) => {
    const own = layerOf(path) as number;
    return importsOf(path, text)
      .filter((target) => (layerOf(target) ?? -1) > own)
      .map((target) => `${path} (layer ${own}) -> ${target} (layer ${layerOf(target)})`);
  });
}

/** The import cycles among the files under `folder`: each as the chain of files, its first file repeated last. */
function importCycles(all: readonly { path: string; text: string }[], folder: string): string[] {
  const inside = all.filter((f) => f.path.startsWith(`${folder}/`));
  const edges = new Map(inside.map((f) => [f.path, importsOf(f.path, f.text).filter((target) => target.startsWith(`${folder}/`))]));
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (path: string, chain: string[]): void => {
    const at = chain.indexOf(path);
    if (at >= 0) {
      cycles.push([...chain.slice(at), path].join(' -> '));
      return;
    }
    if (done.has(path)) return;
    for (const target of edges.get(path) ?? []) visit(target, [...chain, path]);
    done.add(path);
  };
  for (const path of edges.keys()) visit(path, []);
  return cycles;
}

const files = ['shared', 'functions', 'infra'].flatMap(sourceFiles).map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

describe('layers', () => {
  it('reads the imports of the source tree', () => {
    // A parser that found nothing would pass every rule below.
    expect(files.length).toBeGreaterThan(100);
    expect(importsOf('shared/gateway.ts', files.find((f) => f.path === 'shared/gateway.ts')?.text ?? '')).toContain('shared/credits/store.ts');
    expect(importsOf('shared/claim-check/s3.ts', files.find((f) => f.path === 'shared/claim-check/s3.ts')?.text ?? '')).toContain('shared/sdk/s3.ts');
  });

  it('gives every source file a layer', () => {
    expect(files.filter((f) => layerOf(f.path) === undefined).map((f) => f.path)).toEqual([]);
  });

  it('finds an upward import when there is one', () => {
    expect(upwardImports([{ path: 'shared/storage/x.ts', text: "import { CreditsService } from '../credits/credits-service.js';" }])).toEqual([
      'shared/storage/x.ts (layer 5) -> shared/credits/credits-service.ts (layer 6)',
    ]);
    expect(upwardImports([{ path: 'shared/credits/x.ts', text: "import type { Account } from '../storage/accounts.js';" }])).toEqual([]);
  });

  it('has no import that climbs to a higher layer', () => {
    expect(upwardImports(files)).toEqual([]);
  });

  it('finds an import cycle when there is one', () => {
    expect(
      importCycles(
        [
          { path: 'infra/x/a.ts', text: "import type { B } from './b.js';" },
          { path: 'infra/x/b.ts', text: "import { c } from './c/index.js';" },
          { path: 'infra/x/c/index.ts', text: "import type { A } from '../a.js';" },
          { path: 'infra/x/d.ts', text: "import type { A } from './a.js';" },
        ],
        'infra/x',
      ),
    ).toEqual(['infra/x/a.ts -> infra/x/b.ts -> infra/x/c/index.ts -> infra/x/a.ts']);
  });

  it('has no import cycle inside the provider simulator (server -> protocols -> each protocol -> types and helpers)', () => {
    expect(importCycles(files, 'infra/local/simulator')).toEqual([]);
  });
});
