import diagnostics from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { estimateMicroCredits } from '../support/model-calls.js';
import { IdempotencyService } from '../../shared/idempotency/idempotency-service.js';
import { IdempotencyRepository } from '../../shared/storage/idempotency.js';
import { CreditsService, RESERVATION_TIMEOUT_MS } from '../../shared/credits/credits-service.js';
import { parseServerTiming } from '../../shared/http/server-timing.js';
import { body } from '../support/fixtures.js';
import { pdfOf } from '../support/pdfs.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';
import { gate } from '../support/gate.js';
import { afterIdempotencyComplete } from '../support/spies.js';
import { balanceOf, openTestAccount, until } from '../support/accounts.js';
import { post, startTestHost } from '../support/local.js';

let host: LocalHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(async () => {
  await host?.close();
});
beforeEach(() => host.simulator.reset());
afterEach(() => vi.restoreAllMocks());

const ONE_MODEL = body({ models: ['fam_k-8b'] });

/**
 * Around every `reserve` or `settle` of the host's credits service (until the mocks are
 * restored): `before` runs (and is awaited) first, `after` once the real call returned.
 */
function around(method: 'reserve' | 'settle', before: () => unknown, after: () => void = () => undefined): void {
  const credits = host.gateway.credits;
  const real = credits[method].bind(credits) as (...args: unknown[]) => Promise<unknown>;
  vi.spyOn(credits, method).mockImplementation((async (...args: unknown[]) => {
    await before();
    try {
      return await real(...args);
    } finally {
      after();
    }
  }) as never);
}

