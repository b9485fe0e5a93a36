import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyService, IdempotencyInProgressError } from '../../shared/idempotency/idempotency-service.js';
import { IdempotencyRepository } from '../../shared/storage/idempotency.js';
import { RateLimitsRepository } from '../../shared/storage/rate-limits.js';
import { startTestStore } from '../support/store.js';

let env: Awaited<ReturnType<typeof startTestStore>>;
beforeAll(async () => {
  env = await startTestStore();
});
afterAll(async () => {
  await env?.close();
});

describe('Class: RateLimitsRepository', () => {
  it('admits the limit per one-minute window and rolls over to a fresh window', async () => {
    const limits = new RateLimitsRepository(env.client, env.tables.rateLimits);
    const windowStart = Date.UTC(2026, 10, 22, 10, 0, 0);
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await limits.take('acct_rl', 2, windowStart + 15_000));
    expect(decisions).toEqual([{ allowed: true }, { allowed: true }, { allowed: false, retryAfterSeconds: 45 }]);
    expect(await limits.take('acct_rl', 2, windowStart + 59_999)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(await limits.take('acct_rl', 2, windowStart + 60_000)).toEqual({ allowed: true });
    expect(await limits.take('acct_other', 2, windowStart + 15_000)).toEqual({ allowed: true });
  });

  it('never admits more than the limit when requests arrive at once', async () => {
    const limits = new RateLimitsRepository(env.client, env.tables.rateLimits);
    const now = Date.UTC(2026, 10, 22, 11, 0, 0);
    const decisions = await Promise.all(Array.from({ length: 30 }, () => limits.take('acct_burst', 10, now)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });
});

describe('Class: IdempotencyService', () => {
  const service = () => new IdempotencyService<{ n: number }>(new IdempotencyRepository(env.client, env.tables.idempotency), 30_000);

  it('runs a key again once its record is 24 hours old, checked by timestamp', async () => {
    const idem = service();
    const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
    const first = await idem.begin('acct_i', 'day-key', { a: 1 }, 'pl_1', t0);
    expect(first.kind).toBe('run');
    await idem.complete((first as { recordKey: string }).recordKey, 'pl_1', { n: 1 }, false);
    expect(await idem.begin('acct_i', 'day-key', { a: 1 }, 'pl_2', t0 + IDEMPOTENCY_WINDOW_MS - 1_000)).toEqual({ kind: 'replay', response: { n: 1 } });
    expect((await idem.begin('acct_i', 'day-key', { a: 1 }, 'pl_3', t0 + IDEMPOTENCY_WINDOW_MS + 1_000)).kind).toBe('run');
  });

  it('lets a retry take over a run whose lease passed (the first crashed)', async () => {
    const idem = service();
    const t0 = Date.UTC(2026, 10, 22, 13, 0, 0);
    expect((await idem.begin('acct_i', 'crash-key', { a: 1 }, 'pl_a', t0)).kind).toBe('run');
    await expect(idem.begin('acct_i', 'crash-key', { a: 1 }, 'pl_b', t0 + 29_000)).rejects.toBeInstanceOf(IdempotencyInProgressError);
    expect((await idem.begin('acct_i', 'crash-key', { a: 1 }, 'pl_c', t0 + 31_000)).kind).toBe('run');
  });
});
