import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction, bundleSizes } from '../../infra/stack/bundle.js';
import { GatewayStack } from '../../infra/stack/gateway-stack.js';

/** The api function bundled exactly as the stack bundles it (infra/stack/bundle.ts). */
let dir: string;
let sizes: ReturnType<typeof bundleSizes>;
let eagerInputs: string[];
let allInputs: string[];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-bundle-'));
  const metafile = bundleFunction('api', dir);
  sizes = bundleSizes(metafile, dir);
  const inputsOf = (files: string[]) => files.flatMap((file) => Object.keys(metafile.outputs[file]!.inputs));
  eagerInputs = inputsOf(sizes.eagerFiles);
  allInputs = inputsOf(Object.keys(metafile.outputs));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Function: bundleFunction', () => {
  it.each([
    ['ajv (compiles a response_schema)', /node_modules\/ajv\//],
    ['the judging code (a judged request)', /shared\/judging\/judged-comparison\.ts$/],
    ['the Bedrock mapping and HTTP handler (a Bedrock call)', /shared\/providers\/bedrock-converse\/request\.ts$|node_modules\/@smithy\/node-http-handler\//],
  ])('leaves %s to a chunk that loads on demand', (_, pattern) => {
    expect(allInputs.some((input) => pattern.test(input))).toBe(true);
    expect(eagerInputs.filter((input) => pattern.test(input))).toEqual([]);
  });

  it('keeps the AWS SDK out of the bundle (the runtime provides it) and gives the entry a working require', async () => {
    expect(allInputs.filter((input) => input.includes('node_modules/@aws-sdk/'))).toEqual([]);
    const entry = join(dir, 'index.mjs');
    expect(readFileSync(entry, 'utf8').slice(0, 80)).toMatch(/^import \{ createRequire as __gatewayCreateRequire \} from 'node:module';/);
    const module = (await import(pathToFileURL(entry).href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
    expect(sizes.lazyBytes).toBeGreaterThan(0);
  });
});

describe('Construct: GatewayFunction, bundled', () => {
  it('gives every function its own bundle, each exporting a handler', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'gateway-synth-'));
    try {
      const app = new App({ outdir });
      const stack = new GatewayStack(app, 'GatewayBundled');
      const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
      const keys = functions.map((fn) => fn.Properties.Code.S3Key as string);
      expect(new Set(keys).size).toBe(functions.length);
      const assembly = app.synth();
      for (const key of keys) {
        const entry = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs');
        const module = (await import(pathToFileURL(entry).href)) as { handler?: unknown };
        expect(typeof module.handler).toBe('function');
      }
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
