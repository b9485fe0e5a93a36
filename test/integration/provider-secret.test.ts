import type { IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiHandler, createLambdaGateway } from '../../functions/api.js';
import { lambdaContext, toProxyEvent } from '../../infra/local/lambda-events.js';
import { loadConfig } from '../../shared/config.js';
import { parseServerTiming } from '../../shared/http/server-timing.js';
import type { Gateway } from '../../shared/gateway.js';
import type { Log } from '../../shared/log.js';
import { instrumentStore } from '../../shared/storage/dynamodb.js';
import { awsError, startFakeAws, type AwsAnswer } from '../support/fake-aws.js';
import { suiteSimulator } from '../support/simulator.js';
import { startTestStore } from '../support/store.js';
import { recordingLog } from '../support/log.js';

/**
 * The `api` function's gateway as Lambda builds it (functions/api.ts): its provider keys in a
 * Secrets Manager secret, read by the real SDK client from a Secrets Manager on loopback,
 * by the first request that calls a model, while its reserve is in flight; the embedded
 * store over HTTP; a Groq model answered by the simulator with the secret's key.
 */

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ProviderKeys-AbC';
const GROQ_KEY = 'gsk_from_the_secret_0123456789';
const MODEL = 'fam_i-3.1-8b';
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' };

const sim = await suiteSimulator();
let store: Awaited<ReturnType<typeof startTestStore>>;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => {
  await store?.close();
});

/** Called when the gateway sends an UpdateItem to the store, and when the store has answered it. */
let onUpdateItemSent: () => void = () => undefined;
let onUpdateItem: () => void = () => undefined;
/** The gateways a test built, their store clients closed after it. */
const built: Gateway[] = [];

/** Secrets Manager on loopback: each call answered by `secretAnswer`, which may wait. */
let secrets: Awaited<ReturnType<typeof startFakeAws>>;
let secretAnswer: () => AwsAnswer | Promise<AwsAnswer>;
const KEYS: AwsAnswer = { body: { SecretString: JSON.stringify({ GROQ_API_KEY: GROQ_KEY }) } };
beforeEach(async () => {
  onUpdateItemSent = () => undefined;
  onUpdateItem = () => undefined;
  secretAnswer = () => KEYS;
  secrets = await startFakeAws(() => secretAnswer());
  // The SDK's credential chain reads the function's credentials from the environment, as in Lambda.
  for (const [name, value] of Object.entries(CREDENTIALS)) vi.stubEnv(name, value);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const gateway of built.splice(0)) gateway.storeClient.destroy();
  await secrets.close();
});

/** The api function's gateway, built by functions/api.ts: no key in the environment, the secret's keys read on first use. */
function lambdaGateway(log: Log): Gateway {
  const config = loadConfig({
    ...CREDENTIALS,
    AWS_REGION: 'eu-west-1',
    DYNAMODB_ENDPOINT: store.store.endpoint,
    PROVIDER_SECRET_ARN: SECRET_ARN,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
    GROQ_BASE_URL: sim.baseUrl('groq'),
  });
  const gateway = createLambdaGateway(config, log);
  built.push(gateway);
  instrumentStore(gateway.storeClient, async (operation, call) => {
    if (operation === 'DynamoDB.UpdateItem') onUpdateItemSent();
    const result = await call();
    if (operation === 'DynamoDB.UpdateItem') onUpdateItem();
    return result;
  });
  return gateway;
}

/** The api's event for one prompt to MODEL, the authorizer's context with only the account (its settings are read). */
function promptEvent(accountId: string, requestId: string) {
  const req = { method: 'POST', url: '/api/v1/prompt', rawHeaders: ['content-type', 'application/json'], headers: {} } as unknown as IncomingMessage;
  return toProxyEvent(req, JSON.stringify({ prompt: 'Say hello', models: [MODEL] }), '/api/v1/prompt', { accountId }, requestId);
}

/** One invocation, and what it writes after its answer. */
async function invoke(gateway: Gateway, log: Log, accountId: string, requestId: string) {
  const result = await createApiHandler(() => gateway, log)(promptEvent(accountId, requestId), lambdaContext('api', requestId));
  await result.finished;
  return { statusCode: result.statusCode, headers: result.headers as Record<string, string>, body: JSON.parse(result.body) };
}

