import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables, startEmbeddedStore, toCreateTableInput } from '../../infra/local/store.js';
import type { AwsServiceError } from '../../shared/aws/json-client.js';
import { ApiKeysRepository, KeyNotFoundError } from '../../shared/storage/api-keys.js';
import { ConditionalCheckFailed, createDocumentClient } from '../../shared/storage/dynamodb.js';
import { PromptLogsRepository } from '../../shared/storage/prompt-logs.js';
import { TABLES } from '../../shared/storage/tables.js';
import { startTestStore } from '../support/store.js';

let env: Awaited<ReturnType<typeof startTestStore>>;
beforeAll(async () => {
  env = await startTestStore();
});
afterAll(async () => {
  await env?.close();
});

describe('Local bootstrap', () => {
  it.each(TABLES.map((t) => [t.key, t] as const))('creates %s with the shared definition', async (key, definition) => {
    type Key = { AttributeName: string; KeyType: string };
    type Table = { KeySchema: Key[]; AttributeDefinitions: { AttributeName: string }[]; GlobalSecondaryIndexes?: { IndexName: string; KeySchema: Key[] }[] };
    const { Table } = await env.client.raw<{ Table?: Table }>('DescribeTable', { TableName: env.tables[key] });
    const expected = toCreateTableInput(definition, env.tables[key]);
    expect(Table?.KeySchema).toEqual(expected.KeySchema);
    expect(Table?.AttributeDefinitions?.sort((a, b) => a.AttributeName!.localeCompare(b.AttributeName!))).toEqual(
      expected.AttributeDefinitions?.sort((a, b) => a.AttributeName!.localeCompare(b.AttributeName!)),
    );
    expect((Table?.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.KeySchema])).toEqual(
      (expected.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.KeySchema]),
    );
    expect(Table?.KeySchema?.[0]?.AttributeName).toBe(definition.partitionKey.name);
  });

  it('is idempotent on a store that already has the tables', async () => {
    await expect(createTables(env.client, env.tables)).resolves.toBeUndefined();
  });
});

describe('Class: ApiKeysRepository', () => {
  it('refuses to re-register a hash and to revoke an unknown one', async () => {
    const keys = new ApiKeysRepository(env.client, env.tables.apiKeys);
    const record = { keyHash: 'h'.repeat(64), accountId: 'acct_a', keyPrefix: 'mcg_abcd', createdAt: '2026-01-01T00:00:00.000Z' };
    await keys.put(record);
    await expect(keys.put({ ...record, accountId: 'acct_b' })).rejects.toThrow();
    expect((await keys.get(record.keyHash))?.accountId).toBe('acct_a');
    const revoked = await keys.revoke(record.keyHash, new Date('2026-02-01T00:00:00Z'));
    const again = await keys.revoke(record.keyHash, new Date('2026-03-01T00:00:00Z'));
    expect(again.revokedAt).toBe(revoked.revokedAt);
    await expect(keys.revoke('0'.repeat(64))).rejects.toBeInstanceOf(KeyNotFoundError);
  });
});

describe('Class: PromptLogsRepository', () => {
  const meta = {
    promptLogId: 'pl_TEST',
    accountId: 'acct_a',
    createdAt: '2026-01-01T00:00:00.000Z',
    zeroDataRetention: false,
    models: [],
    judges: [],
    creditsUsedMicro: 0,
  };

  it('round-trips content of several items, multi-byte characters across chunk edges included', async () => {
    const logs = new PromptLogsRepository(env.client, env.tables.promptLogs);
    const prompt = '€'.repeat(300_000); // 900,000 bytes: three chunks, each edge inside a character
    await logs.put({ ...meta, promptLogId: 'pl_BIG' }, { prompt, outputs: [{ modelId: 'm', output: 'ok' }] });
    const log = await logs.get('pl_BIG');
    expect(log?.content?.prompt).toBe(prompt);
    expect(log?.content?.outputs).toEqual([{ modelId: 'm', output: 'ok' }]);
  });

  it('stores metadata alone without content', async () => {
    const logs = new PromptLogsRepository(env.client, env.tables.promptLogs);
    await logs.put(meta);
    expect(await logs.get('pl_TEST')).toEqual(meta);
    expect(await logs.get('pl_NONE')).toBeUndefined();
  });
});

