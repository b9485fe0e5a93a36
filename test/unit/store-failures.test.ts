import type { IncomingMessage } from 'node:http';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  ProvisionedThroughputExceededException,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHandler } from '../../functions/api-handler.js';
import { lambdaContext, toProxyEvent } from '../../infra/local/lambda-events.js';
import { loadConfig } from '../../shared/config.js';
import { createGateway } from '../../shared/gateway.js';
import type { Log } from '../../shared/log.js';
import { AccountsRepository } from '../../shared/storage/accounts.js';
import { ApiKeysRepository } from '../../shared/storage/api-keys.js';
import { createStoreClient } from '../../shared/storage/dynamodb.js';
import { StoreUnavailableError } from '../../shared/storage/errors.js';
import { IdempotencyRepository, type IdempotencyRecord } from '../../shared/storage/idempotency.js';
import { LedgerRepository, type LedgerEntry } from '../../shared/storage/ledger.js';
import { body } from '../support/fixtures.js';
import { recordingLog } from '../support/log.js';

/**
 * The store's failure paths, on the real SDK clients with their `send` mocked
 * (aws-sdk-client-mock): what a real store cannot produce on demand. The integration
 * tests run the same repositories against the embedded store. The request path's writes
 * go through the store's `items` client (DynamoDBClient), in attribute values.
 */
const dynamo = mockClient(DynamoDBClient);
beforeEach(() => {
  dynamo.reset();
});
afterEach(() => {
  dynamo.reset();
});

const config = loadConfig({ SIMULATE_PROVIDERS: '1', AWS_REGION: 'eu-west-1' });
const ACCOUNT = { accountId: 'acct_1', balanceMicro: 5_000_000, zeroDataRetention: false, createdAt: '2026-01-01', reservations: {}, unposted: {} };

/** What the authorizer passes with its decision (as API Gateway does, strings): the account's settings, so nothing is read. */
const AUTHORIZER_CONTEXT = { accountId: 'acct_1', zeroDataRetention: 'false', rateLimitRpm: '0' };

/** One request through the api handler. */
async function invoke(options: { log?: Log } = {}) {
  const log = options.log ?? recordingLog();
  const gateway = () => createGateway(config, { simulatorBaseUrl: () => 'http://127.0.0.1:9', log });
  const req = { method: 'POST', url: '/api/v1/prompt', rawHeaders: ['content-type', 'application/json'], headers: {} } as unknown as IncomingMessage;
  const event = toProxyEvent(req, JSON.stringify(body({ models: ['fam_k-8b'] })), '/api/v1/prompt', AUTHORIZER_CONTEXT, 'req-1');
  const result = await createApiHandler(gateway, log)(event, lambdaContext('api'));
  // What follows the answer (settle, ledger, prompt log), as the Lambda entry awaits it.
  await result.finished;
  return { statusCode: result.statusCode, headers: result.headers as Record<string, string>, body: JSON.parse(result.body) };
}

/** The refusal DynamoDB sends for a write with ReturnValuesOnConditionCheckFailure ALL_OLD: the item as it is. */
const refusal = (item?: Record<string, unknown>) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(item ? { Item: marshall(item, { removeUndefinedValues: true }) } : {}),
  });

/** The account as the refused reserve finds it, its rate window the one the write named. */
const refusedReserve = (input: { ExpressionAttributeValues?: Record<string, AttributeValue> }, account: Record<string, unknown> & { windowCount: number }) => {
  const { windowCount, ...rest } = account;
  return refusal({ ...rest, rateWindow: { start: Number(input.ExpressionAttributeValues?.[':start']?.N), count: windowCount } });
};

const accountsTable = { TableName: config.tables.accounts };

