import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHandler } from '../../functions/api.js';
import { lambdaContext, toProxyEvent } from '../../infra/local/lambda-events.js';
import { loadConfig } from '../../shared/config.js';
import { createGateway } from '../../shared/gateway.js';
import { silentLog } from '../../shared/log.js';
import { AccountsRepository } from '../../shared/storage/accounts.js';
import { LedgerRepository, type LedgerEntry } from '../../shared/storage/ledger.js';
import { createDocumentClient } from '../../shared/storage/dynamodb.js';
import { toAttributes } from '../../shared/storage/marshall.js';
import { body } from '../support/fixtures.js';
import { awsError, startFakeAws, type AwsAnswer, type AwsCall } from '../support/fake-aws.js';
import type { IncomingMessage } from 'node:http';

/** Error paths a real store cannot produce on demand: throttling and lost races, through the api handler. */
const config = loadConfig({ SIMULATE_PROVIDERS: '1' });
const ACCOUNT = { accountId: 'acct_1', balanceMicro: 5_000_000, zeroDataRetention: false, createdAt: '2026-01-01', reservations: {}, unposted: {} };

/** What the authorizer passes with its decision (as API Gateway does, strings): the account's settings, so nothing is read. */
const AUTHORIZER_CONTEXT = { accountId: 'acct_1', zeroDataRetention: 'false', rateLimitRpm: '0' };

let store: Awaited<ReturnType<typeof startFakeAws>>;
let script: (call: AwsCall, calls: AwsCall[]) => AwsAnswer | undefined;
beforeEach(async () => {
  store = await startFakeAws((call, calls) => script(call, calls));
});
afterEach(() => store.close());

async function invoke(): Promise<{ statusCode: number; headers: Record<string, string>; body: any }> {
  const gateway = createGateway({ ...config, dynamodbEndpoint: store.endpoint }, { simulatorBaseUrl: () => 'http://127.0.0.1:9' });
  const req = { method: 'POST', url: '/api/v1/prompt', rawHeaders: ['content-type', 'application/json'], headers: {} } as unknown as IncomingMessage;
  const event = toProxyEvent(req, JSON.stringify(body({ models: ['fam_k-8b'] })), '/api/v1/prompt', AUTHORIZER_CONTEXT, 'req-1');
  try {
    const result = await createApiHandler(() => gateway, silentLog)(event, lambdaContext('api'));
    return { statusCode: result.statusCode, headers: result.headers as Record<string, string>, body: JSON.parse(result.body) };
  } finally {
    gateway.documentClient.destroy();
  }
}

const on = (call: AwsCall, operation: string, table: string) => call.operation === operation && call.input.TableName === table;
const balanceWrites = () => store.calls.filter((call) => on(call, 'UpdateItem', config.tables.accounts));

/** The account as DynamoDB returns it with a refused reserve (ReturnValuesOnConditionCheckFailure: ALL_OLD), in the window the write named. */
const refusedWith = (call: AwsCall, account: Record<string, unknown>) =>
  awsError('ConditionalCheckFailedException', 'The conditional request failed', 400, {
    Item: toAttributes({ ...account, rateWindow: { start: Number(call.input.ExpressionAttributeValues[':start'].N), count: account.windowCount } }),
  });
const otherWrites = () => store.calls.filter((call) => ['PutItem', 'DeleteItem', 'BatchWriteItem'].includes(call.operation));

