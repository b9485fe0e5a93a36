import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../infra/local/simulator/server.js';
import { bundleEntry, bundleFunction, bundleSizes, SCHEMA_WORKER_FILE } from '../../infra/stack/bundle.js';
import { GatewayStack } from '../../infra/stack/gateway-stack.js';
import { resolveModel } from '../../shared/catalog/index.js';
import * as credentialChainSdk from '../../shared/sdk/credential-provider-node.js';
import * as s3Sdk from '../../shared/sdk/s3.js';
import { splitStreamed } from '../support/lambda-streaming.mjs';

/** What each `#sdk/<name>` module exports in the sources. */
const SDK_SOURCES = { s3: s3Sdk, 'credential-provider-node': credentialChainSdk };

/** The api function bundled exactly as the stack bundles it (infra/stack/bundle.ts). */
let dir: string;
let sizes: ReturnType<typeof bundleSizes>;
let eagerInputs: string[];
let allInputs: string[];
/** The inputs of the function's own build: its entry and chunks, not the clients bundled apart under sdk/. */
let mainInputs: string[];
/** The sources the bundle's dynamic imports load (the entry points of its chunks loaded on demand). */
let onDemandEntries: string[];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-bundle-'));
  const metafile = bundleFunction('api', dir);
  sizes = bundleSizes(metafile, dir);
  const inputsOf = (files: string[]) => files.flatMap((file) => Object.keys(metafile.outputs[file]!.inputs));
  eagerInputs = inputsOf(sizes.eagerFiles);
  allInputs = inputsOf(Object.keys(metafile.outputs));
  mainInputs = inputsOf(Object.keys(metafile.outputs).filter((file) => !file.includes('/sdk/')));
  onDemandEntries = Object.values(metafile.outputs).flatMap((output) => (output.entryPoint && !output.entryPoint.endsWith('functions/api.ts') ? [output.entryPoint] : []));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Lambda's environment for the bundled api function, every AWS endpoint a closed loopback
 * port: the store cannot be reached, so the gateway answers 503 (the store's Retry-After),
 * wherever the tests run and without sending a request to AWS.
 */
const LAMBDA_ENV = {
  PATH: process.env.PATH,
  LAMBDA_TASK_ROOT: '/var/task',
  AWS_LAMBDA_FUNCTION_NAME: 'api',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
  _HANDLER: 'index.handler',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  PROVIDER_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:missing',
  AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
};

let runs = 0;

/**
 * A bare `node` running the bundled api entry as Lambda's runtime would (its streaming
 * global, as the runtime behaves: the unit tests use the same one), with an `event` to
 * invoke it with, then `lines`; `exited` is its stdout once it ends.
 */
function runBundled(lines: string[], env: Record<string, string | undefined>, nodeFlags: string[] = []): { child: ChildProcess; exited: Promise<string> } {
  const script = [
    `const { lambdaStreamingRuntime } = await import(${JSON.stringify(new URL('../support/lambda-streaming.mjs', import.meta.url).href)});`,
    'globalThis.awslambda = lambdaStreamingRuntime();',
    `const { handler } = await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)});`,
    "const event = { httpMethod: 'POST', path: '/api/v1/prompt', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', models: ['fam_c-4o'] }), requestContext: { authorizer: { accountId: 'acct_1' } } };",
    ...lines,
  ].join('\n');
  const file = join(dir, `run-${++runs}.mjs`);
  writeFileSync(file, script);
  return runScript(file, { ...LAMBDA_ENV, ...env }, nodeFlags);
}

/** A bare `node` running `file` with only `env`; `exited` is its stdout once it ends. */
function runScript(file: string, env: Record<string, string | undefined>, nodeFlags: string[] = []): { child: ChildProcess; exited: Promise<string> } {
  const child = spawn(process.execPath, [...nodeFlags, file], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return { child, exited: new Promise((resolve) => child.on('exit', () => resolve(stdout))) };
}

describe('Function: bundleFunction', () => {
  it("leaves ajv and RE2 (compiling and checking a response_schema) out of the function: they are the schema thread's", () => {
    expect(allInputs.filter((input) => /node_modules\/(ajv|re2js)\//.test(input))).toEqual([]);
    const thread = readFileSync(join(dir, SCHEMA_WORKER_FILE), 'utf8');
    expect(thread).toContain('RE2JS');
    expect(thread).toContain('2020-12');
  });

  it.each([
    ['the judging code (a judged request)', /shared\/judging\/judged-comparison\.ts$/],
    ['the Bedrock mapping and client (a Bedrock call)', /shared\/providers\/bedrock-converse\/request\.ts$|node_modules\/@aws-sdk\/client-bedrock-runtime\//],
    ['the S3 client (claim checks)', /node_modules\/@aws-sdk\/client-s3\//],
    ['the Step Functions client (a judged request)', /node_modules\/@aws-sdk\/client-sfn\//],
  ])('leaves %s to a chunk that loads on demand', (_, pattern) => {
    expect(allInputs.some((input) => pattern.test(input))).toBe(true);
    expect(eagerInputs.filter((input) => pattern.test(input))).toEqual([]);
  });

  it('starts cold from 7 files: a module shared by the gateway and a chunk loaded on demand would add a chunk of its own to every cold start', () => {
    // index.mjs and the 6 chunks of code shared with the chunks loaded on demand (docs/benchmarks.md, cold start): 8 while
    // the Bedrock client and its HTTP handler were two imports on demand, where one (bedrock-converse/sdk.ts) loads both.
    // One of them is text/characters.ts alone, which the request's checks, the adapters and the judging chunk's evaluation
    // share: the request's limits and the judging's figures count characters and blank text alike.
    expect(sizes.eagerFiles.map((file) => file.slice(dir.length + 1)).filter((file) => !file.startsWith('sdk/'))).toHaveLength(7);
  });

  it("loads the protocols' adapters as one module on demand, not one each: five would split the code they share with the gateway into more chunks of the cold start", () => {
    expect(onDemandEntries).toContain('shared/providers/protocols.ts');
    expect(onDemandEntries.filter((entry) => /^shared\/providers\/[^/]+\/index\.ts$/.test(entry))).toEqual([]);
  });

  it("bundles the S3 client (and the credential chain) apart: none of its code in the cold start, found from the entry's folder and from a chunk's", async () => {
    // Parts of the SDK's core only S3 uses: its XML protocol and serializer, waiters.
    expect(eagerInputs.filter((input) => /protocols\/xml\/(AwsRestXmlProtocol|XmlShapeSerializer)|util-waiter\//.test(input))).toEqual([]);
    const code = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.mjs') && !file.startsWith('sdk/'))
      .map((file) => readFileSync(join(dir, file), 'utf8'))
      .join('\n');
    const names = [...new Set([...code.matchAll(/import\("#sdk\/([a-z0-9-]+)"\)/g)].map((match) => match[1]!))].sort();
    expect(names).toEqual(Object.keys(SDK_SOURCES).sort());
    for (const name of names) {
      const source = Object.keys(SDK_SOURCES[name as keyof typeof SDK_SOURCES]).sort();
      for (const folder of [dir, join(dir, 'chunks')]) {
        const probe = join(folder, `probe-${name}.mjs`);
        writeFileSync(probe, `export const sdk = await import('#sdk/${name}');`);
        const { sdk } = (await import(pathToFileURL(probe).href)) as { sdk: Record<string, unknown> };
        expect(Object.keys(sdk).sort()).toEqual(source);
        expect(Object.values(sdk).every((value) => typeof value === 'function')).toBe(true);
      }
    }
  });

  it('counts a client bundled apart as part of the cold start where it is imported statically', () => {
    const out = mkdtempSync(join(tmpdir(), 'gateway-static-sdk-'));
    try {
      const entry = join(out, 'entry.ts');
      writeFileSync(entry, "import { S3Client } from '#sdk/s3';\nexport const client = S3Client;\n");
      const metafile = bundleEntry(entry, join(out, 'bundle'));
      const { eagerFiles } = bundleSizes(metafile, join(out, 'bundle'));
      expect(eagerFiles.some((file) => file.endsWith('/sdk/s3.mjs'))).toBe(true);
      expect(eagerFiles.some((file) => file.includes('/sdk/chunks/'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('bundles the DynamoDB and Secrets Manager clients with the commands sent, and no other, and gives the entry a working require', async () => {
    const commands = (client: string, inputs = eagerInputs) =>
      inputs
        .filter((input) => input.includes(`node_modules/@aws-sdk/${client}/`) && /\/commands\/\w+Command\.js$/.test(input))
        .map((input) => input.slice(input.lastIndexOf('/') + 1))
        .sort();
    expect(commands('lib-dynamodb')).toEqual(['GetCommand.js', 'PutCommand.js', 'QueryCommand.js', 'ScanCommand.js', 'UpdateCommand.js', 'DeleteCommand.js'].sort());
    // DescribeEndpoints: the client's own endpoint discovery, which it loads whether or not it is turned on.
    expect(commands('client-dynamodb')).toEqual(
      ['DeleteItemCommand.js', 'DescribeEndpointsCommand.js', 'GetItemCommand.js', 'PutItemCommand.js', 'QueryCommand.js', 'ScanCommand.js', 'UpdateItemCommand.js'].sort(),
    );
    // The Secrets Manager client loads with the first secret read, while that request's reserve is in flight.
    expect(commands('client-secrets-manager')).toEqual([]);
    expect(commands('client-secrets-manager', allInputs)).toEqual(['GetSecretValueCommand.js']);
    // The ESM builds, tree-shaken: never the CommonJS ones (which carry every command).
    expect(allInputs.filter((input) => /node_modules\/@aws-sdk\/[^/]+\/dist-cjs\//.test(input))).toEqual([]);
    const entry = join(dir, 'index.mjs');
    expect(readFileSync(entry, 'utf8').slice(0, 80)).toMatch(/^import \{ createRequire as __gatewayCreateRequire \} from 'node:module';/);
    const module = (await import(pathToFileURL(entry).href)) as { handler?: unknown };
    expect(typeof module.handler).toBe('function');
    expect(sizes.lazyBytes).toBeGreaterThan(0);
  });
});

describe('Function: bundleFunction, credentials', () => {
  /** The SDK's chain beyond the environment: its other providers (the Bedrock client keeps its own token provider, for bearer keys). */
  const CHAIN = /node_modules\/@aws-sdk\/credential-provider-(node|ini|sso|process|web-identity|http|login)\/|node_modules\/@smithy\/credential-provider-imds\//;

  it("carries the SDK's whole credential chain only apart, under sdk/", () => {
    expect(allInputs.some((input) => CHAIN.test(input))).toBe(true);
    expect(mainInputs.filter((input) => CHAIN.test(input))).toEqual([]);
    expect(existsSync(join(dir, 'sdk', 'credential-provider-node.mjs'))).toBe(true);
  });

  it("gives a client Lambda's credentials from the environment without loading the chain, and a profile's through the chain", async () => {
    const out = mkdtempSync(join(tmpdir(), 'gateway-credentials-'));
    try {
      const entry = join(out, 'entry.ts');
      writeFileSync(
        entry,
        [
          `import { DynamoDBClient } from ${JSON.stringify(fileURLToPath(new URL('../../node_modules/@aws-sdk/client-dynamodb', import.meta.url)))};`,
          "const { accessKeyId, sessionToken } = await new DynamoDBClient({ region: 'us-east-1' }).config.credentials();",
          "process.stdout.write('\\n' + JSON.stringify({ accessKeyId, sessionToken }));",
        ].join('\n'),
      );
      bundleEntry(entry, join(out, 'bundle'));
      const file = join(out, 'credentials');
      writeFileSync(file, '[default]\naws_access_key_id = AKIAFILEDEFAULT\naws_secret_access_key = s1\n[second]\naws_access_key_id = AKIAFILESECOND\naws_secret_access_key = s2\n');
      const base = { PATH: process.env.PATH, AWS_SHARED_CREDENTIALS_FILE: file, AWS_CONFIG_FILE: join(out, 'no-config'), AWS_EC2_METADATA_DISABLED: 'true' };
      const lambda = { AWS_ACCESS_KEY_ID: 'AKIAENVIRONMENT', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' };
      const credentials = async (env: Record<string, string | undefined>) =>
        JSON.parse((await runScript(join(out, 'bundle', 'index.mjs'), { ...base, ...env }).exited).trim().split('\n').at(-1)!);
      // A named profile skips the environment, as the SDK's chain does; no credentials in it: the chain's next links.
      expect(await credentials({ ...lambda, AWS_PROFILE: 'second' })).toEqual({ accessKeyId: 'AKIAFILESECOND' });
      expect(await credentials({})).toEqual({ accessKeyId: 'AKIAFILEDEFAULT' });
      // Lambda's case never loads the chain: it still answers with the chain's module gone.
      rmSync(join(out, 'bundle', 'sdk', 'credential-provider-node.mjs'));
      expect(await credentials(lambda)).toEqual({ accessKeyId: 'AKIAENVIRONMENT', sessionToken: 'token' });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('Function: bundleFunction, Node modules at a cold start', () => {
  it('loads neither worker_threads (the schema thread, started by the first response_schema) nor http2 (Bedrock) at import', async () => {
    const stdout = await runBundled(["process.stdout.write('\\n' + JSON.stringify(process.moduleLoadList.filter((name) => /worker_threads|http2/.test(name))));"], {}).exited;
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual([]);
  });
});

describe('Function: bundleFunction, HTTP/2', () => {
  it("takes node:http2 from a module that loads Node's when a name is read: its constants and connect are Node's", async () => {
    expect(eagerInputs).toContain('infra/stack/http2-lite.ts');
    const eagerCode = sizes.eagerFiles.map((file) => readFileSync(file, 'utf8')).join('\n');
    // No import of Node's module: the one that loads it is required by name when read.
    expect(eagerCode).not.toMatch(/(?:from|import)\s*\(?["'](?:node:)?http2["']/);
    const { default: lite } = await import('../../infra/stack/http2-lite.js');
    const http2 = await import('node:http2');
    expect(lite.constants.HTTP2_HEADER_PATH).toBe(http2.constants.HTTP2_HEADER_PATH);
    expect(lite.constants.HTTP2_HEADER_METHOD).toBe(http2.constants.HTTP2_HEADER_METHOD);
    expect(lite.connect).toBe(http2.connect);
  });

  it("answers a Bedrock Converse call through the bundled Bedrock adapter and SDK client, over HTTP/1.1, in a process that never loads Node's http2", async () => {
    const out = mkdtempSync(join(tmpdir(), 'gateway-bedrock-bundle-'));
    const simulator = await startSimulator({ port: 0 });
    try {
      bundleEntry(fileURLToPath(new URL('../../shared/providers/bedrock-converse/index.ts', import.meta.url)), out);
      const entry = resolveModel('fam_h-micro')!;
      const call = { entry, system: [], history: [], prompt: 'Say hi.', attachments: [], maxTokens: 64, tuning: {} };
      const script = join(out, 'converse.mjs');
      writeFileSync(
        script,
        [
          "const { bedrockConverse } = await import('./index.mjs');",
          `const reply = await bedrockConverse.prepare(${JSON.stringify(call)}, { baseUrl: ${JSON.stringify(simulator.baseUrl('bedrock'))}, simulated: true }).send(new AbortController().signal);`,
          'process.stdout.write(JSON.stringify({ output: reply.output, http2: process.moduleLoadList.filter((name) => /http2/.test(name)) }));',
        ].join('\n'),
      );
      const stdout = await runScript(script, { PATH: process.env.PATH, AWS_REGION: 'us-east-1' }).exited;
      const answer = JSON.parse(stdout) as { output: string; http2: string[] };
      expect(answer.output.length).toBeGreaterThan(0);
      expect(simulator.calls().at(-1)?.model).toBe(entry.upstreamModel);
      expect(answer.http2).toEqual([]);
    } finally {
      await simulator.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('Function: bundleFunction, web streams', () => {
  it("loads no web streams at a cold start: Middy core's ReadableStream is an instanceof check that loads Node's class when asked", async () => {
    expect(eagerInputs).toContain('infra/stack/stream-web-lite.ts');
    const eagerCode = sizes.eagerFiles.map((file) => readFileSync(file, 'utf8')).join('\n');
    expect(eagerCode).not.toMatch(/["']node:stream\/web["']/);
    const { ReadableStream: Lite } = await import('../../infra/stack/stream-web-lite.js');
    const { Readable } = await import('node:stream');
    expect(new globalThis.ReadableStream() instanceof Lite).toBe(true);
    expect(Readable.toWeb(Readable.from(['a'])) instanceof Lite).toBe(true);
    expect(Readable.from(['a']) instanceof Lite).toBe(false);
  });
});

describe('Function: bundleFunction, X-Ray', () => {
  it('takes of aws-xray-sdk-core only what the tracer uses: no AWS SDK patchers, plugins or semver', () => {
    expect(allInputs.filter((input) => /node_modules\/semver\/|aws-xray-sdk-core\/dist\/lib\/(patchers\/aws3?_p|segments\/plugins\/|aws-xray\.js)/.test(input))).toEqual([]);
    expect(eagerInputs).toContain('infra/stack/xray-sdk-core-lite.cjs');
  });

  it("answers through Lambda's response stream and traces the invocation: metadata, delimiter and body; the handler subsegment at the X-Ray daemon", async () => {
    const daemon = createSocket('udp4');
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    const traced = new Promise<Record<string, unknown>>((resolve) => {
      daemon.on('message', (message) => {
        const document = JSON.parse(message.toString().split('\n')[1]!) as Record<string, unknown>;
        if (document.name === '## index.handler') resolve(document);
      });
    });
    // Lambda's environment, its daemon on our socket; no store to reach, so the gateway answers 503 (the store's).
    const { child, exited } = runBundled(
      [
        "const { PassThrough } = await import('node:stream');",
        "const stream = new PassThrough(); const chunks = []; stream.on('data', (chunk) => chunks.push(Buffer.from(chunk)));",
        "await handler(event, stream, { awsRequestId: 'req-1', functionName: 'api', getRemainingTimeInMillis: () => 10000 });",
        "process.stdout.write('\\n' + Buffer.concat(chunks).toString('base64'));",
      ],
      {
        _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
        AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
      },
    );
    try {
      const [document, stdout] = await Promise.all([traced, exited]);
      // The function's log lines and metrics go to stdout too; the streamed bytes are the last line.
      const { metadata, body } = splitStreamed(Buffer.from(stdout.trim().split('\n').at(-1)!, 'base64'));
      expect(metadata).toMatchObject({ statusCode: 503, headers: { 'content-type': 'application/json; charset=utf-8', 'Retry-After': '1' } });
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'service_unavailable' } });
      expect(document).toMatchObject({ type: 'subsegment', trace_id: '1-5759e988-bd862e3fe1be46a994272793', parent_id: '53995c3f42cd8ad8', fault: true });
    } finally {
      child.kill();
      daemon.close();
    }
  });
});

describe('Function: bundleFunction, buffered entry', () => {
  it('returns the proxy-integration answer, not a response stream, when the stack says RESPONSE_STREAMING=false, even in a runtime that streams', async () => {
    // Prepare / Act: the runtime's streaming global is there (sam-local's and LocalStack's Node images have it too).
    const stdout = await runBundled(
      [
        "const result = await handler(event, { awsRequestId: 'req-1', functionName: 'api', getRemainingTimeInMillis: () => 10000 });",
        "process.stdout.write('\\n' + JSON.stringify(result));",
      ],
      { RESPONSE_STREAMING: 'false', AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR' },
    ).exited;

    // Assess: the last line is what the handler returned.
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(Object.keys(result).sort()).toEqual(['body', 'headers', 'isBase64Encoded', 'statusCode']);
    expect(result).toMatchObject({ statusCode: 503, isBase64Encoded: false, headers: { 'content-type': 'application/json; charset=utf-8', 'Retry-After': '1' } });
    expect(JSON.parse(result.body as string)).toMatchObject({ error: { code: 'service_unavailable' } });
  });
});

describe('Function: bundleFunction, schema thread', () => {
  it("carries the schema thread beside index.mjs, and the bundled api function compiles a caller's schema on it: a schema ajv refuses is a 400", async () => {
    expect(existsSync(join(dir, SCHEMA_WORKER_FILE))).toBe(true);
    // The main thread's checks pass this schema (an object root, closed); only ajv's compile, on the thread, refuses `strin`.
    const schema = { type: 'object', properties: { a: { type: 'strin' } }, required: ['a'], additionalProperties: false };
    const stdout = await runBundled(
      [
        `event.body = JSON.stringify({ prompt: 'hi', models: ['fam_c-4o'], response_schema: ${JSON.stringify(schema)} });`,
        "const result = await handler(event, { awsRequestId: 'req-1', functionName: 'api', getRemainingTimeInMillis: () => 10000 });",
        "process.stdout.write('\\n' + JSON.stringify(result));",
      ],
      { RESPONSE_STREAMING: 'false', AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR' },
      // Flags of the kind Lambda's runtime starts node with: a worker given V8 flags explicitly refuses to start.
      ['--expose-gc', '--max-http-header-size=81920', '--max-semi-space-size=16', '--max-old-space-size=1600'],
    ).exited;

    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body)).toMatchObject({
      error: { code: 'invalid_request', details: [{ field: '/response_schema', message: expect.stringContaining('is not a valid JSON Schema') }] },
    });
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
      // api, generate and judge check response schemas: each asset has the schema thread's file.
      const withThread = keys.filter((key) => existsSync(join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, SCHEMA_WORKER_FILE)));
      expect(withThread).toHaveLength(3);
      for (const key of keys) {
        const entry = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs');
        const module = (await import(pathToFileURL(entry).href)) as { handler?: unknown };
        expect(typeof module.handler).toBe('function');
      }
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
    // Synthesizes and bundles every function with esbuild, then imports each: 12 s alone, past 30 beside the rest of the suite on two cores.
  }, 120_000);
});