describe('Function: api, its provider keys in a secret', () => {
  it('reserves while the secret is read, calls the model with the secret key, and reads the secret once per container', async () => {
    // Prepare: an account; then the secret, asked while the reserve is at the store (which
    // answers it whatever the secret does), answers once the store has answered the reserve.
    // Should the reserve wait for the secret, none is at the store when the secret is asked:
    // the secret answers at once, and the order below fails.
    const log = recordingLog();
    const gateway = lambdaGateway(log);
    const { accountId } = await gateway.credits.openAccount({ balanceMicro: 50_000_000, rateLimitRpm: 1000 });
    const order: string[] = [];
    let held!: () => void;
    const reserveHeld = new Promise<void>((resolve) => (held = resolve));
    onUpdateItemSent = () => {
      if (!order.includes('reserve sent')) order.push('reserve sent');
    };
    onUpdateItem = () => {
      if (!order.includes('reserve held')) order.push('reserve held');
      held();
    };
    secretAnswer = async () => {
      if (order.includes('reserve sent')) await reserveHeld;
      order.push('secret answered');
      return KEYS;
    };

    // Act
    const first = await invoke(gateway, log, accountId, 'req-first');
    const second = await invoke(gateway, log, accountId, 'req-second');

    // Assess: the reserve did not wait for the secret.
    expect(order).toEqual(['reserve sent', 'reserve held', 'secret answered']);
    expect(first.statusCode).toBe(200);
    expect(first.body.results).toEqual([expect.objectContaining({ modelId: MODEL, status: 'completed' })]);
    expect(second.statusCode).toBe(200);
    // The first answer times the read (answered once the reserve reached the store, as `order` shows); the second read nothing.
    // Which of the two phases ends last is the event loop's: a loaded machine may deliver the reserve's answer after the secret's.
    const phases = (answer: { headers: Record<string, string> }) => parseServerTiming(answer.headers['server-timing']);
    expect(Object.keys(phases(first))).toEqual(['reserve', 'keys', 'models', 'total']);
    expect(phases(first).keys).toBeGreaterThan(0);
    expect(Object.keys(phases(second))).toEqual(['reserve', 'models', 'total']);
    // One read for both requests, signed with the function's credentials; the model was called with the secret's key.
    expect(secrets.calls.map((call) => [call.operation, call.input])).toEqual([['GetSecretValue', { SecretId: SECRET_ARN }]]);
    expect(secrets.calls[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, /);
    expect(sim.calls().filter((call) => call.provider === 'groq')).toHaveLength(2);
    expect(JSON.stringify(first)).not.toContain(GROQ_KEY);
    expect(log.lines.join('\n')).not.toContain(GROQ_KEY);
    expect(log.lines.join('\n')).toContain('Provider keys loaded');
  });

  it('answers 503 when the secret cannot be read, gives the reservation back, calls no model, and reads again on the next request', async () => {
    // Prepare: the first read is refused, the next one answers.
    const refused = awsError('AccessDeniedException', `User is not authorized to perform GetSecretValue on ${SECRET_ARN}`);
    let reads = 0;
    secretAnswer = () => (++reads === 1 ? refused : KEYS);
    const log = recordingLog();
    const gateway = lambdaGateway(log);
    const { accountId } = await gateway.credits.openAccount({ balanceMicro: 50_000_000, rateLimitRpm: 1000 });

    // Act
    const failed = await invoke(gateway, log, accountId, 'req-refused');
    const afterFailure = (await gateway.accounts.get(accountId))!;
    const ledgerAfterFailure = await gateway.ledger.list(accountId);
    const modelCallsAfterFailure = sim.calls().length;
    const retried = await invoke(gateway, log, accountId, 'req-retried');

    // Assess: a 503 naming no cause, no model called, the hold given back by a settle of nothing (as a failed judging workflow's).
    expect(failed.statusCode).toBe(503);
    expect(failed.headers).toMatchObject({ 'Retry-After': '5' });
    expect(failed.body).toEqual({ error: { code: 'service_unavailable', message: 'The gateway could not read its provider keys; retry shortly. Nothing was charged' } });
    expect(afterFailure.balanceMicro).toBe(50_000_000);
    expect(afterFailure.reservations).toEqual({});
    expect(modelCallsAfterFailure).toBe(0);
    expect(ledgerAfterFailure.map(({ kind, amountMicro }) => [kind, amountMicro])).toEqual([
      ['topup', 50_000_000],
      ['settle', 0],
    ]);
    // The error line names the failure, never the secret's text or the role's.
    const errorLine = log.lines.find((line) => line.includes('Provider keys not available'));
    expect(errorLine).toContain('Reading the provider secret failed: AccessDeniedException');
    expect(log.lines.join('\n')).not.toContain('not authorized');

    // Assess: the next request read the secret again, and ran.
    expect(reads).toBe(2);
    expect(retried.statusCode).toBe(200);
    expect(retried.body.results).toEqual([expect.objectContaining({ status: 'completed' })]);
  });

  it('answers a request refused while the secret is read (402) once the read has ended, so that no read outlives its invocation', async () => {
    // Prepare: an account that cannot pay for one model; the secret answers 200 ms late (a slow Secrets Manager).
    const order: string[] = [];
    secretAnswer = () =>
      new Promise<AwsAnswer>((resolve) =>
        setTimeout(() => {
          order.push('secret answered');
          resolve(KEYS);
        }, 200),
      );
    const log = recordingLog();
    const gateway = lambdaGateway(log);
    const { accountId } = await gateway.credits.openAccount({ balanceMicro: 1, rateLimitRpm: 1000 });

    // Act
    const refused = await invoke(gateway, log, accountId, 'req-poor');
    order.push('refused');

    // Assess
    expect(refused.statusCode).toBe(402);
    expect(order).toEqual(['secret answered', 'refused']);
    expect(sim.calls()).toHaveLength(0);
  });
});
