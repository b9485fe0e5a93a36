import { ConditionalCheckFailedException, DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHandler } from '../../functions/api.js';
import { lambdaContext, toProxyEvent } from '../../infra/local/lambda-events.js';
import { loadConfig } from '../../shared/config.js';
import { createGateway, type Gateway } from '../../shared/gateway.js';
import { silentLog } from '../../shared/log.js';
import { body } from '../support/fixtures.js';
import type { IncomingMessage } from 'node:http';

/** Error paths a real store cannot produce on demand: throttling and lost races, through the api handler. */
const ddb = mockClient(DynamoDBDocumentClient);
const config = loadConfig({ SIMULATE_PROVIDERS: '1' });
const ACCOUNT = { accountId: 'acct_1', balanceMicro: 5_000_000, zeroDataRetention: false, createdAt: '2026-01-01', reservations: {}, unposted: {} };

let gateway: Gateway;
beforeEach(() => {
  ddb.reset();
  gateway = createGateway(config, { documentClient: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })), simulatorBaseUrl: () => 'http://127.0.0.1:9' });
});
afterEach(() => ddb.reset());

async function invoke(): Promise<{ statusCode: number; headers: Record<string, string>; body: any }> {
  const req = { method: 'POST', url: '/api/v1/prompt', rawHeaders: ['content-type', 'application/json'], headers: {} } as unknown as IncomingMessage;
  const event = toProxyEvent(req, JSON.stringify(body({ models: ['fam_k-8b'] })), '/api/v1/prompt', { accountId: 'acct_1' }, 'req-1');
  const result = await createApiHandler(() => gateway, silentLog)(event, lambdaContext('api'));
  return { statusCode: result.statusCode, headers: result.headers as Record<string, string>, body: JSON.parse(result.body) };
}

function balanceWrites() {
  return ddb.commandCalls(UpdateCommand).filter((c) => c.args[0].input.TableName === config.tables.accounts);
}

describe('Handler: api, when the store fails', () => {
  it('answers 503 with Retry-After when the store throttles, and changes no balance', async () => {
    ddb.on(GetCommand).resolves({ Item: ACCOUNT });
    ddb.on(UpdateCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const answer = await invoke();
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(answer.body.error.code).toBe('service_unavailable');
    expect(balanceWrites()).toHaveLength(0);
  });

  it('answers 429 when the window counter refuses, before any balance write', async () => {
    ddb.on(GetCommand).resolves({ Item: ACCOUNT });
    ddb.on(UpdateCommand, { TableName: config.tables.rateLimits }).rejects(new ConditionalCheckFailedException({ message: 'limit', $metadata: {} }));
    const answer = await invoke();
    expect(answer.statusCode).toBe(429);
    expect(Number(answer.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(balanceWrites()).toHaveLength(0);
  });

  it('answers 402 when a concurrent request took the balance between the read and the reservation', async () => {
    ddb.on(GetCommand, { TableName: config.tables.accounts }).resolvesOnce({ Item: ACCOUNT }).resolves({ Item: { ...ACCOUNT, balanceMicro: 10 } });
    ddb.on(UpdateCommand, { TableName: config.tables.rateLimits }).resolves({});
    ddb.on(UpdateCommand, { TableName: config.tables.accounts }).rejects(new ConditionalCheckFailedException({ message: 'balance', $metadata: {} }));
    const answer = await invoke();
    expect(answer.statusCode).toBe(402);
    expect(answer.body).toMatchObject({ error: { code: 'insufficient_credits' }, balance: 0.00001 });
    // The one attempted write was refused by its condition: the balance did not change.
    expect(balanceWrites()).toHaveLength(1);
    expect(balanceWrites()[0]!.args[0].input.ConditionExpression).toContain('balanceMicro >= :amount');
  });
});
