import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { PAGE_FILES, type PageAssets } from '../../functions/catalog-handler.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FUNCTIONS_DIR = join(REPO_ROOT, 'functions');
/** The comparison page's sources: its HTML, style sheet and browser script (page/main.ts). */
const PAGE_DIR = join(REPO_ROOT, 'page');

/**
 * ESM output cannot `require()`; CommonJS dependencies bundled into it still do. This
 * gives the bundle a real `require` (under a name no bundled module declares at the top).
 */
const CJS_REQUIRE_SHIM = "import { createRequire as __gatewayCreateRequire } from 'node:module'; const require = __gatewayCreateRequire(import.meta.url);";

/** Where the bundles take aws-xray-sdk-core from: the part of it Powertools' tracer uses (see the file). */
const XRAY_SDK_LITE = fileURLToPath(new URL('./xray-sdk-core-lite.cjs', import.meta.url));

/** Where the bundles take `node:stream/web` from: the `instanceof` Middy core needs, Node's module loaded only then (see the file). */
const STREAM_WEB_LITE = fileURLToPath(new URL('./stream-web-lite.ts', import.meta.url));

/** Where the bundles take `node:http2` from: Node's module loaded when a name of it is first read (see the file). */
const HTTP2_LITE = fileURLToPath(new URL('./http2-lite.ts', import.meta.url));

/** Where the bundles take the SDK's default credential chain from: the environment's credentials, the whole chain only without them (see the file). */
const CREDENTIAL_CHAIN = '@aws-sdk/credential-provider-node';
const CREDENTIAL_CHAIN_LITE = fileURLToPath(new URL('./credential-chain-lite.ts', import.meta.url));

/**
 * The SDK clients bundled apart (bundleOnDemandSdks), each imported as `#sdk/<name>`: the
 * re-exports in shared/sdk/<name>.ts, mapped by package.json's `imports` for tsx and the
 * tests. Only S3 (claim checks) and the SDK's whole credential chain (credential-chain-lite.ts)
 * are: see docs/aws-clients.md#bundles.
 */
const SDK_PREFIX = '#sdk/';
const SDK_DIR = join(REPO_ROOT, 'shared/sdk');

/**
 * How every Lambda function is bundled (the stack) and measured (the cold-start bench):
 * one ESM entry `index.mjs` plus chunks for what is only imported on demand (the judging
 * code, the protocols' adapters, the Step Functions and Bedrock clients), so a cold start
 * parses none of them (but the HTTP/2 handler Bedrock's client names, which the SDK's
 * handler package holds beside the HTTP/1.1 one; `node:http2` itself loads only when read);
 * the S3 client and the credential chain beyond the environment apart (bundleOnDemandSdks).
 */
export const BUNDLE_OPTIONS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  // DESIGN.md: bundle for Node 20 so the same code runs in development and on nodejs22.x.
  target: 'node20',
  mainFields: ['module', 'main'],
  banner: { js: CJS_REQUIRE_SHIM },
  splitting: true,
  entryNames: 'index',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  // The AWS SDK is bundled, not taken from the runtime: its ESM build tree-shaken to the
  // commands the functions send, at the version the lockfile pins (one @smithy/* set; the S3
  // client bundled apart carries its own copy of the core).
  alias: { 'aws-xray-sdk-core': XRAY_SDK_LITE, 'node:stream/web': STREAM_WEB_LITE, 'node:http2': HTTP2_LITE, http2: HTTP2_LITE, [CREDENTIAL_CHAIN]: CREDENTIAL_CHAIN_LITE },
  // The SDK clients imported as #sdk/<name> are bundled apart (bundleOnDemandSdks).
  external: [`${SDK_PREFIX}*`],
  logLevel: 'warning',
  metafile: true,
};

/**
 * The functions that check `response_schema`s, and what their bundle carries for it: the
 * schema thread (shared/contract/schema-checker.ts) as one file of its own beside
 * index.mjs, which the function starts as a worker thread on its first schema.
 */
const SCHEMA_CHECKING = new Set(['api', 'generate', 'judge']);
export const SCHEMA_WORKER_FILE = 'schema-worker.mjs';
const SCHEMA_THREAD = join(REPO_ROOT, 'shared/contract/schema-thread.ts');

/** Bundles `functions/<source>.ts` into `outdir` (index.mjs, its chunks and their source maps; `schema-worker.mjs` where it checks schemas). */
export function bundleFunction(source: string, outdir: string): Metafile {
  const metafile = bundleEntry(join(FUNCTIONS_DIR, `${source}.ts`), outdir);
  if (source === 'catalog') {
    const page = buildPage();
    for (const [part, file] of Object.entries(PAGE_FILES)) writeFileSync(join(outdir, file), page[part as keyof PageAssets]);
  }
  if (SCHEMA_CHECKING.has(source)) {
    const { entryNames: _entry, chunkNames: _chunk, ...single } = BUNDLE_OPTIONS;
    buildSync({ ...single, splitting: false, metafile: false, entryPoints: [SCHEMA_THREAD], outfile: join(outdir, SCHEMA_WORKER_FILE) });
  }
  return metafile;
}

/**
 * The comparison page as it is served: page/main.ts with DOMPurify, and its Markdown thread
 * (page/markdown-thread.ts) with marked, each bundled into one classic script (the page's CSP
 * allows no inline code and no modules from elsewhere), built in memory, for the browsers of
 * the last two years.
 */