describe('Class: DocumentClient, reading every page', () => {
  it('queries and scans page after page until the store says there is no more', async () => {
    const accountId = `acct_pages_${Date.now()}`;
    const table = env.tables.ledger;
    for (let i = 0; i < 7; i++) await env.client.put({ TableName: table, Item: { accountId, entryId: `e${i}`, amountMicro: i } });
    // Limit 2 a page: 4 pages for 7 items.
    const queried: unknown[] = [];
    for await (const item of env.client.queryAll({ TableName: table, KeyConditionExpression: 'accountId = :id', ExpressionAttributeValues: { ':id': accountId }, Limit: 2 })) queried.push(item);
    expect(queried.map((item) => (item as { entryId: string }).entryId)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    const scanned: unknown[] = [];
    for await (const item of env.client.scanAll({ TableName: table, FilterExpression: 'accountId = :id', ExpressionAttributeValues: { ':id': accountId }, Limit: 2 })) scanned.push(item);
    expect(scanned).toHaveLength(7);
  });
});

describe('Local host: the embedded store reached in process', () => {
  it('answers as its HTTP endpoint does: items, a refused condition, a validation error', async () => {
    const inProcess = createDocumentClient({ region: 'local', endpoint: env.store.endpoint, transport: env.store.transport });
    const table = env.tables.ledger;
    const accountId = `acct_transport_${Date.now()}`;
    await inProcess.put({ TableName: table, Item: { accountId, entryId: 'e1', amountMicro: 5, note: 'héllo' } });
    // Written in process, read over HTTP, and the other way round.
    expect((await env.client.get({ TableName: table, Key: { accountId, entryId: 'e1' } })).Item).toEqual({ accountId, entryId: 'e1', amountMicro: 5, note: 'héllo' });
    await env.client.put({ TableName: table, Item: { accountId, entryId: 'e2', amountMicro: 7 } });
    expect((await inProcess.get({ TableName: table, Key: { accountId, entryId: 'e2' } })).Item).toEqual({ accountId, entryId: 'e2', amountMicro: 7 });

    const refuse = (client: typeof inProcess) =>
      client.put({ TableName: table, Item: { accountId, entryId: 'e1', amountMicro: 9 }, ConditionExpression: 'attribute_not_exists(entryId)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }).catch((error: unknown) => error);
    const [overHttp, inProc] = await Promise.all([refuse(env.client), refuse(inProcess)]);
    const fields = (error: unknown) => {
      const { name, message, statusCode, body } = error as AwsServiceError;
      return { name, message, statusCode, body };
    };
    expect(inProc).toBeInstanceOf(ConditionalCheckFailed);
    expect(fields(inProc)).toEqual(fields(overHttp));
    expect(fields(inProc)).toMatchObject({ name: 'ConditionalCheckFailedException', statusCode: 400 });

    const invalid = (client: typeof inProcess) => client.put({ TableName: table, Item: { accountId } }).then(() => new Error('accepted'), (error: unknown) => error as Error);
    const [httpInvalid, inProcInvalid] = await Promise.all([invalid(env.client), invalid(inProcess)]);
    expect(inProcInvalid.name).toBe('ValidationException');
    expect(inProcInvalid.message).toBe(httpInvalid.message);
  });

  it('ends its thread by itself when closed after serving calls in process, without being terminated', async () => {
    const store = await startEmbeddedStore({ port: 0 });
    const client = createDocumentClient({ region: 'local', endpoint: store.endpoint, transport: store.transport });
    await client.raw('ListTables', {});
    expect(await store.close()).toBe('stopped');
  });
});
