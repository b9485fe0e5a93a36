import { ServerResponse } from 'node:http';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { planCall } from '../../shared/compare/model-call.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { MAX_REQUEST_OUTPUT_BYTES } from '../../shared/compare/output-budget.js';
import { MAX_ANSWER_BYTES } from '../../shared/http/post.js';
import { usdToMicroCredits } from '../../shared/credits/credits.js';
import { callCostBound } from '../../shared/pricing/bound.js';
import { implausibleUsage } from '../../shared/pricing/charge.js';
import { providerCost } from '../../shared/pricing/cost.js';
import { estimateMicroCredits } from '../support/model-calls.js';
import { gate } from '../support/gate.js';
import { afterIdempotencyComplete } from '../support/spies.js';
import { balanceOf, openTestAccount, until } from '../support/accounts.js';
import { chatCompletionAnswer, PNG_BASE64 } from '../support/fixtures.js';
import { post, useTestHost } from '../support/local.js';

/**
 * Money under hostile load and hostile vendors, through HTTP on the local host: concurrent
 * requests on reasoning models never overdraw an account, a vendor's impossible or missing
 * usage neither makes a call free nor loses the request's log or the other models' charges.
 */
const testHost = useTestHost();
let host: LocalHost;
beforeEach(() => {
  host = testHost();
});

/** Micro-credits of what an answer's calls cost by their own figures (provider cost, or the estimate charged where it is unavailable). */
function costMicro(answer: { body: { results: { providerCost: number | null; estimatedCost?: number }[] } }): number {
  return usdToMicroCredits(
    answer.body.results.reduce((sum, r) => sum + (r.providerCost ?? r.estimatedCost ?? 0), 0),
    host.gateway.config,
  );
}

describe('Concurrent requests on reasoning models', () => {
  // Each thinks beyond a maxTokens of 1 unless the estimate reserves what the vendor bills.
  it.each(['fam_e-gpt-oss-120b', 'fam_f-v4-pro', 'fam_d-4.20-0309-reasoning', 'fam_c-5.4'])('never overdraw an account of 0.05 credits: %s, 40 at once', async (model) => {
    const payload = { prompt: 'Think, then answer in one word.', models: [model], generation_settings: { maxTokens: 1 } };
    const estimate = estimateMicroCredits(validatePromptRequest(payload), host.gateway.config);
    const { accountId, auth } = await openTestAccount(host, 50_000);
    // Held upstream: every request reserves (or is refused) before any settles.
    host.simulator.pause();
    let answered = 0;
    const pending = Array.from({ length: 40 }, () => post(host, payload, auth).finally(() => answered++));
    await until(() => answered + host.simulator.calls().length === 40);
    expect(host.simulator.calls().length).toBe(Math.min(40, Math.floor(50_000 / estimate)));
    host.simulator.resume();
    const answers = await Promise.all(pending);
    const ok = answers.filter((a) => a.status === 200);
    expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 402)).toBe(true);
    for (const answer of ok) {
      // What the vendor billed fitted the reservation: charged in full, nothing left uncollected.
      expect(answer.body.results[0].providerCost).not.toBeNull();
      expect(Math.round(answer.body.creditsUsed * 1e6)).toBe(costMicro(answer));
      expect(Math.round(answer.body.creditsUsed * 1e6)).toBeLessThanOrEqual(estimate);
    }
    const final = await balanceOf(host, accountId);
    expect(final).toBeGreaterThanOrEqual(0);
    expect(final).toBe(50_000 - ok.reduce((sum, a) => sum + Math.round(a.body.creditsUsed * 1e6), 0));
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(final);
  });
});

