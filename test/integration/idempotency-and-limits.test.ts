import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, ResponseNotRetainedError } from '../../shared/idempotency/errors.js';
import { canonicalJson, IDEMPOTENCY_WINDOW_MS, IdempotencyService } from '../../shared/idempotency/idempotency-service.js';
import { IdempotencyRepository } from '../../shared/storage/idempotency.js';
import { CreditsService, RESERVATION_TIMEOUT_MS } from '../../shared/credits/credits-service.js';
import { RateLimitedError } from '../../shared/errors.js';
import { promptLogId } from '../../shared/ids.js';
import { AccountsRepository } from '../../shared/storage/accounts.js';
import { LedgerRepository } from '../../shared/storage/ledger.js';
import { startTestStore } from '../support/store.js';
import { recordingLog } from '../support/log.js';
import type { LocalHost } from '../../infra/local/host.js';
import { balanceOf, openTestAccount } from '../support/accounts.js';
import { chatCompletionAnswer } from '../support/fixtures.js';
import { post, useTestHost } from '../support/local.js';

let env: Awaited<ReturnType<typeof startTestStore>>;
beforeAll(async () => {
  env = await startTestStore();
});
afterAll(async () => {
  await env?.close();
});

describe('Rate window, counted in the reserve write', () => {
  const clock = { now: 0 };
  const credits = () =>
    new CreditsService(new AccountsRepository(env.client.items, env.tables.accounts), new LedgerRepository(env.client.items, env.tables.ledger), undefined, () => clock.now);
  const reserve = (accountId: string, limit: number, estimate = 1) => credits().reserve(accountId, promptLogId(clock.now), estimate, { limitPerMinute: limit, inFlight: 1_000 });
  /** At `hour` UTC on 2026-11-22: a service, the accounts repository, and the limits the slots tests reserve under (5 at once). */
  const slotsTest = (hour: number) => {
    clock.now = Date.UTC(2026, 10, 22, hour, 0, 0);
    return { service: credits(), accounts: new AccountsRepository(env.client.items, env.tables.accounts), limits: { limitPerMinute: 100, inFlight: 5 } };
  };
  const outcome = (promise: Promise<unknown>) =>
    promise.then(
      () => 'reserved',
      (error: unknown) => (error instanceof RateLimitedError ? `429 retry after ${error.retryAfterSeconds} s` : (error as Error).name),
    );

  it('admits the limit per one-minute window and rolls over to a fresh window', async () => {
    const windowStart = Date.UTC(2026, 10, 22, 10, 0, 0);
    clock.now = windowStart + 15_000;
    const { accountId } = await credits().openAccount({ balanceMicro: 1_000 });
    const { accountId: other } = await credits().openAccount({ balanceMicro: 1_000 });
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await outcome(reserve(accountId, 2)));
    expect(decisions).toEqual(['reserved', 'reserved', '429 retry after 45 s']);
    clock.now = windowStart + 59_999;
    expect(await outcome(reserve(accountId, 2))).toBe('429 retry after 1 s');
    expect(await outcome(reserve(other, 2))).toBe('reserved');
    clock.now = windowStart + 60_000;
    expect(await outcome(reserve(accountId, 2))).toBe('reserved');
    // Two reservations in the first window and one in the second hold 3 micro-credits.
    expect((await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!.balanceMicro).toBe(997);
  });

  it('admits at most `inFlight` open requests of an account: the next is a 429, counted nowhere, until one has settled; other accounts are not held', async () => {
    clock.now = Date.UTC(2026, 10, 22, 13, 0, 0);
    const service = credits();
    const { accountId } = await service.openAccount({ balanceMicro: 1_000 });
    const { accountId: other } = await service.openAccount({ balanceMicro: 1_000 });
    const limits = { limitPerMinute: 100, inFlight: 2 };
    const first = await service.reserve(accountId, promptLogId(clock.now), 1, limits);
    await service.reserve(accountId, promptLogId(clock.now), 1, limits);
    const refused = await service.reserve(accountId, promptLogId(clock.now), 1, limits).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 1, message: expect.stringMatching(/^2 requests of this account are still running/) });
    expect(await outcome(service.reserve(other, promptLogId(clock.now), 1, limits))).toBe('reserved');
    await service.settle(first, 1);
    expect(await outcome(service.reserve(accountId, promptLogId(clock.now), 1, limits))).toBe('reserved');
    // The refused one held nothing and was not counted in the minute's window.
    const account = (await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!;
    expect([account.rateWindow?.count, Object.keys(account.reservations).length, account.balanceMicro]).toEqual([3, 2, 1_000 - 3]);
  });

  it('counts a judged request 1, and 1 a model (or judge, whichever are more), among the requests at once (the instances it runs), gives its count back when it closes, and runs one that counts more than the limit alone', async () => {
    const { service, accounts, limits } = slotsTest(14);
    const { accountId } = await service.openAccount({ balanceMicro: 1_000 });
    const slotsHeld = async () => (await accounts.get(accountId))!.inFlightSlots;
    // A judged request of 3 models counts 4, a plain one 1: the limit of 5 is reached with two requests running.
    const judged = await service.reserve(accountId, promptLogId(clock.now), 1, limits, 4);
    await service.reserve(accountId, promptLogId(clock.now), 1, limits);
    expect(await slotsHeld()).toBe(5);
    const refused = await service.reserve(accountId, promptLogId(clock.now), 1, limits).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      status: 429,
      message:
        '2 requests of this account are still running, counting 5 of the 5 it may run at once (a judged request counts 1, and 1 a model or judge, whichever are more); retry when one has ended',
    });
    // Its close gives its 4 back: room for another judged request of 3 models, not for one of 4.
    await service.settle(judged, 1);
    expect(await slotsHeld()).toBe(1);
    expect(await outcome(service.reserve(accountId, promptLogId(clock.now), 1, limits, 5))).toBe('429 retry after 1 s');
    const again = await service.reserve(accountId, promptLogId(clock.now), 1, limits, 4);
    expect(await slotsHeld()).toBe(5);
    // The reconciler's close of an abandoned reservation gives its count back too.
    clock.now += RESERVATION_TIMEOUT_MS;
    await service.reconcile();
    expect([await slotsHeld(), Object.keys((await accounts.get(accountId))!.reservations)]).toEqual([0, []]);
    // One that would count more than the limit counts the limit: it runs alone, never forever refused.
    const alone = await service.reserve(accountId, promptLogId(clock.now), 1, limits, 12);
    expect([alone.reservation.slots, await slotsHeld()]).toEqual([5, 5]);
    expect(await outcome(service.reserve(accountId, promptLogId(clock.now), 1, limits))).toBe('429 retry after 1 s');
    expect(again.reservation.slots).toBe(4);
  });

  it('sets a count that its open reservations do not add up to (something closed them without giving their slots back) to theirs at the next reconcile, so that no account stays at its limit', async () => {
    const { service, accounts, limits } = slotsTest(16);
    const { accountId: stuck } = await service.openAccount({ balanceMicro: 1_000 });
    const { accountId: partly } = await service.openAccount({ balanceMicro: 1_000 });
    await service.reserve(partly, promptLogId(clock.now), 1, limits, 3);
    // As a closer that gave nothing back would leave them: a count with no reservation behind it, and one too high.
    for (const [accountId, count] of [
      [stuck, 5],
      [partly, 8],
    ] as const) {
      await env.client.documents.send(
        new UpdateCommand({ TableName: env.tables.accounts, Key: { accountId }, UpdateExpression: 'SET inFlightSlots = :n', ExpressionAttributeValues: { ':n': count } }),
      );
    }
    expect(await outcome(service.reserve(stuck, promptLogId(clock.now), 1, limits))).toBe('429 retry after 1 s');

    await service.reconcile();

    expect([(await accounts.get(stuck))!.inFlightSlots, (await accounts.get(partly))!.inFlightSlots]).toEqual([0, 3]);
    expect(await outcome(service.reserve(stuck, promptLogId(clock.now), 1, limits))).toBe('reserved');
    expect(await outcome(service.reserve(partly, promptLogId(clock.now), 1, limits, 2))).toBe('reserved');
  });

  it("closes a reservation an older gateway took (no slots, counted nowhere) without taking from the others' count", async () => {
    const { service, accounts, limits } = slotsTest(15);
    const { accountId } = await service.openAccount({ balanceMicro: 1_000 });
    await service.reserve(accountId, promptLogId(clock.now), 1, limits, 3);
    // A reservation as an older gateway wrote it: no slots, and nothing added to inFlightSlots.
    const older = { accountId, requestId: promptLogId(clock.now), reservation: { amountMicro: 2, at: clock.now } };
    await env.client.documents.send(
      new UpdateCommand({
        TableName: env.tables.accounts,
        Key: { accountId },
        UpdateExpression: 'SET reservations.#request = :reservation, balanceMicro = balanceMicro - :amount',
        ExpressionAttributeNames: { '#request': older.requestId },
        ExpressionAttributeValues: { ':reservation': older.reservation, ':amount': 2 },
      }),
    );
    await service.settle(older, 2);
    const account = (await accounts.get(accountId))!;
    expect([account.inFlightSlots, Object.keys(account.reservations).length, account.balanceMicro]).toEqual([3, 1, 1_000 - 1 - 2]);
  });

  it('never admits more than the limit when requests arrive at once, and holds credits for those only', async () => {
    clock.now = Date.UTC(2026, 10, 22, 11, 0, 0);
    const { accountId } = await credits().openAccount({ balanceMicro: 1_000 });
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => outcome(reserve(accountId, 10, 7))));
    expect(outcomes.filter((o) => o === 'reserved')).toHaveLength(10);
    expect(outcomes.filter((o) => o.startsWith('429'))).toHaveLength(20);
    expect((await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!.balanceMicro).toBe(1_000 - 70);
  });

  it('counts a request the balance refused (402), and reports 429 first when both refuse', async () => {
    clock.now = Date.UTC(2026, 10, 22, 12, 0, 0);
    const { accountId } = await credits().openAccount({ balanceMicro: 10 });
    expect(await outcome(reserve(accountId, 2, 11))).toBe('InsufficientCreditsError');
    expect(await outcome(reserve(accountId, 2, 10))).toBe('reserved');
    // The 402 counted, the window is full: both refuse, and the 429 is answered.
    expect(await outcome(reserve(accountId, 2, 11))).toBe('429 retry after 60 s');
    expect((await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!.rateWindow).toEqual({ start: clock.now, count: 2 });
  });

  it('counts in a window that a function with a clock ahead opened, instead of looping', async () => {
    clock.now = Date.UTC(2026, 10, 22, 13, 1, 0) + 500;
    const { accountId } = await credits().openAccount({ balanceMicro: 1_000 });
    expect(await outcome(reserve(accountId, 2))).toBe('reserved');
    clock.now -= 1_000; // the previous minute, by this function's clock
    expect(await outcome(reserve(accountId, 2))).toBe('reserved');
    expect(await outcome(reserve(accountId, 2))).toMatch(/^429/);
    expect((await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!.rateWindow).toEqual({ start: Date.UTC(2026, 10, 22, 13, 1, 0), count: 2 });
  });

  it('counts a request that holds nothing (a replay) in the same window, holding no credits, and refuses it past the limit as it refuses a reserve', async () => {
    const windowStart = Date.UTC(2026, 10, 22, 14, 0, 0);
    clock.now = windowStart + 30_000;
    const service = credits();
    const { accountId } = await service.openAccount({ balanceMicro: 1_000 });
    const count = () => outcome(service.countRequest(accountId, { limitPerMinute: 3 }).then(() => 'reserved'));
    expect(await outcome(reserve(accountId, 3))).toBe('reserved');
    expect([await count(), await count(), await count()]).toEqual(['reserved', 'reserved', '429 retry after 30 s']);
    expect(await outcome(reserve(accountId, 3))).toBe('429 retry after 30 s');
    const account = (await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!;
    expect(account.rateWindow).toEqual({ start: windowStart, count: 3 });
    expect(account.balanceMicro).toBe(999);
    // A new minute: the count opens it.
    clock.now = windowStart + 60_000;
    expect(await count()).toBe('reserved');
    expect((await new AccountsRepository(env.client.items, env.tables.accounts).get(accountId))!.rateWindow).toEqual({ start: windowStart + 60_000, count: 1 });
  });

  it('refuses to count a request of a key the account lists as revoked', async () => {
    clock.now = Date.UTC(2026, 10, 22, 15, 0, 0);
    const service = credits();
    const accounts = new AccountsRepository(env.client.items, env.tables.accounts);
    const { accountId } = await service.openAccount({ balanceMicro: 1_000 });
    await accounts.revokeKey(accountId, 'a'.repeat(64), clock.now);
    expect(await outcome(service.countRequest(accountId, { limitPerMinute: 10, keyHash: 'a'.repeat(64) }))).toBe('UnauthorizedError');
    expect(await outcome(service.countRequest(accountId, { limitPerMinute: 10, keyHash: 'b'.repeat(64) }).then(() => 'reserved'))).toBe('reserved');
  });
});

describe('Class: IdempotencyService', () => {
  const service = () => new IdempotencyService<{ n: number; text?: string }>(new IdempotencyRepository(env.client.documents, env.tables.idempotency), 30_000);

  it("compares bodies with their keys sorted, but a response schema as written: its properties' order is its output's", () => {
    const schema = (order: string[]) => ({
      type: 'object',
      properties: Object.fromEntries(order.map((name) => [name, { type: 'string' }])),
      required: ['first', 'second'],
      additionalProperties: false,
    });
    const body = (order: string[]) => ({ prompt: 'p', models: ['fam_c-5.4'], response_schema: schema(order), generation_settings: { temperature: 0, maxTokens: 9 } });
    const reordered = { generation_settings: { maxTokens: 9, temperature: 0 }, response_schema: schema(['first', 'second']), models: ['fam_c-5.4'], prompt: 'p' };
    expect(canonicalJson(reordered)).toBe(canonicalJson(body(['first', 'second'])));
    expect(canonicalJson(body(['second', 'first']))).not.toBe(canonicalJson(body(['first', 'second'])));
  });

  it('replays a record written before response schemas were compared as written (its hash over the schema sorted) for the same body; a record written now tells the orders apart', async () => {
    const idem = service();
    const now = Date.UTC(2026, 10, 27, 9, 0, 0);
    const schema = (order: string[]) => ({ type: 'object', properties: Object.fromEntries(order.map((name) => [name, { type: 'string' }])), additionalProperties: false });
    const body = (order: string[]) => ({ prompt: 'p', models: ['fam_a-sonnet-4-6'], response_schema: schema(order) });
    const first = (await idem.begin('acct_v', 'old-key', body(['b', 'a']), 'pl_v1', now)) as { recordKey: string };
    await idem.complete(first.recordKey, 'pl_v1', { n: 7 }, false, now);
    // As earlier versions wrote it, under the mark hmac-sha256: keyed, over the body with every key sorted (the response schema's too), or with the schema as written.
    const markedHash = (schemaAsWritten: boolean) =>
      `hmac-sha256:${createHmac('sha256', 'old-key')
        .update(canonicalJson(body(['b', 'a']), schemaAsWritten), 'utf8')
        .digest('hex')}`;
    const setHash = (hash: string) =>
      env.client.documents.send(
        new UpdateCommand({
          TableName: env.tables.idempotency,
          Key: { idempotencyKey: first.recordKey },
          UpdateExpression: 'SET bodyHash = :hash',
          ExpressionAttributeValues: { ':hash': hash },
        }),
      );
    await setHash(markedHash(true));
    expect(await idem.begin('acct_v', 'old-key', body(['b', 'a']), 'pl_v2b', now + 1)).toEqual({ kind: 'replay', response: { n: 7 } });
    await setHash(markedHash(false));
    expect(await idem.begin('acct_v', 'old-key', body(['b', 'a']), 'pl_v2', now + 1)).toEqual({ kind: 'replay', response: { n: 7 } });
    // Such a record cannot tell the orders apart (it was written sorted): either replays, as it did.
    expect(await idem.begin('acct_v', 'old-key', body(['a', 'b']), 'pl_v3', now + 2)).toEqual({ kind: 'replay', response: { n: 7 } });
    // A record written now does.
    const fresh = (await idem.begin('acct_v', 'new-key', body(['b', 'a']), 'pl_v4', now)) as { recordKey: string };
    await idem.complete(fresh.recordKey, 'pl_v4', { n: 8 }, false, now);
    await expect(idem.begin('acct_v', 'new-key', body(['a', 'b']), 'pl_v5', now + 1)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('runs a key again once its record is 24 hours old, checked by timestamp', async () => {
    const idem = service();
    const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
    const first = await idem.begin('acct_i', 'day-key', { a: 1 }, 'pl_1', t0);
    expect(first.kind).toBe('run');
    await idem.complete((first as { recordKey: string }).recordKey, 'pl_1', { n: 1 }, false);
    expect(await idem.begin('acct_i', 'day-key', { a: 1 }, 'pl_2', t0 + IDEMPOTENCY_WINDOW_MS - 1_000)).toEqual({ kind: 'replay', response: { n: 1 } });
    expect((await idem.begin('acct_i', 'day-key', { a: 1 }, 'pl_3', t0 + IDEMPOTENCY_WINDOW_MS + 1_000)).kind).toBe('run');
  });

  it('keeps the record small: a completed answer is in an item of its own, which only a replay reads (a refused claim is billed by the size of the item it refused)', async () => {
    const idem = service();
    const now = Date.UTC(2026, 10, 27, 8, 0, 0);
    const first = (await idem.begin('acct_s', 'big-key', { a: 1 }, 'pl_s1', now)) as { recordKey: string };
    // 200 KB that gzip cannot shrink.
    const big = { n: 1, text: randomBytes(150_000).toString('base64') };
    await idem.complete(first.recordKey, 'pl_s1', big, false, now);
    const record = async (key: string) => (await env.client.documents.send(new GetCommand({ TableName: env.tables.idempotency, Key: { idempotencyKey: key } }))).Item;
    const completed = await record(first.recordKey);
    expect(completed).toMatchObject({ status: 'completed', responseStored: true, promptLogId: 'pl_s1' });
    expect(completed!.response).toBeUndefined();
    expect(JSON.stringify(completed).length).toBeLessThan(1_000);
    expect(await idem.begin('acct_s', 'big-key', { a: 1 }, 'pl_s2', now + 1)).toEqual({ kind: 'replay', response: big });

    // A record written before, its response on it, still replays for the 24 hours it lives.
    const legacy = (await idem.begin('acct_s', 'legacy-big-key', { a: 1 }, 'pl_s3', now)) as { recordKey: string };
    await env.client.documents.send(
      new UpdateCommand({
        TableName: env.tables.idempotency,
        Key: { idempotencyKey: legacy.recordKey },
        UpdateExpression: 'SET #status = :completed, #response = :response',
        ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
        ExpressionAttributeValues: { ':completed': 'completed', ':response': new Uint8Array(gzipSync(JSON.stringify({ n: 3 }))) },
      }),
    );
    expect(await idem.begin('acct_s', 'legacy-big-key', { a: 1 }, 'pl_s4', now + 1)).toEqual({ kind: 'replay', response: { n: 3 } });

    // Its response item gone (TTL deletes each item in its own time): 409 naming the run, never a 500.
    await env.client.documents.send(new DeleteCommand({ TableName: env.tables.idempotency, Key: { idempotencyKey: `${first.recordKey}#response#pl_s1` } }));
    const gone = await idem.begin('acct_s', 'big-key', { a: 1 }, 'pl_s5', now + 2).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(ResponseNotRetainedError);
    expect(gone).toMatchObject({ promptLogId: 'pl_s1', message: expect.stringMatching(/no longer there/) });
  });

  it('keeps no fingerprint of the body that a reader of the table could test a guessed prompt against', async () => {
    const idem = service();
    const records = new IdempotencyRepository(env.client.documents, env.tables.idempotency);
    const body = { prompt: 'a guessable prompt', models: ['fam_c-5.4'] };
    const now = Date.UTC(2026, 10, 22, 14, 0, 0);
    const first = (await idem.begin('acct_h', 'key-one', body, 'pl_h1', now)) as { recordKey: string };
    const second = (await idem.begin('acct_h', 'key-two', body, 'pl_h2', now)) as { recordKey: string };
    const stored = await Promise.all(
      [first.recordKey, second.recordKey].map((key) => env.client.documents.send(new GetCommand({ TableName: env.tables.idempotency, Key: { idempotencyKey: key } }))),
    );
    const hashes = stored.map(({ Item }) => String(Item?.bodyHash));
    const bare = createHash('sha256').update(canonicalJson(body), 'utf8').digest('hex');
    expect(hashes.some((hash) => hash.includes(bare))).toBe(false);
    // Keyed per Idempotency-Key: the same body under two keys shares no fingerprint either.
    expect(hashes[0]).not.toBe(hashes[1]);
    // The same body under its own key still matches, another body does not.
    await expect(idem.begin('acct_h', 'key-one', body, 'pl_h3', now + 1)).rejects.toBeInstanceOf(IdempotencyInProgressError);
    await expect(idem.begin('acct_h', 'key-one', { ...body, prompt: 'another' }, 'pl_h4', now + 1)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    // A record written before (a bare SHA-256) is still recognised, for the 24 hours it lives.
    const legacyKey = `acct_h#${createHash('sha256').update('legacy-key').digest('hex')}`;
    await records.claim(
      { idempotencyKey: legacyKey, bodyHash: bare, status: 'running', promptLogId: 'pl_old', leaseUntil: now + 30_000, createdAt: now, expiresAt: Math.floor(now / 1000) + 86_400 },
      now,
    );
    await expect(idem.begin('acct_h', 'legacy-key', body, 'pl_h5', now + 1)).rejects.toBeInstanceOf(IdempotencyInProgressError);
    await expect(idem.begin('acct_h', 'legacy-key', { ...body, prompt: 'another' }, 'pl_h6', now + 1)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('wraps a unit of work: runs it once, replays its recorded answer without running it, and releases the key when it fails', async () => {
    const idem = service();
    const now = Date.now();
    const scope = (key: string, promptLogId: string) => ({ accountId: 'acct_w', key, body: { a: 1 }, promptLogId, receivedAt: now, zeroDataRetention: false });
    const finished: boolean[] = [];
    let runs = 0;
    const work = async () => {
      runs++;
      return { answered: Promise.resolve({ response: { n: runs }, finish: async (charge = true) => void finished.push(charge) }) };
    };

    const first = await idem.run(scope('wrap-key', 'pl_w1'), work);
    expect(first.replayed).toBe(false);
    const outcome = await (first as { answered: Promise<{ response: { n: number }; finish: () => Promise<void> }> }).answered;
    expect(outcome.response).toEqual({ n: 1 });
    await outcome.finish();
    // The record was completed before the answer was handed on: a retry replays it and runs nothing.
    expect(await idem.run(scope('wrap-key', 'pl_w2'), work)).toEqual({ replayed: true, response: { n: 1 } });
    expect(runs).toBe(1);
    expect(finished).toEqual([true]);

    // A unit that fails releases its key: the retry runs.
    const refused = new Error('402');
    await expect(idem.run(scope('failing-key', 'pl_w3'), () => Promise.reject(refused))).rejects.toBe(refused);
    expect((await idem.run(scope('failing-key', 'pl_w4'), work)).replayed).toBe(false);
    expect(runs).toBe(2);
  });

  it('charges nothing for an answer it could not record (too large to serialise), and frees the key for the retry at once', async () => {
    const idem = service();
    const scope = (promptLogId: string) => ({ accountId: 'acct_w', key: 'unrecordable', body: { a: 1 }, promptLogId, receivedAt: Date.now(), zeroDataRetention: false });
    const finished: boolean[] = [];
    // An answer JSON.stringify refuses, as it refuses outputs past V8's string length.
    const unserialisable = {
      n: 1,
      toJSON: () => {
        throw new RangeError('Invalid string length');
      },
    };
    const first = await idem.run(scope('pl_u1'), async () => ({
      answered: Promise.resolve({ response: unserialisable, finish: async (charge = true) => void finished.push(charge) }),
    }));
    const outcome = await (first as { answered: Promise<{ finish: () => Promise<void> }> }).answered;
    await outcome.finish();
    expect(finished).toEqual([false]);

    // The retry runs now, not after the 30 s lease.
    const retried = await idem.run(scope('pl_u2'), async () => ({ answered: Promise.resolve({ response: { n: 2 }, finish: async () => undefined }) }));
    expect(retried.replayed).toBe(false);
  });

  it('records no answer its work says is not worth replaying (it charged nothing): its writes charge nothing and the retry runs', async () => {
    const idem = service();
    const scope = (promptLogId: string) => ({ accountId: 'acct_w', key: 'nothing-to-replay', body: { a: 1 }, promptLogId, receivedAt: Date.now(), zeroDataRetention: false });
    const finished: boolean[] = [];
    const first = await idem.run(scope('pl_n1'), async () => ({
      answered: Promise.resolve({ response: { n: 0 }, replayable: false, finish: async (charge = true) => void finished.push(charge) }),
    }));
    await (await (first as { answered: Promise<{ finish: () => Promise<void> }> }).answered).finish();
    expect(finished).toEqual([false]);
    const retried = await idem.run(scope('pl_n2'), async () => ({ answered: Promise.resolve({ response: { n: 1 }, finish: async () => undefined }) }));
    expect(retried.replayed).toBe(false);
  });

  it('leaves the answer of the run that took a key over as it was when the run it took it from completes late', async () => {
    const idem = service();
    const t0 = Date.UTC(2026, 10, 27, 9, 0, 0);
    const late = (await idem.begin('acct_l', 'late-key', { a: 1 }, 'pl_late', t0)) as { recordKey: string };
    // The lease passed: a retry takes the key over, runs and completes.
    const retry = (await idem.begin('acct_l', 'late-key', { a: 1 }, 'pl_retry', t0 + 31_000)) as { recordKey: string };
    await idem.complete(retry.recordKey, 'pl_retry', { n: 2 }, false, t0 + 32_000);
    // The first run's completion comes after: refused, the retry's answer untouched.
    await expect(idem.complete(late.recordKey, 'pl_late', { n: 1 }, false, t0 + 33_000)).rejects.toThrow();
    expect(await idem.begin('acct_l', 'late-key', { a: 1 }, 'pl_replay', t0 + 34_000)).toEqual({ kind: 'replay', response: { n: 2 } });
  });

  it('leaves a completed record in place when its run releases the key (the completion landed, its answer lost): the retry replays, never runs again', async () => {
    const records = new IdempotencyRepository(env.client.documents, env.tables.idempotency);
    // The store writes the completion, and its answer never comes back.
    const lost = Object.assign(Object.create(records) as IdempotencyRepository, {
      complete: async (...args: Parameters<IdempotencyRepository['complete']>) => {
        await records.complete(...args);
        throw new Error('socket hang up');
      },
    });
    const idem = new IdempotencyService<{ n: number }>(lost, 30_000);
    const scope = (promptLogId: string) => ({ accountId: 'acct_r', key: 'landed-key', body: { a: 1 }, promptLogId, receivedAt: Date.now(), zeroDataRetention: false });
    const finished: boolean[] = [];
    let runs = 0;
    const work = async () => {
      runs++;
      return { answered: Promise.resolve({ response: { n: runs }, finish: async (charge = true) => void finished.push(charge) }) };
    };
    const first = await idem.run(scope('pl_r1'), work);
    // Its writes release the key (the record looks unwritten) and charge nothing.
    await (await (first as { answered: Promise<{ finish: () => Promise<void> }> }).answered).finish();
    expect(finished).toEqual([false]);
    const recordKey = `acct_r#${createHash('sha256').update('landed-key').digest('hex')}`;
    const { Item } = await env.client.documents.send(new GetCommand({ TableName: env.tables.idempotency, Key: { idempotencyKey: recordKey } }));
    expect(Item).toMatchObject({ status: 'completed', responseStored: true, promptLogId: 'pl_r1' });
    expect(await idem.run(scope('pl_r2'), work)).toEqual({ replayed: true, response: { n: 1 } });
    expect(runs).toBe(1);
  });

  it('logs a key a failed run could not free, and its 409 says when the lease frees it at the latest (it had said only "still running")', async () => {
    const records = new IdempotencyRepository(env.client.documents, env.tables.idempotency);
    const stuck = Object.assign(Object.create(records) as IdempotencyRepository, {
      release: async () => {
        throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
      },
    });
    const log = recordingLog();
    const idem = new IdempotencyService<{ n: number }>(stuck, 30_000, log);
    const t0 = Date.now();
    const refused = new Error('the store failed at the reserve');
    const scope = { accountId: 'acct_f', key: 'unfreed-key', body: { a: 1 }, promptLogId: 'pl_f1', receivedAt: t0, zeroDataRetention: false };
    await expect(idem.run(scope, () => Promise.reject(refused))).rejects.toBe(refused);
    expect(log.lines.map((line) => JSON.parse(line))).toEqual([
      ['Idempotency key not freed: a retry with it gets 409 until its lease ends', { promptLogId: 'pl_f1', leaseMs: 30_000, errorName: 'ProvisionedThroughputExceededException' }],
    ]);
    const retry = await idem.begin('acct_f', 'unfreed-key', { a: 1 }, 'pl_f2', t0 + 10_000).catch((error: unknown) => error);
    expect(retry).toBeInstanceOf(IdempotencyInProgressError);
    expect((retry as Error).message).toBe(
      'A request with this Idempotency-Key is still running, or ended without freeing it; retry after it finishes (its key is free in 20 s at the latest)',
    );
  });

  it('lets a retry take over a run whose lease passed (the first crashed)', async () => {
    const idem = service();
    const t0 = Date.UTC(2026, 10, 22, 13, 0, 0);
    expect((await idem.begin('acct_i', 'crash-key', { a: 1 }, 'pl_a', t0)).kind).toBe('run');
    await expect(idem.begin('acct_i', 'crash-key', { a: 1 }, 'pl_b', t0 + 29_000)).rejects.toBeInstanceOf(IdempotencyInProgressError);
    expect((await idem.begin('acct_i', 'crash-key', { a: 1 }, 'pl_c', t0 + 31_000)).kind).toBe('run');
  });
});

describe('Idempotency-Key through the gateway: an answer too large to keep', () => {
  const testHost = useTestHost();
  let host: LocalHost;
  beforeEach(() => {
    host = testHost();
  });

  it("is charged, its record says too_large, and a replay gets 409 response_not_retained with the run's promptLogId, running nothing", async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    // 400 KB of random bytes, base64: about 530 KB of text that gzip keeps above 350 KB.
    const output = randomBytes(400_000).toString('base64');
    host.simulator.setFault({
      kind: 'status',
      status: 200,
      provider: 'mistral',
      body: chatCompletionAnswer(output, { prompt_tokens: 5, completion_tokens: 133_334, total_tokens: 133_339 }),
    });
    const payload = { prompt: 'Say something long.', models: ['fam_k-8b'], generation_settings: { maxTokens: 200_000 } };
    const headers = { ...auth, 'idempotency-key': 'too-large' };

    const first = await post(host, payload, headers);
    expect(first.status).toBe(200);
    expect(first.body.results[0]).toMatchObject({ status: 'completed', output });
    expect(gzipSync(JSON.stringify(first.body)).length).toBeGreaterThan(350_000);

    // Charged: the answer was recorded (as not kept), so a retry cannot run it again.
    const charged = Math.round(first.body.creditsUsed * 1_000_000);
    expect(charged).toBeGreaterThan(0);
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - charged);
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(100_000_000 - charged);

    const recordKey = `${accountId}#${createHash('sha256').update('too-large').digest('hex')}`;
    const { Item } = await host.gateway.storeClient.documents.send(new GetCommand({ TableName: host.gateway.config.tables.idempotency, Key: { idempotencyKey: recordKey } }));
    expect(Item).toMatchObject({ status: 'completed', notRetained: 'too_large', promptLogId: first.body.promptLogId });
    expect(Item!.responseStored).toBeUndefined();

    const replay = await post(host, payload, headers);
    expect(replay.status).toBe(409);
    expect(replay.body).toMatchObject({
      error: { code: 'response_not_retained', message: expect.stringMatching(/too large to keep/) },
      promptLogId: first.body.promptLogId,
    });
    expect(host.simulator.calls()).toHaveLength(1);
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - charged);
  });
});
