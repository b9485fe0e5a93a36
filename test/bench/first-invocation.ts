/**
 * Part of benchmark 5: the bundled `api` function's first invocations in fresh processes,
 * as a cold Lambda container runs them, with DynamoDB and Secrets Manager each some
 * milliseconds away (every request to either waits that long before it is answered: about
 * a call over a new connection in a region): the embedded store behind a delaying forwarder, a Secrets
 * Manager on loopback holding the provider keys, the model on the simulator. What the
 * import time alone does not show: what the first request waits for before its answer.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { connectStore, startEmbeddedStore } from '../../infra/local/store.js';
import { startSimulator } from '../../infra/local/simulator/server.js';
import { loadConfig } from '../../shared/config.js';
import { createStore } from '../../shared/credits/store.js';
import { startFakeAws } from '../support/fake-aws.js';
import { freshNode } from './children.js';
import { median } from './stats.js';

export interface FirstInvocation {
  importMs: number;
  /** The first invocation: the gateway built, the secret read, the reserve, the model call, the settle (the answer is buffered, so it comes after). */
  firstMs: number;
  /** The second, in the same process. */
  secondMs: number;
}

const MODEL = 'fam_i-gpt-oss-20b';
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:111122223333:secret:ProviderKeys-AbC';

/** Imports the bundle, then invokes it twice (a fresh event each time, as Lambda gives); prints the three times. */
const SCRIPT = `
const t0 = performance.now();
const { handler } = await import(process.env.BENCH_BUNDLE_URL);
const t1 = performance.now();
// The authorizer's context as API Gateway hands it over (strings), with the account's settings, so the handler reads no account.
const authorizer = { accountId: process.env.BENCH_ACCOUNT, zeroDataRetention: 'false', rateLimitRpm: '1000000' };
const event = () => ({ httpMethod: 'POST', path: '/api/v1/prompt', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Say hello', models: [process.env.BENCH_MODEL] }), requestContext: { authorizer } });
const context = (id) => ({ awsRequestId: id, functionName: 'api', getRemainingTimeInMillis: () => 30000 });
const first = await handler(event(), context('first'));
const t2 = performance.now();
const second = await handler(event(), context('second'));
const t3 = performance.now();
for (const answer of [first, second]) {
  const statuses = answer.statusCode === 200 ? JSON.parse(answer.body).results.map((result) => result.status) : [];
  if (statuses.join() !== 'completed') throw new Error('not one completed result: ' + answer.statusCode + ' ' + String(answer.body).slice(0, 300));
}
process.stdout.write('\\n' + JSON.stringify({ importMs: t1 - t0, firstMs: t2 - t1, secondMs: t3 - t2 }) + '\\n');
`;

/** Forwards every HTTP request to `target` after `delayMs`. */
async function delayingForwarder(target: URL, delayMs: number): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      setTimeout(() => {
        const forwarded = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        forwarded.on('error', () => res.destroy());
        forwarded.end(Buffer.concat(chunks));
      }, delayMs),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export async function measureFirstInvocations(bundleFile: string, options: { processes: number; latencyMs: number; env: Record<string, string> }): Promise<FirstInvocation> {
  const closing: (() => unknown)[] = [];
  try {
    const store = await startEmbeddedStore({ port: 0 });
    closing.push(() => store.close());
    const config = loadConfig({});
    const client = await connectStore(store, config.tables);
    closing.push(() => client.destroy());
    const forwarder = await delayingForwarder(new URL(store.endpoint), options.latencyMs);
    closing.push(() => {
      forwarder.closeAllConnections();
      forwarder.close();
    });
    const keys = { body: { SecretString: JSON.stringify({ GROQ_API_KEY: 'gsk_bench' }) } };
    const secrets = await startFakeAws(() => new Promise((resolve) => setTimeout(() => resolve(keys), options.latencyMs)));
    closing.push(() => secrets.close());
    const simulator = await startSimulator();
    closing.push(() => simulator.close());
    const { accountId } = await createStore(config, { storeClient: client }).credits.openAccount({ balanceMicro: 1e12, rateLimitRpm: 1_000_000 });
    const env = {
      ...options.env,
      AWS_LAMBDA_FUNCTION_NAME: 'api',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      // Buffered: the answer comes back from the handler (after the settle), with no streaming runtime to imitate.
      RESPONSE_STREAMING: 'false',
      AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
      PROVIDER_SECRET_ARN: SECRET_ARN,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`,
      GROQ_BASE_URL: simulator.baseUrl('groq'),
      BENCH_BUNDLE_URL: pathToFileURL(bundleFile).href,
      BENCH_MODEL: MODEL,
      BENCH_ACCOUNT: accountId,
    };
    const samples: FirstInvocation[] = [];
    for (let i = 0; i < options.processes; i++) samples.push(await freshNode<FirstInvocation>(SCRIPT, env, "the api bundle's first invocations"));
    // Each process read the secret once (its first request), and the second request routed with the keys kept.
    if (secrets.calls.length !== options.processes) throw new Error(`${secrets.calls.length} secret reads for ${options.processes} processes`);
    return {
      importMs: median(samples.map((s) => s.importMs)),
      firstMs: median(samples.map((s) => s.firstMs)),
      secondMs: median(samples.map((s) => s.secondMs)),
    };
  } finally {
    for (const close of closing.reverse()) await close();
  }
}