export function buildPage(): PageAssets {
  const [script, markdown] = ['main.ts', 'markdown-thread.ts'].map((entry) => {
    const result = buildSync({
      entryPoints: [join(PAGE_DIR, entry)],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      target: ['chrome120', 'firefox121', 'safari17'],
      minify: true,
      legalComments: 'eof',
      write: false,
      logLevel: 'warning',
    });
    const file = result.outputFiles[0];
    if (!file) throw new Error(`esbuild returned no page script for ${entry}`);
    return file.text;
  }) as [string, string];
  const read = (file: string) => readFileSync(join(PAGE_DIR, file), 'utf8');
  return { html: read('index.html'), script, markdown, css: read('page.css') };
}

/** Bundles any entry file as the functions are bundled (the cold-start bench's floor entry). */
export function bundleEntry(entryPoint: string, outdir: string): Metafile {
  const result = buildSync({ ...BUNDLE_OPTIONS, entryPoints: [entryPoint], outdir });
  if (!result.metafile) throw new Error(`esbuild returned no metafile for ${entryPoint}`);
  return bundleOnDemandSdks(result.metafile, outdir);
}

/**
 * The `#sdk/<name>` clients the bundle imports, bundled apart under `sdk/` (shared code in
 * `sdk/chunks/`), with a package.json whose `imports` maps `#sdk/*` there, so Node resolves
 * them from index.mjs and from every chunk alike. Bundled with the function, the S3 client
 * shares the SDK's core with the DynamoDB client, and esbuild then moves every part of that
 * core S3 reaches (its XML protocol, waiters, checksum streams) into chunks the function
 * imports at its cold start: about 3 ms of the api's import. Apart, it brings its own copy
 * of the core, which loads with it, on a container's first claim check. Returns the
 * metafile of both builds.
 */
function bundleOnDemandSdks(metafile: Metafile, outdir: string): Metafile {
  const names = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) if (imported.external && imported.path.startsWith(SDK_PREFIX)) names.add(imported.path.slice(SDK_PREFIX.length));
  }
  if (names.size === 0) return metafile;
  const entryPoints = Object.fromEntries([...names].sort().map((name) => [name, join(SDK_DIR, `${name}.ts`)]));
  // The clients apart take the SDK's whole credential chain: it is one of them (#sdk/credential-provider-node).
  const { [CREDENTIAL_CHAIN]: _, ...alias } = BUNDLE_OPTIONS.alias ?? {};
  const apart = buildSync({ ...BUNDLE_OPTIONS, alias, entryPoints, entryNames: '[name]', outdir: join(outdir, 'sdk') });
  if (!apart.metafile) throw new Error('esbuild returned no metafile for the on-demand SDK clients');
  writeFileSync(join(outdir, 'package.json'), `${JSON.stringify({ imports: { [`${SDK_PREFIX}*`]: './sdk/*.mjs' } }, null, 2)}\n`);
  return { inputs: { ...metafile.inputs, ...apart.metafile.inputs }, outputs: { ...metafile.outputs, ...apart.metafile.outputs } };
}

/** The output of the client `name` bundled apart (bundleOnDemandSdks). */
function apartOutput(outputs: Metafile['outputs'], name: string): string {
  const file = Object.keys(outputs).find((path) => path === `sdk/${name}.mjs` || path.endsWith(`/sdk/${name}.mjs`));
  if (!file) throw new Error(`the bundle imports ${SDK_PREFIX}${name}, which it does not carry`);
  return file;
}

/** Output bytes of a bundle: what a cold start loads (the entry and the chunks it imports statically) and what waits for a dynamic import. */
export function bundleSizes(metafile: Metafile, outdir: string): { eagerFiles: string[]; eagerBytes: number; lazyBytes: number; mapBytes: number } {
  const outputs = metafile.outputs;
  // The function's entry (entryNames: 'index'); the targets of dynamic imports are entry points of the metafile too.
  const entry = Object.keys(outputs).find((file) => outputs[file]!.entryPoint !== undefined && /(^|\/)index\.mjs$/.test(file));
  if (!entry) throw new Error('the bundle has no entry output');
  const eager = new Set<string>();
  const visit = (file: string) => {
    if (eager.has(file)) return;
    eager.add(file);
    for (const imported of outputs[file]!.imports) {
      if (imported.kind !== 'import-statement') continue;
      if (!imported.external) visit(imported.path);
      // A client bundled apart, imported statically: its module under sdk/ loads at the cold start too.
      else if (imported.path.startsWith(SDK_PREFIX)) visit(apartOutput(outputs, imported.path.slice(SDK_PREFIX.length)));
    }
  };
  visit(entry);
  let eagerBytes = 0;
  let lazyBytes = 0;
  for (const file of Object.keys(outputs)) {
    if (file.endsWith('.map')) continue;
    if (eager.has(file)) eagerBytes += outputs[file]!.bytes;
    else lazyBytes += outputs[file]!.bytes;
  }
  const mapBytes = readdirSync(outdir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.map'))
    .reduce((sum, file) => sum + statSync(join(outdir, file)).size, 0);
  return { eagerFiles: [...eager], eagerBytes, lazyBytes, mapBytes };
}