describe('Handler: api, when the store refuses or fails', () => {
  it('answers 402 from a reserve refused with the current item (a concurrent request took the balance): no read, nothing held, nothing run; the request counted', async () => {
    // Prepare: the reserve refused; the count that follows a 402 (in the rate window) lands.
    dynamo.on(UpdateItemCommand, accountsTable).callsFake((input) => {
      if (String(input.ConditionExpression).includes('balanceMicro >= :amount')) throw refusedReserve(input, { ...ACCOUNT, balanceMicro: 10, windowCount: 3 });
      return {};
    });

    // Act
    const answer = await invoke();

    // Assess
    expect(answer.statusCode).toBe(402);
    expect(answer.body).toMatchObject({ error: { code: 'insufficient_credits' }, balance: 0.00001 });
    expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 2);
    expect(dynamo).toReceiveNthCommandWith(UpdateItemCommand, 1, {
      ...accountsTable,
      ConditionExpression: expect.stringContaining('balanceMicro >= :amount'),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(dynamo.commandCalls(UpdateItemCommand)[1]!.args[0].input.ConditionExpression).not.toContain('balanceMicro');
    // The item came with the refusal: nothing read, no ledger entry, no prompt log.
    expect(dynamo).not.toReceiveCommand(GetItemCommand);
    expect(dynamo).not.toReceiveCommand(PutItemCommand);
  });

  it('answers the 402 when the count that follows it fails: the count is not what the caller is told about', async () => {
    dynamo.on(UpdateItemCommand, accountsTable).callsFake((input) => {
      if (String(input.ConditionExpression).includes('balanceMicro >= :amount')) throw refusedReserve(input, { ...ACCOUNT, balanceMicro: 10, windowCount: 3 });
      throw Object.assign(new Error('Service unavailable'), { name: 'InternalServerError', $fault: 'server' });
    });
    const answer = await invoke();
    expect(answer.statusCode).toBe(402);
    expect(answer.body).toMatchObject({ error: { code: 'insufficient_credits' } });
  });

  it('answers 429 when the refused item shows the rate window full', async () => {
    dynamo.on(UpdateItemCommand, accountsTable).callsFake((input) => {
      throw refusedReserve(input, { ...ACCOUNT, windowCount: config.rateLimitRpm });
    });
    const answer = await invoke();
    expect(answer.statusCode).toBe(429);
    expect(Number(answer.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(answer.body.error.code).toBe('rate_limited');
    expect(dynamo.calls()).toHaveLength(1);
  });

  it('tries the reserve again while the refused item does not explain the refusal, then answers 503: nothing held or run', async () => {
    // Each refusal shows an item that covers the request with room in its window: concurrent requests keep changing it.
    dynamo.on(UpdateItemCommand, accountsTable).callsFake((input) => {
      throw refusedReserve(input, { ...ACCOUNT, windowCount: 1 });
    });
    const answer = await invoke();
    expect(answer.statusCode).toBe(503);
    expect(answer.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('Nothing was charged') });
    expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 8);
    expect(dynamo).not.toReceiveCommand(PutItemCommand);
  });

  it('answers 503 with Retry-After when the store throttles the reserve (past the SDK retries): nothing charged, nothing run', async () => {
    dynamo
      .on(UpdateItemCommand)
      .rejects(new ProvisionedThroughputExceededException({ message: 'Rate of requests exceeds the allowed throughput', $metadata: { httpStatusCode: 400 } }));
    const log = recordingLog();
    const answer = await invoke({ log });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(answer.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('Nothing was charged') });
    expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 1);
    expect(dynamo).not.toReceiveCommand(PutItemCommand);
    expect(log.lines.join('\n')).toContain('"operation":"accounts.reserve","throttled":true');
  });

  it('answers with the results when the settle fails after the answer, and leaves the reservation to the reconciler', async () => {
    // Prepare: the reserve holds; the settle entry's write fails on the network.
    const settleEntry = { TableName: config.tables.ledger, ConditionExpression: 'attribute_not_exists(accountId)' };
    dynamo.on(UpdateItemCommand, accountsTable).resolves({ Attributes: marshall({ balanceMicro: ACCOUNT.balanceMicro - 1 }) });
    dynamo.on(PutItemCommand).resolves({});
    dynamo.on(PutItemCommand, settleEntry).rejects(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const log = recordingLog();

    // Act
    const answer = await invoke({ log });

    // Assess: the caller has the answer; the settle entry was tried twice, the reservation never closed.
    expect(answer.statusCode).toBe(200);
    expect(answer.body.results).toHaveLength(1);
    expect(dynamo.commandCalls(PutItemCommand, settleEntry)).toHaveLength(2);
    expect(dynamo).toReceiveCommandWith(PutItemCommand, { ...settleEntry, Item: expect.objectContaining({ kind: { S: 'settle' } }) });
    expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 1);
    expect(dynamo).toReceiveCommandWith(PutItemCommand, { TableName: config.tables.promptLogs });
    expect(log.lines.join('\n')).toContain('the reconciler completes or releases the reservation');
  });
});