describe('A vendor whose usage cannot be true', () => {
  it.each([
    ['1e300 output tokens', { prompt_tokens: 5, completion_tokens: 1e300, total_tokens: 1e300 }],
    ['negative input tokens', { prompt_tokens: -5, completion_tokens: 3, total_tokens: -2 }],
    ['more output than the call allowed', { prompt_tokens: 5, completion_tokens: 900_000, total_tokens: 900_005 }],
    ['no usage at all', undefined],
  ])('%s: cost unavailable, an estimate charged, the other model charged, the log written', async (_name, usage) => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    host.simulator.setFault({ kind: 'status', status: 200, provider: 'cerebras', body: chatCompletionAnswer('Hello there.', usage as Record<string, unknown>) });
    const answer = await post(host, { prompt: 'Say hello.', models: ['fam_e-gpt-oss-120b', 'fam_k-8b'], generation_settings: { maxTokens: 64 } }, auth);
    expect(answer.status).toBe(200);
    const [hostile, healthy] = answer.body.results;
    expect(hostile).toMatchObject({ status: 'completed', output: 'Hello there.', providerCost: null, tokensIn: 0, tokensOut: 0 });
    expect(hostile.estimatedCost).toBeGreaterThan(0);
    expect(hostile.warnings.join(' ')).toMatch(/Cost unavailable: .*Charged an estimate from the text/);
    expect(healthy.providerCost).toBeGreaterThan(0);

    const charged = Math.round(answer.body.creditsUsed * 1e6);
    expect(charged).toBe(costMicro(answer));
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - charged);
    expect((await host.gateway.accounts.get(accountId))!.reservations).toEqual({});
    const settle = (await host.gateway.ledger.list(accountId)).find((e) => e.kind === 'settle');
    expect(settle).toMatchObject({ chargedMicro: charged, estimatedMicro: usdToMicroCredits(hostile.estimatedCost, host.gateway.config) });
    const log = await host.gateway.promptLogs.get(answer.body.promptLogId);
    expect(log?.models.map((m) => m.providerCost)).toEqual([null, healthy.providerCost]);
    expect(log?.models[0]).toMatchObject({ estimatedCost: hostile.estimatedCost });
    expect(log?.creditsUsedMicro).toBe(charged);
  });
});

describe('A vendor whose believed usage costs more than was reserved', () => {
  it('charges the reservation, no more, and the answer says what was charged: the balance, the ledger and the log agree', async () => {
    // An image: what the vendor counts for it is not bounded by the catalog, so input above the hold is believed (up to the context).
    const payload = { prompt: 'Say hello.', models: ['fam_k-8b'], attachments: [{ name: 'a.png', type: 'image/png', base64: PNG_BASE64 }], generation_settings: { maxTokens: 64 } };
    const request = validatePromptRequest(payload);
    const call = planCall(request, request.models[0]!).call;
    const reserved = estimateMicroCredits(request, host.gateway.config);
    const bound = callCostBound(call);
    const billed = {
      inputTokens: bound.inputTokens + 20_000,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: bound.outputTokens,
      reasoningTokens: 0,
    };
    expect(implausibleUsage(billed, call, 'Hello there.')).toBeUndefined();
    const billedMicro = usdToMicroCredits(providerCost(call.entry.prices, billed), host.gateway.config);
    expect(billedMicro).toBeGreaterThan(reserved);

    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    const usage = { prompt_tokens: billed.inputTokens, completion_tokens: billed.outputTokens, total_tokens: billed.inputTokens + billed.outputTokens };
    host.simulator.setFault({ kind: 'status', status: 200, provider: 'mistral', body: chatCompletionAnswer('Hello there.', usage) });
    const answer = await post(host, payload, auth);

    expect(answer.status).toBe(200);
    // Believed: its provider cost is what the vendor billed, above the reservation.
    expect(answer.body.results[0]).toMatchObject({ status: 'completed', tokensIn: billed.inputTokens, tokensOut: billed.outputTokens });
    expect(costMicro(answer)).toBe(billedMicro);
    // Charged the reservation, the rest left uncollected; the answer's creditsUsed is that charge, never the cost.
    const charged = Math.round(answer.body.creditsUsed * 1e6);
    expect(charged).toBe(reserved);
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - reserved);
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(100_000_000 - reserved);
    const settle = (await host.gateway.ledger.list(accountId)).find((e) => e.kind === 'settle');
    expect(settle).toMatchObject({ amountMicro: -reserved, chargedMicro: reserved, uncollectedMicro: billedMicro - reserved });
    expect(await host.gateway.promptLogs.get(answer.body.promptLogId)).toMatchObject({ creditsUsedMicro: reserved });
    expect((await host.gateway.accounts.get(accountId))!.reservations).toEqual({});
  });
});