/** A store that takes 50 ms to answer. */
const slowStore = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('Credits through the gateway', () => {
  it('reserves the worst case of a request that writes its whole input to an Anthropic cache (writes cost 1.25 times input)', async () => {
    const payload = {
      prompt: 'Summarise the document in one line.',
      system_prompt: [{ type: 'text', text: 'A long reference document. '.repeat(2_000), cache_control: { type: 'ephemeral' } }],
      models: ['fam_a-sonnet-4-6'],
      generation_settings: { maxTokens: 16 },
    };
    const estimate = estimateMicroCredits(validatePromptRequest(payload), host.gateway.config);
    const { accountId, auth } = await openTestAccount(host, estimate);
    const answer = await post(host, payload, auth);
    expect(answer.status).toBe(200);
    expect(answer.body.results[0].usage.cacheWriteTokensIn).toBeGreaterThan(10_000);
    // Charged what it cost, within what was held: the balance never went below zero.
    expect(Math.round(answer.body.creditsUsed * 1e6)).toBeLessThanOrEqual(estimate);
    expect(await balanceOf(host, accountId)).toBe(estimate - Math.round(answer.body.creditsUsed * 1e6));
  });

  it('reserves a 100-page PDF by its pages and charges the whole of what its vendor bills for them (its bytes had reserved a twentieth of it)', async () => {
    // 100 pages of 2.6 KB: the vendor (the simulator, as Anthropic) counts 1,500 tokens a page.
    const pdf = pdfOf({ pages: 100, body: ' '.repeat(260_000) });
    const payload = { prompt: 'Summarise it.', models: ['fam_a-opus-4-6'], attachments: [{ name: 'report.pdf', type: 'application/pdf', base64: pdf.toString('base64') }] };
    const estimate = estimateMicroCredits(validatePromptRequest(payload), host.gateway.config);
    const { accountId, auth } = await openTestAccount(host, estimate);
    const answer = await post(host, payload, auth);
    expect(answer.status).toBe(200);
    const [result] = answer.body.results;
    expect(result.tokensIn).toBeGreaterThan(150_000);
    // Charged the whole cost, none of it left uncollected, within what was held.
    expect(answer.body.creditsUsed).toBeCloseTo(result.providerCost * 100, 6);
    expect(await balanceOf(host, accountId)).toBe(estimate - Math.round(answer.body.creditsUsed * 1e6));
  });

  it("says in a 402 what drives the estimate: the models' output, or their input where that is most of it, naming a PDF whose pages could not be counted", async () => {
    const { auth } = await openTestAccount(host, 1_000_000);
    // A PDF cut short: its pages cannot be counted, and each model holds it at its whole context.
    const cut = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog').toString('base64');
    const pdfRequest = {
      prompt: 'x',
      models: ['fam_c-5.4', 'fam_a-opus-4-6'],
      attachments: [{ name: 'x.pdf', type: 'application/pdf', base64: cut }],
      generation_settings: { maxTokens: 20 },
    };
    const byInput = await post(host, pdfRequest, auth);
    expect(byInput.status).toBe(402);
    expect(byInput.body.error.message).toMatch(
      /most of the models' part their input: the pages of the PDF at \/attachments\/0 could not be counted .* A PDF whose pages can be read \(held at what they count\), a shorter input, fewer attachments or fewer models lower it$/,
    );
    expect(byInput.body.error.message).not.toMatch(/maxTokens/);
    expect(byInput.body.estimate.uncountedPdfs).toEqual(['/attachments/0']);
    for (const model of byInput.body.estimate.models) {
      expect(model.inputCredits).toBeGreaterThan(model.credits / 2);
      expect(model.inputTokens).toBeGreaterThan(100_000);
    }

    // A Gemini cachedContent is held at all the context the input leaves: a shorter input does not lower it.
    const byCache = await post(
      host,
      { prompt: 'x', models: ['fam_b-3.1-pro'], model_tuning: { 'fam_b-3.1-pro': { cachedContent: 'cachedContents/abc' } }, generation_settings: { maxTokens: 100 } },
      auth,
    );
    expect(byCache.status).toBe(402);
    expect(byCache.body.estimate.models[0].cachedContentTokens).toBeGreaterThan(900_000);
    expect(byCache.body.error.message).toMatch(/the model_tuning\.cachedContent of fam_b-3\.1-pro is held .* No cachedContent, a shorter input/);

    // A webSearch holds the most search queries its model may be charged: a lower maxTokens hardly lowers it.
    const bySearch = await post(
      host,
      { prompt: 'x', models: ['fam_b-3.1-flash-lite'], model_tuning: { 'fam_b-3.1-flash-lite': { webSearch: true } }, generation_settings: { maxTokens: 1 } },
      auth,
    );
    expect(bySearch.status).toBe(402);
    const [searching] = bySearch.body.estimate.models;
    // The output its credits hold: the limit sent and the 16 tokens of tolerance above it (the limit alone had been shown).
    expect(searching).toMatchObject({ searchQueries: 10, outputTokens: 17 });
    expect(searching.searchCredits).toBeGreaterThan(searching.credits / 2);
    expect(searching.credits).toBeGreaterThanOrEqual(searching.inputCredits + searching.searchCredits);
    expect(bySearch.body.error.message).toMatch(
      /most of the models' part those queries: 10 for fam_b-3\.1-flash-lite .* No webSearch \(and no cachedContent\) on those models lowers it/,
    );

    const byOutput = await post(host, { prompt: 'x', models: ['fam_c-5.4', 'fam_a-opus-4-6'], generation_settings: { maxTokens: 100_000 } }, auth);
    expect(byOutput.status).toBe(402);
    expect(byOutput.body.error.message).toMatch(/every model writing its whole output limit\. A lower generation_settings\.maxTokens lowers it$/);
    expect(byOutput.body.estimate.uncountedPdfs).toBeUndefined();
    for (const model of byOutput.body.estimate.models) {
      expect(model.inputCredits).toBeLessThan(model.credits / 100);
      expect(model).not.toHaveProperty('searchQueries');
      // Its parts add up to its credits (each rounded up to the micro-credit): the output tokens shown are those priced.
      const outputCredits = (model.outputTokens * resolveModel(model.modelId)!.prices.output * 100) / 1e6;
      expect(Math.abs(model.inputCredits + outputCredits - model.credits)).toBeLessThanOrEqual(0.000002);
    }
  });

  it('runs exactly the 20 of 200 concurrent requests that the balance covers; the rest get 402', async () => {
    const estimate = estimateMicroCredits(validatePromptRequest(ONE_MODEL), host.gateway.config);
    const { accountId, auth } = await openTestAccount(host, 20 * estimate);
    // Hold the upstream so that no request settles (and frees credits) before all have tried to reserve.
    host.simulator.pause();
    let answered = 0;
    const pending = Array.from({ length: 200 }, () => post(host, ONE_MODEL, auth).finally(() => answered++));
    // Every request has either been refused or reached the (held) upstream.
    await until(() => answered + host.simulator.calls().length === 200);
    expect(host.simulator.calls()).toHaveLength(20);
    host.simulator.resume();
    const answers = await Promise.all(pending);
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 402);
    expect(ok).toHaveLength(20);
    expect(refused).toHaveLength(180);
    expect(refused[0]!.body).toMatchObject({ error: { code: 'insufficient_credits' }, estimatedCreditsRequired: estimate / 1e6 });
    expect(host.simulator.calls()).toHaveLength(20);
    const spent = ok.reduce((sum, a) => sum + Math.round(a.body.creditsUsed * 1e6), 0);
    const final = await balanceOf(host, accountId);
    expect(final).toBe(20 * estimate - spent);
    expect(final).toBeGreaterThanOrEqual(0);
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(final);
  });

  it('answers before it settles: the answer arrives with the reservation still open, and the balance then changes by what it says', async () => {
    const estimate = estimateMicroCredits(validatePromptRequest(ONE_MODEL), host.gateway.config);
    const { accountId, auth } = await openTestAccount(host, 10 * estimate);
    const held = gate();
    around('settle', () => held.opened);

    // Not `post`, which waits for the host to settle.
    const response = await fetch(`${host.url}/api/v1/prompt`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(ONE_MODEL) });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { promptLogId: string; creditsUsed: number };
    expect(answer.creditsUsed).toBeGreaterThan(0);
    const during = await host.gateway.accounts.get(accountId);
    expect(during!.reservations[answer.promptLogId]).toEqual({ amountMicro: estimate, at: expect.any(Number), slots: 1 });
    expect(during!.balanceMicro).toBe(9 * estimate);

    held.open();
    await host.settled();
    const after = await host.gateway.accounts.get(accountId);
    expect(after!.reservations).toEqual({});
    expect(after!.balanceMicro).toBe(10 * estimate - Math.round(answer.creditsUsed * 1e6));
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(after!.balanceMicro);
  });

  it('sends no model call before its reserve is written, though the calls are built while it is in flight', async () => {
    const { auth } = await openTestAccount(host, 100_000_000);
    let receivedBeforeReserved = -1;
    around('reserve', slowStore, () => (receivedBeforeReserved = host.simulator.calls().length));
    const answer = await post(host, body({ models: ['fam_k-8b', 'fam_a-haiku-4-5', 'fam_h-micro'] }), auth);
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);
    const calls = host.simulator.calls();
    expect(calls.map((c) => c.protocol).sort()).toEqual(['anthropic-messages', 'bedrock-converse', 'openai-chat']);
    expect(receivedBeforeReserved).toBe(0);
  });

  it('sends none of the calls built while a reserve is in flight when the reserve is refused', async () => {
    const { accountId, auth } = await openTestAccount(host, 10);
    around('reserve', slowStore);
    // Every HTTP request this process starts (the providers' calls, Bedrock's through the SDK included).
    const started: string[] = [];
    const onStart = (message: unknown) => void started.push(String((message as { request: { path: string } }).request.path));
    diagnostics.subscribe('http.client.request.start', onStart);
    try {
      const refused = await post(host, body({ models: ['fam_k-8b', 'fam_a-haiku-4-5', 'fam_h-micro'] }), auth);
      expect(refused.status).toBe(402);
      // The refusal reaches the calls before the 402 is written.
      expect(started).toEqual([]);
    } finally {
      diagnostics.unsubscribe('http.client.request.start', onStart);
    }
    expect(host.simulator.calls()).toHaveLength(0);
    expect(await balanceOf(host, accountId)).toBe(10);
  });

  it('answers 429 with Retry-After past the account rate limit, without running or charging', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000, 2);
    expect((await post(host, ONE_MODEL, auth)).status).toBe(200);
    expect((await post(host, ONE_MODEL, auth)).status).toBe(200);
    const before = await balanceOf(host, accountId);
    host.simulator.reset();
    const limited = await post(host, ONE_MODEL, auth);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(host.simulator.calls()).toHaveLength(0);
    expect(await balanceOf(host, accountId)).toBe(before);
    // Found over its limit: its next requests are refused before their bodies are read (a body that is not JSON gets the 429, not a 400).
    const unread = await post(host, '{"prompt": not json', auth);
    expect([unread.status, unread.body.error.code]).toEqual([429, 'rate_limited']);
    expect(Number(unread.headers.get('retry-after'))).toBeLessThanOrEqual(Number(limited.headers.get('retry-after')));
  });
});

