import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables, startEmbeddedStore, STORE_KEEP_ALIVE_MS, toCreateTableInput } from '../../infra/local/store.js';
import { ConditionalCheckFailedException, DescribeTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ApiKeysRepository } from '../../shared/storage/api-keys.js';
import { KeyNotFoundError } from '../../shared/storage/errors.js';
import { createStoreClient, instrumentStore, refusedItem } from '../../shared/storage/dynamodb.js';
import { ConditionFailedError } from '../../shared/storage/errors.js';
import { LedgerRepository } from '../../shared/storage/ledger.js';
import { PromptLogsRepository } from '../../shared/storage/prompt-logs.js';
import { TABLES } from '../../shared/storage/tables.js';
import { losingFirstAnswer, startTestStore } from '../support/store.js';

let env: Awaited<ReturnType<typeof startTestStore>>;
beforeAll(async () => {
  env = await startTestStore();
});
afterAll(async () => {
  await env?.close();
});

describe('Local bootstrap', () => {
  it.each(TABLES.map((t) => [t.key, t] as const))('creates %s with the shared definition', async (key, definition) => {
    const { Table } = await env.client.items.send(new DescribeTableCommand({ TableName: env.tables[key] }));
    const expected = toCreateTableInput(definition, env.tables[key]);
    expect(Table?.KeySchema).toEqual(expected.KeySchema);
    expect(Table?.AttributeDefinitions?.sort((a, b) => a.AttributeName!.localeCompare(b.AttributeName!))).toEqual(
      expected.AttributeDefinitions?.sort((a, b) => a.AttributeName!.localeCompare(b.AttributeName!)),
    );
    expect((Table?.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.KeySchema])).toEqual((expected.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.KeySchema]));
    expect(Table?.KeySchema?.[0]?.AttributeName).toBe(definition.partitionKey.name);
  });

  it('is idempotent on a store that already has the tables', async () => {
    await expect(createTables(env.client.items, env.tables)).resolves.toBeUndefined();
  });
});