describe('A vendor whose answer is too large', () => {
  it('fails that model, not the request: the other model answers and is charged, the huge one costs nothing', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    const huge = 'x'.repeat(MAX_ANSWER_BYTES);
    host.simulator.setFault({ kind: 'status', status: 200, provider: 'cerebras', body: chatCompletionAnswer(huge, { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }) });

    const answer = await post(host, { prompt: 'Say hello.', models: ['fam_e-gpt-oss-120b', 'fam_k-8b'], generation_settings: { maxTokens: 64 } }, auth);

    expect(answer.status).toBe(200);
    const [hostile, healthy] = answer.body.results;
    expect(hostile).toMatchObject({ status: 'failed', providerCost: 0, error: { code: 'upstream_malformed_response' } });
    expect(healthy).toMatchObject({ status: 'completed' });
    const charged = Math.round(answer.body.creditsUsed * 1e6);
    expect(charged).toBe(usdToMicroCredits(healthy.providerCost, host.gateway.config));
    expect((await host.gateway.accounts.get(accountId))!.reservations).toEqual({});
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - charged);
  });
});

/** Three models on chat-completion vendors (Groq, Mistral, DeepSeek). */
const CHAT_MODELS = ['fam_i-gpt-oss-120b', 'fam_k-8b', 'fam_f-v4-pro'];

/** Those vendors each answer 7 MiB from now on, usage as billed: 21 MiB against a budget of 16. Returns the answer's text. */
function answerSevenMiB(): string {
  const seven = 'z'.repeat(7 * 1024 * 1024);
  for (const provider of ['groq', 'mistral', 'deepseek']) {
    host.simulator.setFault({ kind: 'status', status: 200, provider, body: chatCompletionAnswer(seven, { prompt_tokens: 5, completion_tokens: 60_000, total_tokens: 60_005 }) });
  }
  return seven;
}

describe("Vendors whose answers together pass the request's output budget", () => {
  it('cut the answers that pass it, each keeping its share, with a warning; every model is charged its usage and the prompt log keeps what was answered', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    answerSevenMiB();

    const answer = await post(host, { prompt: 'Say hello.', models: CHAT_MODELS, generation_settings: { maxTokens: 60_000 } }, auth);

    expect(answer.status).toBe(200);
    const results = answer.body.results as { status: string; output: string; providerCost: number; warnings?: string[] }[];
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(results.reduce((sum, r) => sum + r.output.length, 0)).toBe(MAX_REQUEST_OUTPUT_BYTES);
    // Half the budget held in equal shares: the answer that comes first takes its share and the free half's 4.3 MiB, each of the others at least its share.
    expect(results.filter((r) => r.warnings?.some((w) => w.includes('limit of 16 MiB')))).toHaveLength(2);
    for (const result of results) expect(result.output.length).toBeGreaterThanOrEqual(Math.floor(MAX_REQUEST_OUTPUT_BYTES / 2 / 3));
    for (const result of results) expect(result.providerCost).toBeGreaterThan(0);
    const charged = Math.round(answer.body.creditsUsed * 1e6);
    expect(charged).toBe(costMicro(answer));
    expect(await balanceOf(host, accountId)).toBe(100_000_000 - charged);
    const log = await host.gateway.promptLogs.get(answer.body.promptLogId);
    expect(log?.contentIncomplete).toBeUndefined();
    expect(log?.content?.outputs.map((o) => o.output.length)).toEqual(results.map((r) => r.output.length));
  });
});

describe("A judged request's outputs", () => {
  it("are held to the request's output budget once the workflow's tasks are back, each keeping its share", async () => {
    const { auth } = await openTestAccount(host, 1_000_000_000_000);
    // Each model runs in a workflow task of its own; the judge is OpenAI's, which answers as usual.
    const seven = answerSevenMiB();

    const answer = await post(host, { prompt: 'Say hello.', models: CHAT_MODELS, judges: ['fam_c-4.1'], generation_settings: { maxTokens: 60_000 } }, auth);

    expect(answer.status).toBe(200);
    const results = answer.body.results as { status: string; output: string; warnings?: string[] }[];
    // Of equal outputs, the first held takes its share and the free half's 4.3 MiB, the next the rest of it, the last its share.
    const share = Math.floor(MAX_REQUEST_OUTPUT_BYTES / 2 / 3);
    expect(results.map((r) => [r.status, r.output.length])).toEqual([
      ['completed', seven.length],
      ['completed', MAX_REQUEST_OUTPUT_BYTES - seven.length - share],
      ['completed', share],
    ]);
    expect(results[1]!.warnings).toContainEqual(expect.stringMatching(/limit of 16 MiB/));
    expect(results[2]!.warnings).toContainEqual(expect.stringMatching(/limit of 16 MiB/));
    expect(results[0]!.warnings ?? []).not.toContainEqual(expect.stringMatching(/limit of 16 MiB/));
    expect(answer.body.evaluations).toHaveLength(3);
  });
});