describe('An account without credits that keeps sending', () => {
  it('has its 402s counted in its rate window: past its limit, its requests are refused before their bodies are read', async () => {
    const { accountId, auth } = await openTestAccount(host, 0, 2);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(host, ONE_MODEL, auth)).status);
    // Uncounted, every one had been read, parsed and planned to be refused, however many and however large.
    expect(statuses).toEqual([402, 402, 429]);
    const unread = await post(host, '{"prompt": not json', auth);
    expect([unread.status, unread.body.error.code]).toEqual([429, 'rate_limited']);
    expect(host.simulator.calls()).toHaveLength(0);
    expect(await balanceOf(host, accountId)).toBe(0);
  });
});

describe('A request the reconciler released while it ran', () => {
  it('is free, and its prompt log says so: written again with what the account paid, not the credits in the answer', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    host.simulator.setLatency(300);
    // A prompt past what the log keeps of a request charged nothing: the first write kept it, so does the second.
    const prompt = 'A long question. '.repeat(2_500);
    const answering = post(host, { ...ONE_MODEL, prompt }, auth);
    await until(() => host.simulator.calls().length === 1);
    // A reconciler whose clock is past the reservation's timeout (a request that outlived its hold).
    const { accounts, ledger } = host.gateway;
    const late = new CreditsService(accounts, ledger, undefined, () => Date.now() + RESERVATION_TIMEOUT_MS + 60_000);
    expect((await late.reconcile()).released).toBeGreaterThanOrEqual(1);
    const answer = await answering;
    expect(answer.body.creditsUsed).toBeGreaterThan(0);
    expect(await balanceOf(host, accountId)).toBe(100_000_000);
    const log = (await host.gateway.promptLogs.get(answer.body.promptLogId))!;
    expect(log.creditsUsedMicro).toBe(0);
    expect(log.content?.prompt).toBe(prompt);
  });
});