describe('Class: ApiKeysRepository', () => {
  it('refuses to re-register a hash and to revoke an unknown one', async () => {
    const keys = new ApiKeysRepository(env.client.documents, env.tables.apiKeys);
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

describe('Class: ApiKeysRepository, its first write landed but its answer lost', () => {
  it('takes the refusal of the retried write as the key registered, and still refuses the hash to another account', async () => {
    const { client, sent } = losingFirstAnswer(env.store.endpoint, 'PutItem');
    const keys = new ApiKeysRepository(client.documents, env.tables.apiKeys);
    const record = { keyHash: 'r'.repeat(64), accountId: 'acct_a', keyPrefix: 'mcg_rrrr', createdAt: '2026-01-01T00:00:00.000Z' };
    try {
      await keys.put(record);
      expect(sent).toEqual(['attribute_not_exists(keyHash) AND attribute_not_exists(accountId)', 'attribute_not_exists(keyHash) AND attribute_not_exists(accountId)']);
      expect(await keys.get(record.keyHash)).toEqual(record);
      await expect(keys.put({ ...record, accountId: 'acct_b' })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    } finally {
      client.destroy();
    }
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
    const logs = new PromptLogsRepository(env.client.items, env.tables.promptLogs);
    const prompt = '€'.repeat(300_000); // 900,000 bytes: three chunks, each edge inside a character
    await logs.put({ ...meta, promptLogId: 'pl_BIG' }, { prompt, outputs: [{ modelId: 'm', output: 'ok' }] });
    const log = await logs.get('pl_BIG');
    expect(log?.content?.prompt).toBe(prompt);
    expect(log?.content?.outputs).toEqual([{ modelId: 'm', output: 'ok' }]);
  });

  it('keeps the record of a log whose content piece failed, saying its content is incomplete', async () => {
    // A store that refuses the second piece, as a throttled partition would.
    const failing = {
      send: (command: { input: { Item?: { part?: { S?: string } } } }) =>
        command.input.Item?.part?.S === 'content#001'
          ? Promise.reject(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }))
          : env.client.items.send(command as never),
    } as unknown as typeof env.client.items;
    const prompt = 'x'.repeat(900_000);
    await expect(
      new PromptLogsRepository(failing, env.tables.promptLogs).put({ ...meta, promptLogId: 'pl_TORN', creditsUsedMicro: 42 }, { prompt, outputs: [] }),
    ).rejects.toMatchObject({
      operation: 'promptLogs.putContent',
    });
    const log = await new PromptLogsRepository(env.client.items, env.tables.promptLogs).get('pl_TORN');
    expect(log).toEqual({ ...meta, promptLogId: 'pl_TORN', creditsUsedMicro: 42, contentIncomplete: true });
  });

  it('writes the content pieces one after another, the record first', async () => {
    // Sent all at once, the SDK serialised every piece in one turn of the event loop.
    const sent: string[] = [];
    let inFlight = 0;
    let most = 0;
    const counting = {
      send: async (command: { input: { Item?: { part?: { S?: string } } } }) => {
        sent.push(command.input.Item?.part?.S ?? '');
        most = Math.max(most, ++inFlight);
        try {
          return await env.client.items.send(command as never);
        } finally {
          inFlight--;
        }
      },
    } as unknown as typeof env.client.items;
    const prompt = 'y'.repeat(1_200_000);
    await new PromptLogsRepository(counting, env.tables.promptLogs).put({ ...meta, promptLogId: 'pl_SERIAL' }, { prompt, outputs: [] });
    expect(sent).toEqual(['meta', 'content#000', 'content#001', 'content#002', 'content#003']);
    expect(most).toBe(1);
    expect((await new PromptLogsRepository(env.client.items, env.tables.promptLogs).get('pl_SERIAL'))?.content?.prompt).toBe(prompt);
  });

  it('stores metadata alone without content', async () => {
    const logs = new PromptLogsRepository(env.client.items, env.tables.promptLogs);
    await logs.put(meta);
    expect(await logs.get('pl_TEST')).toEqual(meta);
    expect(await logs.get('pl_NONE')).toBeUndefined();
  });
});

describe('Class: LedgerRepository, reading every page', () => {
  it('lists page after page until the store says there is no more', async () => {
    const accountId = `acct_pages_${Date.now()}`;
    // A page of a query holds at most 1 MB: four entries of 350 KB take two pages at least.
    for (let i = 0; i < 4; i++)
      await env.client.documents.send(new PutCommand({ TableName: env.tables.ledger, Item: { accountId, entryId: `e${i}`, amountMicro: i, pad: 'x'.repeat(350_000) } }));
    const client = createStoreClient({ region: 'local', endpoint: env.store.endpoint, local: true });
    const calls: string[] = [];
    instrumentStore(client, (operation, call) => {
      calls.push(operation);
      return call();
    });
    const ledger = new LedgerRepository(client.items, env.tables.ledger);
    expect((await ledger.list(accountId)).map((entry) => entry.entryId)).toEqual(['e0', 'e1', 'e2', 'e3']);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls)).toEqual(new Set(['DynamoDB.Query']));
    client.destroy();
  });
});

describe('Class: LedgerRepository, append-only', () => {
  it('posts an entry once: posting it again changes nothing, and another entry under its key is refused, the first kept', async () => {
    const ledger = new LedgerRepository(env.client.items, env.tables.ledger);
    const entry = { accountId: `acct_append_${Date.now()}`, entryId: '01TOPUP#topup', kind: 'topup' as const, amountMicro: 500, at: Date.now() };
    await ledger.put(entry);
    await ledger.put(entry);
    await expect(ledger.put({ ...entry, amountMicro: 5_000_000 })).rejects.toBeInstanceOf(ConditionFailedError);
    expect(await ledger.list(entry.accountId)).toEqual([entry]);
  });
});

describe('Repositories given another table by mistake (a *_TABLE naming the accounts table)', () => {
  it('write no ledger entry and no key over an account: each put wants no item at all at its key', async () => {
    const accountId = `acct_misnamed_${Date.now()}`;
    const account = { accountId, balanceMicro: 100_000_000 };
    await env.client.documents.send(new PutCommand({ TableName: env.tables.accounts, Item: account }));
    const wrongLedger = new LedgerRepository(env.client.items, env.tables.accounts);
    const wrongKeys = new ApiKeysRepository(env.client.documents, env.tables.accounts);
    await expect(wrongLedger.put({ accountId, entryId: '01TOPUP#topup', kind: 'topup', amountMicro: 5_000_000, at: Date.now() })).rejects.toThrow();
    await expect(wrongKeys.put({ keyHash: 'w'.repeat(64), accountId, keyPrefix: 'mcg_wwww', createdAt: '2026-01-01T00:00:00.000Z' })).rejects.toThrow();
    // The account as it was: the entry's and the key's puts had replaced it.
    expect((await env.client.documents.send(new GetCommand({ TableName: env.tables.accounts, Key: { accountId }, ConsistentRead: true }))).Item).toEqual(account);
  });
});

describe('Local host: the embedded store reached in process', () => {
  it('answers as its HTTP endpoint does: items, a refused condition, a validation error', async () => {
    const inProcess = createStoreClient({ region: 'local', endpoint: env.store.endpoint, local: true, requestHandler: env.store.requestHandler }).documents;
    const table = env.tables.ledger;
    const accountId = `acct_transport_${Date.now()}`;
    await inProcess.send(new PutCommand({ TableName: table, Item: { accountId, entryId: 'e1', amountMicro: 5, note: 'héllo' } }));
    // Written in process, read over HTTP, and the other way round.
    expect((await env.client.documents.send(new GetCommand({ TableName: table, Key: { accountId, entryId: 'e1' } }))).Item).toEqual({
      accountId,
      entryId: 'e1',
      amountMicro: 5,
      note: 'héllo',
    });
    await env.client.documents.send(new PutCommand({ TableName: table, Item: { accountId, entryId: 'e2', amountMicro: 7 } }));
    expect((await inProcess.send(new GetCommand({ TableName: table, Key: { accountId, entryId: 'e2' } }))).Item).toEqual({ accountId, entryId: 'e2', amountMicro: 7 });

    const refuse = (client: DynamoDBDocumentClient) =>
      client
        .send(
          new PutCommand({
            TableName: table,
            Item: { accountId, entryId: 'e1', amountMicro: 9 },
            ConditionExpression: 'attribute_not_exists(entryId)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        )
        .then(
          () => {
            throw new Error('accepted');
          },
          (error: unknown) => error as ConditionalCheckFailedException,
        );
    const [overHttp, inProc] = await Promise.all([refuse(env.client.documents), refuse(inProcess)]);
    const fields = (error: ConditionalCheckFailedException) => ({ name: error.name, message: error.message, status: error.$metadata.httpStatusCode, item: refusedItem(error) });
    expect(inProc).toBeInstanceOf(ConditionalCheckFailedException);
    expect(fields(inProc)).toEqual(fields(overHttp));
    expect(fields(inProc)).toMatchObject({ name: 'ConditionalCheckFailedException', status: 400 });

    const invalid = (client: DynamoDBDocumentClient) =>
      client.send(new PutCommand({ TableName: table, Item: { accountId } })).then(
        () => new Error('accepted'),
        (error: unknown) => error as Error,
      );
    const [httpInvalid, inProcInvalid] = await Promise.all([invalid(env.client.documents), invalid(inProcess)]);
    expect(inProcInvalid.name).toBe('ValidationException');
    expect(inProcInvalid.message).toBe(httpInvalid.message);
  });

  it('keeps an idle client connection open for minutes, not 5 s: a busy client then sends no burst on connections the store closed unseen', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
        const req = request(`${env.store.endpoint}/`, { agent, method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['keep-alive'] as string | undefined));
        });
        req.on('error', reject);
        req.end('{}');
      });
      // Node's server says how long it keeps the connection: its default was timeout=5.
      expect(keepAlive).toBe(`timeout=${STORE_KEEP_ALIVE_MS / 1000}`);
      expect(STORE_KEEP_ALIVE_MS).toBeGreaterThanOrEqual(5 * 60_000);
    } finally {
      agent.destroy();
    }
  });

  it("answers HTTP requests named for this machine and from no web page only: another Host (a page's, its DNS rebound to 127.0.0.1), an Origin or a preflight is refused, unread", async () => {
    const listTables = (host: string, extra: Record<string, string> = {}, method = 'POST') =>
      new Promise<{ status: number; body: string; allowOrigin: string | undefined }>((resolve, reject) => {
        const req = request(
          `${env.store.endpoint}/`,
          {
            method,
            headers: {
              ...extra,
              host,
              'content-type': 'application/x-amz-json-1.0',
              'x-amz-target': 'DynamoDB_20120810.ListTables',
              // dynalite wants a signature's shape, and checks none.
              'x-amz-date': '20260101T000000Z',
              authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
            },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body, allowOrigin: res.headers['access-control-allow-origin'] as string | undefined }));
          },
        );
        req.on('error', reject);
        req.end(method === 'OPTIONS' ? undefined : '{}');
      });
    const port = new URL(env.store.endpoint).port;
    const refused = await listTables(`attacker.example:${port}`);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).__type).toMatch(/AccessDeniedException$/);
    expect(refused.body).not.toContain(env.tables.ledger);
    // A page calling 127.0.0.1 itself: dynalite would allow any origin.
    for (const [extra, method] of [
      [{ origin: 'https://attacker.example' }, 'POST'],
      [{ origin: 'https://attacker.example', 'access-control-request-method': 'POST' }, 'OPTIONS'],
    ] as const) {
      const fromPage = await listTables(`127.0.0.1:${port}`, extra, method);
      expect(fromPage.status).toBe(403);
      expect(fromPage.allowOrigin).toBeUndefined();
      expect(fromPage.body).not.toContain(env.tables.ledger);
    }
    // Docker Desktop's name for this machine, which sam-local's containers call it by (it had been refused).
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `0.0.0.0:${port}`, `host.docker.internal:${port}`])
      expect(JSON.parse((await listTables(host)).body).TableNames).toContain(env.tables.ledger);
  });

  it('records the operations it receives in process, in arrival order, and hands each over once', async () => {
    const store = await startEmbeddedStore({ port: 0 });
    try {
      const client = createStoreClient({ region: 'local', endpoint: store.endpoint, local: true, requestHandler: store.requestHandler }).items;
      const before = performance.timeOrigin + performance.now();
      await client.send(new ListTablesCommand({}));
      await client.send(new DescribeTableCommand({ TableName: 'absent' })).catch(() => undefined);
      const calls = await store.calls();
      expect(calls.map((call) => call.operation)).toEqual(['ListTables', 'DescribeTable']);
      expect(calls[0]!.at).toBeGreaterThanOrEqual(before - 1);
      expect(calls[1]!.at).toBeGreaterThanOrEqual(calls[0]!.at);
      expect(await store.calls()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('answers conditional writes from the expressions it remembered as from parsing them: each request its own path, the balance never overdrawn', async () => {
    const documents = env.client.documents;
    await documents.send(new PutCommand({ TableName: env.tables.accounts, Item: { accountId: 'acct_parses', balance: 55, holds: {} } }));
    const before = await env.store.parses();
    const hold = (request: string) =>
      documents
        .send(
          new UpdateCommand({
            TableName: env.tables.accounts,
            Key: { accountId: 'acct_parses' },
            UpdateExpression: 'SET balance = balance - :amount, holds.#request = :hold',
            ConditionExpression: 'balance >= :amount AND attribute_not_exists(holds.#request)',
            ExpressionAttributeNames: { '#request': request },
            ExpressionAttributeValues: { ':amount': 10, ':hold': { amount: 10 } },
          }),
        )
        .then(
          () => 'held',
          (error: Error) => error.name,
        );
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await hold(`req${i}`));
    // A request already held is refused by the same condition, taken from memory.
    answers.push(await hold('req0'));
    expect(answers).toEqual([...Array(5).fill('held'), ...Array(4).fill('ConditionalCheckFailedException')]);
    const { Item } = await documents.send(new GetCommand({ TableName: env.tables.accounts, Key: { accountId: 'acct_parses' } }));
    expect(Item).toEqual({ accountId: 'acct_parses', balance: 5, holds: Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`req${i}`, { amount: 10 }])) });
    const after = await env.store.parses();
    // 9 writes of an update and a condition each: all but the first write's from memory.
    expect(after.remembered - before.remembered).toBe(16);
    expect(after.parsed - before.parsed).toBe(2);
  });

  it('ends its thread by itself when closed after serving calls in process, without being terminated', async () => {
    const store = await startEmbeddedStore({ port: 0 });
    const client = createStoreClient({ region: 'local', endpoint: store.endpoint, local: true, requestHandler: store.requestHandler }).items;
    await client.send(new ListTablesCommand({}));
    expect(await store.close()).toBe('stopped');
  });
});