describe('An answer that cannot be sent', () => {
  it('is withdrawn before what follows it: the reservation is released, nothing is charged, the prompt log says so', async () => {
    const { accountId } = await openTestAccount(host, 100_000_000);

    const started = await host.gateway.prompts.start(accountId, validatePromptRequest({ prompt: 'Say hello.', models: ['fam_k-8b'] }));
    const response = await started.answer;
    started.withdraw();
    await started.finished;

    expect(response.results[0]).toMatchObject({ status: 'completed' });
    expect(response.creditsUsed).toBeGreaterThan(0);
    expect(await balanceOf(host, accountId)).toBe(100_000_000);
    expect((await host.gateway.accounts.get(accountId))!.reservations).toEqual({});
    expect((await host.gateway.ledger.list(accountId)).filter((e) => e.requestId === response.promptLogId)).toMatchObject([{ amountMicro: 0 }]);
    expect(await host.gateway.promptLogs.get(response.promptLogId)).toMatchObject({ creditsUsedMicro: 0 });
  });
});

describe('What follows an answer says what it charged', () => {
  it("resolves with the settle's charge, and with none where the settle entry's writes went unanswered (the reconciler decides: the CreditsCharged metric had counted it)", async () => {
    const { accountId } = await openTestAccount(host, 100_000_000);
    const request = validatePromptRequest({ prompt: 'Say hello.', models: ['fam_k-8b'] });
    const settled = await host.gateway.prompts.start(accountId, request);
    const response = await settled.answer;
    expect(await settled.finished).toBe(Math.round(response.creditsUsed * 1_000_000));

    const unanswered = vi.spyOn(host.gateway.ledger, 'putFirst').mockRejectedValue(Object.assign(new Error('injected: no answer'), { name: 'TimeoutError' }));
    try {
      const undecided = await host.gateway.prompts.start(accountId, request);
      expect((await undecided.answer).creditsUsed).toBeGreaterThan(0);
      expect(await undecided.finished).toBeUndefined();
    } finally {
      unanswered.mockRestore();
    }
  });
});

describe('Idempotency-Key', () => {
  it('completes the record before the answer leaves, so a retry sent the moment it arrives is replayed, not refused with 409', async () => {
    const { auth } = await openTestAccount(host, 100_000_000);
    const order: string[] = [];
    afterIdempotencyComplete(() => order.push('record completed'));
    const end = ServerResponse.prototype.end;
    vi.spyOn(ServerResponse.prototype, 'end').mockImplementation(function (this: ServerResponse, ...args: unknown[]) {
      if (this.req?.url === '/api/v1/prompt' && !order.includes('answer sent')) order.push('answer sent');
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as never);
    // What follows the answer (the settle) is held: the retry arrives while it is pending.
    const held = gate();
    const settle = host.gateway.credits.settle.bind(host.gateway.credits);
    vi.spyOn(host.gateway.credits, 'settle').mockImplementation(async (...args) => {
      await held.opened;
      return settle(...args);
    });
    const headers = { ...auth, 'content-type': 'application/json', 'idempotency-key': 'replay-at-once' };
    const send = () => fetch(`${host.url}/api/v1/prompt`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'Hi', models: ['fam_k-8b'] }) });
    const first = await send();
    expect(first.status).toBe(200);
    const { promptLogId } = (await first.json()) as { promptLogId: string };
    expect(order).toEqual(['record completed', 'answer sent']);
    const replay = await send();
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as { promptLogId: string }).promptLogId).toBe(promptLogId);
    expect(host.simulator.calls()).toHaveLength(1);
    held.open();
    await host.settled();
  });
});

describe('A key whose account was deleted', () => {
  it('gets a clean 401 and calls no model', async () => {
    const { accountId, auth } = await openTestAccount(host, 100_000_000);
    await host.gateway.storeClient.documents.send(new DeleteCommand({ TableName: host.gateway.config.tables.accounts, Key: { accountId } }));
    const answer = await post(host, { prompt: 'Hi', models: ['fam_k-8b'] }, auth);
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('unauthorized');
    expect(host.simulator.calls()).toHaveLength(0);
  });
});