describe('Idempotency-Key', () => {
  it('replays the stored response for a retry with the same key and body, without running or charging', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    const first = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'retry-1' });
    const afterFirst = await balanceOf(host, accountId);
    // The same body with its keys in another order is the same request.
    const reordered = { models: ONE_MODEL.models, prompt: ONE_MODEL.prompt };
    const second = await post(host, reordered, { ...auth, 'idempotency-key': 'retry-1' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(host.simulator.calls()).toHaveLength(1);
    // The replay ran nothing: its timing shows the key's lookup only.
    expect(Object.keys(parseServerTiming(first.headers.get('server-timing')))).toEqual(['idempotency', 'reserve', 'models', 'total']);
    expect(Object.keys(parseServerTiming(second.headers.get('server-timing')))).toEqual(['idempotency', 'total']);
    expect(await balanceOf(host, accountId)).toBe(afterFirst);
  });

  it("counts replays in the account's rate limit: past it a replay gets the 429 a new request would, and reads no stored answer", async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000, 3);
    const first = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'replayed' });
    const balance = await balanceOf(host, accountId);
    const reads = vi.spyOn(IdempotencyRepository.prototype, 'response');
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'replayed' })).status);
    expect(statuses).toEqual([200, 200, 429]);
    const refused = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'replayed' });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/^Rate limit of 3 requests per minute exceeded/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A new request is refused too: the replays used the minute's window.
    expect((await post(host, body({ models: ['fam_k-8b'], prompt: 'Another' }), auth)).status).toBe(429);
    expect(host.simulator.calls()).toHaveLength(1);
    expect(await balanceOf(host, accountId)).toBe(balance);
    expect(first.status).toBe(200);
    // Only the two admitted replays read the stored answer.
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('completes the record before it charges: a run that ends between the two is free, never charged twice', async () => {
    const { auth } = await openTestAccount(host, 100_000_000);
    const order: string[] = [];
    afterIdempotencyComplete(() => order.push('record completed'));
    around('settle', () => void order.push('settle started'));
    expect((await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'record-first' })).status).toBe(200);
    expect(order).toEqual(['record completed', 'settle started']);
  });

  it('charges nothing when the record cannot be completed, since a retry with the key will run again', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    vi.spyOn(IdempotencyService.prototype, 'complete').mockRejectedValueOnce(new Error('the store is down'));
    const answer = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'record-lost' });
    expect(answer.status).toBe(200);
    expect(answer.body.creditsUsed).toBeGreaterThan(0);
    const account_ = await host.gateway.accounts.get(accountId);
    expect(account_!.reservations).toEqual({});
    expect(account_!.balanceMicro).toBe(100_000_000);
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(100_000_000);
  });

  it('scopes keys to the account', async () => {
    const a = await openTestAccount(host, 100_000_000);
    const b = await openTestAccount(host, 100_000_000);
    const first = await post(host, ONE_MODEL, { ...a.auth, 'idempotency-key': 'shared-key' });
    const other = await post(host, ONE_MODEL, { ...b.auth, 'idempotency-key': 'shared-key' });
    expect(other.body.promptLogId).not.toBe(first.body.promptLogId);
    expect(host.simulator.calls()).toHaveLength(2);
  });

  it('answers 422 for the same key with a different body, naming the header in details as a 400 about it does', async () => {
    const { auth } = await openTestAccount(host, 100_000_000);
    await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-422' });
    const reused = await post(host, body({ models: ['fam_k-8b'], prompt: 'Something else' }), { ...auth, 'idempotency-key': 'k-422' });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: 'idempotency_key_reused', details: [{ field: 'header:Idempotency-Key', message: 'was used with a different request body' }] });
    expect(host.simulator.calls()).toHaveLength(1);
  });

  it('answers 409 to a retry while the first request still runs', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    host.simulator.setLatency(400);
    const first = post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-409' });
    await until(() => host.simulator.calls().length === 1);
    const during = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-409' });
    expect(during.status).toBe(409);
    expect(during.body.error).toMatchObject({ code: 'idempotency_in_progress', details: [{ field: 'header:Idempotency-Key', message: 'names a request still running' }] });
    expect((await first).status).toBe(200);
    expect(host.simulator.calls()).toHaveLength(1);
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(await balanceOf(host, accountId));
  });

  it('answers 409 with the original promptLogId when the response was not retained (zero data retention)', async () => {
    const { auth } = await openTestAccount(host, 100_000_000);
    const zdr = { ...ONE_MODEL, zero_data_retention: true };
    const first = await post(host, zdr, { ...auth, 'idempotency-key': 'k-zdr' });
    const replay = await post(host, zdr, { ...auth, 'idempotency-key': 'k-zdr' });
    expect(replay.status).toBe(409);
    expect(replay.body).toMatchObject({ error: { code: 'response_not_retained', details: [{ field: 'header:Idempotency-Key' }] }, promptLogId: first.body.promptLogId });
    expect(host.simulator.calls()).toHaveLength(1);
  });

  it('frees the key after a refusal, so the retry runs once the balance allows it', async () => {
    const { accountId, auth } = await openTestAccount(host, 0);
    const refused = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-402' });
    expect(refused.status).toBe(402);
    await host.gateway.credits.topUp(accountId, 100_000_000);
    const retried = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-402' });
    expect(retried.status).toBe(200);
  });

  it('frees the key of an answer that charged nothing (every model failed), so the retry runs once the vendor is back', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    host.simulator.setFault({ kind: 'status', status: 400 });
    const failed = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-all-failed' });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ results: [{ status: 'failed' }], creditsUsed: 0 });
    host.simulator.reset();
    // Its writes done (post waits for them), the key is free: the retry runs (a replay would repeat the failure for a day).
    const retried = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-all-failed' });
    expect(retried.status).toBe(200);
    expect(retried.body.results[0].status).toBe('completed');
    expect(retried.body.promptLogId).not.toBe(failed.body.promptLogId);
    // Charged once, for the run that answered.
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(await balanceOf(host, accountId));
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - Math.round(retried.body.creditsUsed * 1_000_000));
    // And that answer is kept: the next retry replays it.
    const replayed = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'k-all-failed' });
    expect(replayed.body).toEqual(retried.body);
  });

  it('answers 400 for a key that is too long', async () => {
    const { auth } = await openTestAccount(host, 100_000_000);
    const answer = await post(host, ONE_MODEL, { ...auth, 'idempotency-key': 'x'.repeat(256) });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details).toEqual([{ field: 'header:Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
    expect(host.simulator.calls()).toHaveLength(0);
    // Named beside the body's own fields, not after they are fixed.
    const both = await post(host, { ...ONE_MODEL, models: ['nope'] }, { ...auth, 'idempotency-key': 'bad key' });
    expect(both.status).toBe(400);
    expect(both.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['/models/0', 'header:Idempotency-Key']);
    // A member named twice is refused before the contract is read: the key still beside it.
    const repeated = await post(host, '{"prompt":"a","prompt":"b","models":["fam_k-8b"]}', { ...auth, 'idempotency-key': 'bad key' });
    expect(repeated.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['/prompt', 'header:Idempotency-Key']);
    // Past the 100 fields a 400 lists, the key is still listed, and counted.
    const many = await post(host, { ...ONE_MODEL, ...Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`x${i}`, 1])) }, { ...auth, 'idempotency-key': 'bad key' });
    expect(many.body.error.message).toBe('151 fields are invalid; the first 100 are listed');
    expect(many.body.error.details).toHaveLength(100);
    expect(many.body.error.details[0].field).toBe('header:Idempotency-Key');
  });
});