describe('Class: AccountsRepository, when an answer is lost', () => {
  it('takes a refusal that holds this very reservation (its first write landed, the SDK retried) as the reservation it made', async () => {
    const open = { accountId: 'acct_1', requestId: 'pl_r', reservation: { amountMicro: 700, at: Date.now(), slots: 1 } };
    dynamo.on(UpdateItemCommand).callsFake((input) => {
      throw refusedReserve(input, { ...ACCOUNT, balanceMicro: ACCOUNT.balanceMicro - 700, windowCount: 1, reservations: { pl_r: open.reservation } });
    });
    const accounts = new AccountsRepository(createStoreClient({ region: 'eu-west-1' }).items, config.tables.accounts);
    // An attempt landed whose answer was lost: its close must refuse any attempt still to land.
    expect(await accounts.reserve(open, { limitPerMinute: 10, inFlight: 10 })).toEqual({ balanceMicro: ACCOUNT.balanceMicro - 700, reserveMayLandLate: true });
    expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 1);
    expect(dynamo).not.toReceiveCommand(GetItemCommand);
  });

  it('refuses a reserve whose refusal shows another reservation of its request (another amount or time): ConditionFailedError, not tried again', async () => {
    const open = { accountId: 'acct_1', requestId: 'pl_r', reservation: { amountMicro: 700, at: Date.now(), slots: 1 } };
    const accounts = new AccountsRepository(createStoreClient({ region: 'eu-west-1' }).items, config.tables.accounts);
    for (const other of [
      { ...open.reservation, at: open.reservation.at + 1 },
      { ...open.reservation, amountMicro: 800 },
    ]) {
      dynamo.reset();
      dynamo.on(UpdateItemCommand).callsFake((input) => {
        throw refusedReserve(input, { ...ACCOUNT, balanceMicro: ACCOUNT.balanceMicro - other.amountMicro, windowCount: 1, reservations: { pl_r: other } });
      });
      await expect(accounts.reserve(open, { limitPerMinute: 10, inFlight: 10 })).rejects.toMatchObject({
        name: 'ConditionFailedError',
        message: 'Request pl_r is already reserved',
      });
      expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 1);
      expect(dynamo).not.toReceiveCommand(GetItemCommand);
    }
  });

  it('takes a refusal (ALL_OLD) that holds this very top-up entry, or this very account, as the write made, without a read; another entry or account stays refused', async () => {
    const entry = { accountId: 'acct_1', entryId: '01TOPUP#topup', kind: 'topup' as const, amountMicro: 500, at: Date.now() };
    const accounts = new AccountsRepository(createStoreClient({ region: 'eu-west-1' }).items, config.tables.accounts);
    dynamo.on(UpdateItemCommand).rejects(refusal({ ...ACCOUNT, balanceMicro: ACCOUNT.balanceMicro + 500, unposted: { [entry.entryId]: entry } }));
    expect(await accounts.topUp(entry)).toBe(ACCOUNT.balanceMicro + 500);
    await expect(accounts.topUp({ ...entry, amountMicro: 600 })).rejects.toMatchObject({ name: 'ConditionFailedError' });
    const opening = { ...entry, accountId: 'acct_2', entryId: '01OPEN#topup', at: Date.parse('2026-01-01T00:00:00.000Z') };
    const created = { ...ACCOUNT, accountId: 'acct_2', balanceMicro: 500, createdAt: '2026-01-01T00:00:00.000Z', unposted: { [opening.entryId]: opening } };
    dynamo.on(PutItemCommand).rejects(refusal(created));
    expect(await accounts.create({ opening })).toEqual(created);
    await expect(accounts.create({ opening: { ...opening, at: opening.at + 1 } })).rejects.toMatchObject({ name: 'ConditionFailedError' });
    // Both writes ask for the item with their refusal: no read after them.
    expect(dynamo).toReceiveCommandWith(UpdateItemCommand, { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(dynamo).toReceiveCommandWith(PutItemCommand, { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(dynamo).not.toReceiveCommand(GetItemCommand);
  });

  it("refuses a top-up as the ceiling's where its refusal came without the item and the read shows neither its entry nor the ceiling (a hold lowered the balance meanwhile), not as an entry applied already, and does not write again", async () => {
    const entry = { accountId: 'acct_1', entryId: '01TOPUP#topup', kind: 'topup' as const, amountMicro: 500, at: Date.now() };
    const accounts = new AccountsRepository(createStoreClient({ region: 'eu-west-1' }).items, config.tables.accounts);
    dynamo.on(GetItemCommand).resolves({ Item: marshall(ACCOUNT) });
    dynamo.on(UpdateItemCommand).rejects(refusal());
    await expect(accounts.topUp(entry)).rejects.toMatchObject({ name: 'BalanceCeilingError' });
    expect(dynamo).toReceiveCommandTimes(UpdateItemCommand, 1);
  });

  it('turns a store that cannot be reached into StoreUnavailableError, and an unknown error into itself', async () => {
    const accounts = new AccountsRepository(createStoreClient({ region: 'eu-west-1' }).items, config.tables.accounts);
    dynamo
      .on(GetItemCommand)
      .rejectsOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
      .rejectsOnce(new TypeError('a bug'));
    await expect(accounts.get('acct_1')).rejects.toMatchObject({ name: 'StoreUnavailableError', operation: 'accounts.get', throttled: false });
    const bug = await accounts.get('acct_1').catch((error: unknown) => error);
    expect(bug).toBeInstanceOf(TypeError);
    expect(bug).not.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('Class: IdempotencyRepository, when an answer is lost', () => {
  it('takes a refusal that holds this very claim (its first write landed, the SDK retried) as the claim it made, and still refuses another run', async () => {
    // Prepare: the store refuses the claim and returns the record the lost first attempt wrote.
    const documents = mockClient(DynamoDBDocumentClient);
    try {
      const now = Date.now();
      const mine: IdempotencyRecord = {
        idempotencyKey: 'acct_1#key',
        bodyHash: 'keyed:h',
        status: 'running',
        promptLogId: 'pl_r',
        leaseUntil: now + 30_000,
        createdAt: now,
        expiresAt: Math.floor(now / 1000) + 86_400,
      };
      documents.on(PutCommand).rejects(refusal(mine as unknown as Record<string, unknown>));
      const records = new IdempotencyRepository(createStoreClient({ region: 'eu-west-1' }).documents, config.tables.idempotency);

      // Act / Assess: the claim that wrote it holds the key; another request's claim does not.
      expect(await records.claim(mine, now)).toEqual({ claimed: true });
      expect(await records.claim({ ...mine, promptLogId: 'pl_other' }, now)).toEqual({ claimed: false, existing: mine });
      expect(documents).not.toReceiveCommand(GetCommand);
    } finally {
      documents.restore();
    }
  });
});

describe('Class: LedgerRepository, when an entry is written twice', () => {
  it('keeps the entry written first and returns it from the refusal (ALL_OLD), without a read', async () => {
    const first: LedgerEntry = { accountId: 'acct_1', entryId: 'r#settlement', kind: 'release', amountMicro: 0, reservedMicro: 700, at: 1, requestId: 'pl_r' };
    dynamo.on(PutItemCommand).rejects(refusal(first as unknown as Record<string, unknown>));
    const ledger = new LedgerRepository(createStoreClient({ region: 'eu-west-1' }).items, config.tables.ledger);
    const late = { ...first, kind: 'settle' as const, amountMicro: -300, chargedMicro: 300, at: 2 };
    expect(await ledger.putFirst(late)).toEqual(first);
    expect(dynamo).toReceiveCommandWith(PutItemCommand, { Item: marshall(late), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(dynamo).not.toReceiveCommand(GetItemCommand);
  });
});

describe('Class: ApiKeysRepository, when an answer is lost', () => {
  it('takes a refusal (ALL_OLD) that holds this very API key record as the key registered, without a read; another account or time stays refused', async () => {
    const documents = mockClient(DynamoDBDocumentClient);
    try {
      const record = { keyHash: 'k'.repeat(64), accountId: 'acct_1', keyPrefix: 'mcg_kkkk', createdAt: '2026-01-01T00:00:00.000Z' };
      documents.on(PutCommand).rejects(refusal(record));
      const keys = new ApiKeysRepository(createStoreClient({ region: 'eu-west-1' }).documents, config.tables.apiKeys);
      await expect(keys.put(record)).resolves.toBeUndefined();
      await expect(keys.put({ ...record, accountId: 'acct_2' })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      await expect(keys.put({ ...record, createdAt: '2026-01-01T00:00:00.001Z' })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      // The write asks for the item with its refusal: no read after it.
      expect(documents).toReceiveCommandWith(PutCommand, { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
      expect(documents).not.toReceiveCommand(GetCommand);
    } finally {
      documents.restore();
    }
  });
});