describe('Handler: api, when the store fails', () => {
  it('answers 503 with Retry-After when the store throttles (after the client retried), and changes no balance', async () => {
    script = (call) => (call.operation === 'UpdateItem' ? awsError('ProvisionedThroughputExceededException', 'slow down') : undefined);
    const answer = await invoke();
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(answer.body.error.code).toBe('service_unavailable');
    // The reserve write was tried three times in all, refused each time, then given up; nothing else was written.
    expect(balanceWrites()).toHaveLength(3);
    expect(otherWrites()).toEqual([]);
  });

  it('answers 429 when the rate window is full, from the refused write alone: nothing held, nothing read, nothing run', async () => {
    script = (call) => (on(call, 'UpdateItem', config.tables.accounts) ? refusedWith(call, { ...ACCOUNT, windowCount: config.rateLimitRpm }) : undefined);
    const answer = await invoke();
    expect(answer.statusCode).toBe(429);
    expect(Number(answer.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(answer.body.error.code).toBe('rate_limited');
    expect(store.calls.map((call) => call.operation)).toEqual(['UpdateItem']);
  });

  it('tries the reserve again while the refusal is not explained by the item, then answers 503: nothing held or run', async () => {
    // The item as it is after each refusal covers the request and has room in its window: concurrent requests keep changing it.
    script = (call) => (on(call, 'UpdateItem', config.tables.accounts) ? refusedWith(call, { ...ACCOUNT, windowCount: 1 }) : undefined);
    const answer = await invoke();
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(answer.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('Nothing was charged') });
    expect(balanceWrites()).toHaveLength(8);
    expect(otherWrites()).toEqual([]);
  });

  it('answers 402 when a concurrent request took the balance before the reservation', async () => {
    script = (call) => (on(call, 'UpdateItem', config.tables.accounts) ? refusedWith(call, { ...ACCOUNT, balanceMicro: 10, windowCount: 3 }) : undefined);
    const answer = await invoke();
    expect(answer.statusCode).toBe(402);
    expect(answer.body).toMatchObject({ error: { code: 'insufficient_credits' }, balance: 0.00001 });
    // The one attempted write was refused by its condition: the balance did not change.
    expect(balanceWrites()).toHaveLength(1);
    expect(balanceWrites()[0]!.input.ConditionExpression).toContain('balanceMicro >= :amount');
    expect(otherWrites()).toEqual([]);
  });
});

describe('Class: AccountsRepository, when an answer is lost', () => {
  it('takes a reserve whose write landed but whose answer was lost (a 500, retried) as the reservation it made, held once', async () => {
    script = (call, calls) => {
      if (calls.length === 1) return awsError('InternalServerError', 'Internal server error', 500);
      // The retry is refused: the first write did land, and the item holds this very reservation.
      const reservation = call.input.ExpressionAttributeValues[':reservation'].M;
      const requestId = call.input.ExpressionAttributeNames['#request'];
      const held = { amountMicro: Number(reservation.amountMicro.N), at: Number(reservation.at.N) };
      return refusedWith(call, { ...ACCOUNT, balanceMicro: ACCOUNT.balanceMicro - held.amountMicro, windowCount: 1, reservations: { [requestId]: held } });
    };
    const client = createDocumentClient({ region: 'us-east-1', endpoint: store.endpoint });
    try {
      const accounts = new AccountsRepository(client, config.tables.accounts);
      const entry = { accountId: 'acct_1', entryId: 'r#reserve', kind: 'reserve' as const, amountMicro: -700, at: Date.now(), requestId: 'pl_r' };
      expect(await accounts.reserve(entry, { limitPerMinute: 10 })).toBe(ACCOUNT.balanceMicro - 700);
      expect(balanceWrites()).toHaveLength(2);
    } finally {
      client.destroy();
    }
  });
});

describe('Class: LedgerRepository, when an entry is written twice', () => {
  it('keeps the entry written first and returns it from the refusal (ALL_OLD), without a read', async () => {
    const first: LedgerEntry = { accountId: 'acct_1', entryId: 'r#settlement', kind: 'release', amountMicro: 700, at: 1, requestId: 'pl_r' };
    script = (call) =>
      call.operation === 'PutItem' && call.input.ConditionExpression === 'attribute_not_exists(entryId)'
        ? awsError('ConditionalCheckFailedException', 'The conditional request failed', 400, { Item: toAttributes(first) })
        : undefined;
    const client = createDocumentClient({ region: 'us-east-1', endpoint: store.endpoint });
    try {
      const ledger = new LedgerRepository(client, config.tables.ledger);
      const late = { ...first, kind: 'settle' as const, amountMicro: 400, chargedMicro: 300, at: 2 };
      expect(await ledger.putFirst(late)).toEqual(first);
      expect(store.calls.map((call) => [call.operation, call.input.ReturnValuesOnConditionCheckFailure])).toEqual([['PutItem', 'ALL_OLD']]);
    } finally {
      client.destroy();
    }
  });
});