describe('Requests of one account at once (MAX_REQUESTS_IN_FLIGHT)', () => {
  it('answers 429 with Retry-After while the account has its most requests running, charging and calling nothing; another account runs', async () => {
    const limited = await startTestHost({ MAX_REQUESTS_IN_FLIGHT: '1' });
    try {
      const first = await openTestAccount(limited, 1_000_000);
      const second = await openTestAccount(limited, 1_000_000);
      limited.simulator.pause();
      const running = post(limited, ONE_MODEL, first.auth);
      await until(() => limited.simulator.calls().length === 1);
      const refused = await post(limited, ONE_MODEL, first.auth);
      expect([refused.status, refused.headers.get('retry-after'), refused.body.error.code]).toEqual([429, '1', 'rate_limited']);
      expect(refused.body.error.message).toMatch(/^1 request of this account is still running/);
      const other = post(limited, ONE_MODEL, second.auth);
      await until(() => limited.simulator.calls().length === 2);
      limited.simulator.resume();
      expect([(await running).status, (await other).status]).toEqual([200, 200]);
      expect(await balanceOf(limited, first.accountId)).toBe(1_000_000 - Math.round((await running).body.creditsUsed * 1e6));
    } finally {
      await limited.close();
    }
  });
});

describe('The demo key of a host keeping its store on disk', () => {
  it('revokes the random key an earlier start issued, and a pinned one when a start pins another, keeps it where DEMO_API_KEY pins it, and leaves a key made with the admin CLI alone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-data-'));
    let host = await startTestHost({ GATEWAY_DATA_DIR: dataDir });
    try {
      const first = host.demo.apiKey;
      const made = generateApiKey();
      await host.gateway.apiKeys.put({ keyHash: hashApiKey(made), accountId: host.demo.accountId, keyPrefix: keyPrefix(made), createdAt: new Date().toISOString() });
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir });

      const status = async (key: string) => (await post(host, ONE_MODEL, { authorization: `Bearer ${key}` })).status;
      expect(host.demo.apiKey).not.toBe(first);
      expect(await status(first)).toBe(401);
      expect(await status(host.demo.apiKey)).toBe(200);
      expect(await status(made)).toBe(200);
      expect(
        (await host.gateway.apiKeys.listByAccount(host.demo.accountId))
          .filter((key) => !key.revokedAt)
          .map((key) => key.keyPrefix)
          .sort(),
      ).toEqual([keyPrefix(host.demo.apiKey), keyPrefix(made)].sort());

      // The printed key, pinned with DEMO_API_KEY on the next start, stays the demo key, a start that pins none
      // (another shell) included.
      const printed = host.demo.apiKey;
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir, DEMO_API_KEY: printed });
      expect(host.demo.apiKey).toBe(printed);
      expect(await status(printed)).toBe(200);
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir });
      expect(await status(printed)).toBe(200);
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir, DEMO_API_KEY: printed });
      expect(await status(printed)).toBe(200);

      // A key pinned, then another pinned in its place (the first leaked, say): the first stops working. A start that
      // pins none (another shell) leaves the pinned one, and the next start pins it again.
      const pinned = generateApiKey();
      const replaced = generateApiKey();
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir, DEMO_API_KEY: pinned });
      expect([await status(printed), await status(pinned)]).toEqual([401, 200]);
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir });
      const random = host.demo.apiKey;
      expect([await status(pinned), await status(random), await status(made)]).toEqual([200, 200, 200]);
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir, DEMO_API_KEY: pinned });
      expect([await status(pinned), await status(random)]).toEqual([200, 401]);
      await host.close();
      host = await startTestHost({ GATEWAY_DATA_DIR: dataDir, DEMO_API_KEY: replaced });
      expect([await status(pinned), await status(replaced), await status(made)]).toEqual([401, 200, 200]);
    } finally {
      await host.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('Stopping the local host (npm start, then Ctrl-C)', () => {
  it('lets a request in flight finish: answered and charged before the store closes, nothing left held across a restart', async () => {
    // Prepare: a host keeping its store on disk, one request waiting for its model.
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-data-'));
    const stopping = await startTestHost({ GATEWAY_DATA_DIR: dataDir });
    let restarted: LocalHost | undefined;
    try {
      const { accountId, auth } = await openTestAccount(stopping, 1_000_000);
      stopping.simulator.pause();
      const pending = post(stopping, ONE_MODEL, auth);
      await until(() => stopping.simulator.calls().length === 1);

      // Act: stop the host while the model is still answering.
      const closed = stopping.close();
      expect(stopping.inFlight()).toBe(1);
      stopping.simulator.resume();
      const answer = await pending;
      await closed;

      // Assess: the caller has its answer, which closes its connection (no request may follow on
      // it); after a restart on the same data, the request is charged once and holds nothing.
      expect(answer.status).toBe(200);
      expect(answer.headers.get('connection')).toBe('close');
      expect(answer.body.results[0]).toMatchObject({ status: 'completed' });
      restarted = await startTestHost({ GATEWAY_DATA_DIR: dataDir });
      const account = await restarted.gateway.accounts.get(accountId);
      expect(Object.keys(account!.reservations ?? {})).toEqual([]);
      expect(account!.balanceMicro).toBe(1_000_000 - Math.round(answer.body.creditsUsed * 1e6));
      expect(await restarted.gateway.credits.ledgerSum(accountId)).toBe(account!.balanceMicro);
    } finally {
      await restarted?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
