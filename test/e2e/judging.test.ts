import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { parseServerTiming } from '../../shared/http/server-timing.js';
import { providerCost } from '../../shared/pricing/cost.js';
import type { Evaluation } from '../../shared/judging/types.js';
import type { JudgingWorkflow } from '../../shared/judging/workflow-types.js';
import { body, chatCompletionAnswer } from '../support/fixtures.js';
import { until } from '../support/accounts.js';
import { post as postTo, postAnswered, startTestHost, type Answer } from '../support/local.js';

/**
 * Judged requests through the local host: the same api handler, the stack's own workflow
 * definition under the local runner, the generate and judge handlers, the provider
 * simulator, whose judges are told to choose position A (as they do untold, but with scores
 * that agree with it: untold, their scores are the schema's, which can contradict the winner).
 */
let host: LocalHost;

beforeAll(async () => {
  host = await startTestHost({ DEMO_CREDITS: '1000' });
}, 60_000);

afterAll(async () => {
  await host?.close();
});

beforeEach(() => {
  host.simulator.reset();
  host.simulator.setJudge({ behaviour: 'position-a' });
});

afterEach(() => {
  vi.restoreAllMocks();
});

const JUDGES = ['fam_c-5.4-mini', 'fam_a-haiku-4-5'];

/** Through support/local.ts's `post`, which validates every answer against the OpenAPI document. */
function post(payload: unknown): Promise<Answer> {
  return postTo(host, payload);
}

async function balanceMicro(): Promise<number> {
  return (await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro;
}

/** What the answer should have cost: completed results and completed judge calls, 100 credits a USD. */
function expectedCredits(answer: Answer): number {
  const models = (answer.body.results as { status: string; providerCost: number }[]).reduce((sum, r) => sum + (r.status === 'completed' ? r.providerCost : 0), 0);
  const judges = (answer.body.evaluations as Evaluation[]).reduce((sum, e) => sum + e.orders.reduce((s, o) => s + (o.status === 'completed' ? (o.providerCost ?? 0) : 0), 0), 0);
  return Math.round((models + judges) * 100 * 1e6) / 1e6;
}

describe('Judging through the local host', () => {
  it("tells OpenAI and Anthropic the account of every call the workflow makes, the models' and the judges'", async () => {
    const answer = await post(body({ models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'], judges: JUDGES }));
    expect(answer.status).toBe(200);
    const calls = host.simulator.calls().filter((c) => c.provider === 'openai' || c.provider === 'anthropic');
    // Two models and two judges of theirs: a call each, and 6 judge calls each (3 pairs, both orders).
    expect(calls).toHaveLength(14);
    for (const c of calls) {
      const sent = c.body as { safety_identifier?: unknown; metadata?: { user_id?: unknown } };
      expect(c.provider === 'openai' ? sent.safety_identifier : sent.metadata?.user_id).toBe(host.demo.accountId);
    }
  });

  it('answers a request at the judge-call limit: one Bedrock judge x 11 models, 110 judge calls, every evaluation completed', async () => {
    // Prepare: eleven models of the simulator, judged by a Nova model (Bedrock Converse through the SDK client).
    const models = [
      'fam_k-8b',
      'fam_h-micro',
      'fam_c-5-nano',
      'fam_g-small',
      'fam_i-gpt-oss-20b',
      'fam_b-3.1-flash-lite',
      'fam_f-v4-flash',
      'fam_c-4o-mini',
      'fam_d-3-mini',
      'fam_e-gpt-oss-120b',
      'fam_a-haiku-4-5',
    ];

    // Act
    const answer = await post(body({ models, judges: ['fam_h-lite'] }));

    // Assess
    expect(answer.status).toBe(200);
    expect(host.simulator.calls()).toHaveLength(11 + 110);
    expect(answer.body.evaluations).toHaveLength(55);
    expect((answer.body.evaluations as Evaluation[]).every((e) => e.status === 'completed' && e.orders.every((o) => o.status === 'completed'))).toBe(true);
  });

  it('answers 3 models and 2 judges with 6 evaluations, each in both orders, a ranking, and charges the judge calls', async () => {
    // Prepare
    const before = await balanceMicro();

    // Act
    const answer = await post(body({ judges: JUDGES }));

    // Assess
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(['creditsUsed', 'evaluations', 'judgeStatistics', 'promptLogId', 'ranking', 'results']);
    expect(Object.keys(parseServerTiming(answer.headers.get('server-timing')))).toEqual(['reserve', 'judging', 'total']);
    expect(answer.body.results.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed']);
    const evaluations = answer.body.evaluations as Evaluation[];
    expect(evaluations).toHaveLength(6);
    for (const evaluation of evaluations) {
      expect(JUDGES).toContain(evaluation.judgeModelId);
      expect(evaluation.status).toBe('completed');
      expect(evaluation.orders).toHaveLength(2);
      expect(evaluation.orders.map((o) => [o.answerA, o.answerB])).toEqual([
        [evaluation.modelA, evaluation.modelB],
        [evaluation.modelB, evaluation.modelA],
      ]);
      for (const order of evaluation.orders) {
        expect(order).toMatchObject({ status: 'completed', verdict: { winner: expect.stringMatching(/^(A|B|tie)$/) } });
        expect(order.tokensIn).toBeGreaterThan(0);
        // Its cost can be checked from its own figures: the token classes priced apart come with it.
        const { cachedTokensIn, cacheWriteTokensIn, reasoningTokensOut } = order.usage!;
        const usage = {
          inputTokens: order.tokensIn,
          cachedInputTokens: cachedTokensIn,
          cacheWriteTokens: cacheWriteTokensIn,
          outputTokens: order.tokensOut,
          reasoningTokens: reasoningTokensOut,
        };
        expect(order.providerCost).toBe(providerCost(resolveModel(evaluation.judgeModelId)!.prices, usage));
      }
      // The simulator's judges always answer A: the position swap makes every pair a tie.
      expect(evaluation).toMatchObject({ winner: 'tie', consistent: false });
    }
    expect(answer.body.ranking).toHaveLength(3);
    expect(answer.body.ranking.map((r: { modelId: string }) => r.modelId).sort()).toEqual([...(body().models as string[])].sort());
    expect(answer.body.ranking.every((r: { winRate: number }) => r.winRate === 0.5)).toBe(true);
    // Each judge judging its own vendor's model is left out where the other judged the pair independently:
    // fam_c-5.4-mini on (fam_c-5.4, fam_b-3.1-pro), fam_a-haiku-4-5 on (fam_a-opus-4-6, fam_b-3.1-pro).
    const counted = Object.fromEntries(answer.body.ranking.map((r: { modelId: string; evaluations: number }) => [r.modelId, r.evaluations]));
    expect(counted).toEqual({ 'fam_c-5.4': 3, 'fam_a-opus-4-6': 3, 'fam_b-3.1-pro': 2 });
    expect(evaluations.filter((e) => !e.inRanking).map((e) => [e.judgeModelId, e.modelA, e.modelB])).toEqual([
      ['fam_c-5.4-mini', 'fam_c-5.4', 'fam_b-3.1-pro'],
      ['fam_a-haiku-4-5', 'fam_a-opus-4-6', 'fam_b-3.1-pro'],
    ]);
    // The simulator's judges always choose position A: never consistent, always decisive.
    expect(answer.body.judgeStatistics.judges).toEqual(
      JUDGES.map((judgeModelId) => ({ judgeModelId, pairs: 3, positionConsistency: 0, calls: 6, chosePositionA: 1, decisive: 1, longerWon: expect.any(Number) })),
    );
    expect(answer.body.judgeStatistics.agreement.judgePairs).toEqual([{ judges: JUDGES, pairs: 3, agreement: 1, cohensKappa: null }]);

    // 3 model calls and judges x n(n-1) = 12 judge calls reached the providers.
    expect(host.simulator.calls()).toHaveLength(3 + 12);
    expect(answer.body.creditsUsed).toBeCloseTo(expectedCredits(answer), 6);
    expect(before - (await balanceMicro())).toBe(Math.round(answer.body.creditsUsed * 1e6));
  });

  it("counts a judged request among its account's requests at once as 1, and 1 a model (its generate tasks; 1 a judge where judges are more) while it runs, and gives that back when it ends", async () => {
    const slotsHeld = async () => (await host.gateway.accounts.get(host.demo.accountId))!.inFlightSlots ?? 0;
    const before = await slotsHeld();
    host.simulator.setLatency(300);
    const answering = post(body({ judges: JUDGES }));
    // A model called: the reserve held before it.
    await until(() => host.simulator.calls().length > 0);
    const during = await slotsHeld();
    expect((await answering).status).toBe(200);
    await host.settled();
    // body() asks for 3 models: 1 + 3.
    expect([during - before, await slotsHeld()]).toEqual([4, before]);
  });

  it('keeps the evaluations in the prompt log, and without zero data retention their reasoning too', async () => {
    const answer = await post(body({ judges: JUDGES, zero_data_retention: false }));

    const log = (await host.gateway.promptLogs.get(answer.body.promptLogId)) as any;
    expect(log.judges).toEqual(JUDGES);
    expect(log.evaluations).toHaveLength(6);
    expect(log.content.evaluations).toEqual(answer.body.evaluations);
    expect(log.content.ranking).toEqual(answer.body.ranking);
  });

  it("keeps no verdict, score, reasoning or pairing under zero data retention, only each judge's usage totals", async () => {
    const answer = await post(body({ judges: JUDGES, zero_data_retention: true }));

    expect(answer.status).toBe(200);
    const log = (await host.gateway.promptLogs.get(answer.body.promptLogId)) as any;
    expect(log.content).toBeUndefined();
    // Not which judge judged which pair (spec 1.7: no judge metadata): each judge's calls added up.
    expect(log.evaluations).toBeUndefined();
    const evaluations = answer.body.evaluations as Evaluation[];
    const orders = (judge: string) => evaluations.filter((e) => e.judgeModelId === judge).flatMap((e) => e.orders);
    expect(log.judgeUsage).toEqual(
      JUDGES.map((judge) => ({
        judgeModelId: judge,
        calls: 6,
        failedCalls: 0,
        tokensIn: orders(judge).reduce((sum, o) => sum + o.tokensIn, 0),
        tokensOut: orders(judge).reduce((sum, o) => sum + o.tokensOut, 0),
        providerCost: expect.closeTo(
          orders(judge).reduce((sum, o) => sum + (o.providerCost ?? 0), 0),
          12,
        ),
        estimatedCost: 0,
      })),
    );
    const stored = JSON.stringify(log);
    for (const evaluation of answer.body.evaluations as Evaluation[]) {
      for (const order of evaluation.orders) expect(stored).not.toContain(order.verdict!.reasoning);
    }
  });

  it('isolates a failing judge: its evaluations fail, cost nothing, and the request answers 200', async () => {
    // Prepare: every call to the vendor model behind fam_c-5.4-mini fails.
    host.simulator.setFault({ kind: 'status', status: 400, model: resolveModel('fam_c-5.4-mini')!.upstreamModel });

    // Act
    const answer = await post(body({ judges: JUDGES }));

    // Assess
    expect(answer.status).toBe(200);
    const evaluations = answer.body.evaluations as Evaluation[];
    expect(evaluations.filter((e) => e.judgeModelId === 'fam_c-5.4-mini').map((e) => [e.status, e.winner, e.providerCost])).toEqual([
      ['failed', null, 0],
      ['failed', null, 0],
      ['failed', null, 0],
    ]);
    expect(evaluations.filter((e) => e.judgeModelId === 'fam_a-haiku-4-5').every((e) => e.status === 'completed')).toBe(true);
    expect(answer.body.creditsUsed).toBeCloseTo(expectedCredits(answer), 6);
    expect(answer.body.ranking.every((r: { evaluations: number }) => r.evaluations === 2)).toBe(true);
  });

  it('carries a request too large for a workflow state by claim check, answers without waiting for its deletion, and leaves nothing behind', async () => {
    // Prepare: a 64 KiB prompt is over the request's inline share of a state; the
    // claim-check store's deletes are held until the answer is in.
    const written: string[] = [];
    const { put, delete: remove } = host.claimCheck;
    host.claimCheck.put = async (key, value) => {
      written.push(key);
      return put.call(host.claimCheck, key, value);
    };
    let letDeletesGo!: () => void;
    const deletesMayGo = new Promise<void>((resolve) => {
      letDeletesGo = resolve;
    });
    host.claimCheck.delete = async (keys) => {
      await deletesMayGo;
      return remove.call(host.claimCheck, keys);
    };

    // Act
    let answer: Answer;
    let kept: string[];
    try {
      answer = await postAnswered(host, body({ judges: JUDGES, prompt: 'x'.repeat(64 * 1024) }));
      kept = host.claimCheck.keys();
      letDeletesGo();
      await host.settled();
    } finally {
      letDeletesGo();
      host.claimCheck.put = put;
      host.claimCheck.delete = remove;
    }

    // Assess: the answer came while the request's object was still there; it is gone once the request has ended.
    expect(answer.status).toBe(200);
    expect(answer.body.evaluations).toHaveLength(6);
    expect(written).toEqual([`${answer.body.promptLogId}/request.json`]);
    expect(kept).toEqual([`${answer.body.promptLogId}/request.json`]);
    expect(host.claimCheck.keys()).toEqual([]);
  });

  it('answers a failed workflow with a 500, charges nothing, and releases the reservation without waiting for its claim-check objects to go', async () => {
    // Prepare: the execution fails, as a failed Step Functions execution would, after the
    // request (64 KiB) went by claim check; its delete waits until the release is written,
    // so that a release that waited for the delete would never come.
    const workflow = (host.gateway.prompts as unknown as { deps: { judging: { workflow: JudgingWorkflow } } }).deps.judging.workflow;
    vi.spyOn(workflow, 'run').mockRejectedValue(new Error('execution failed'));
    const credits = host.gateway.credits;
    const settle = credits.settle.bind(credits);
    let released!: () => void;
    const releaseWritten = new Promise<void>((resolve) => {
      released = resolve;
    });
    vi.spyOn(credits, 'settle').mockImplementation(async (...args) => {
      const settled = await settle(...args);
      released();
      return settled;
    });
    const remove = host.claimCheck.delete.bind(host.claimCheck);
    vi.spyOn(host.claimCheck, 'delete').mockImplementation(async (keys) => {
      await releaseWritten;
      return remove(keys);
    });
    const before = await balanceMicro();

    // Act
    const answer = await post(body({ judges: JUDGES, prompt: 'x'.repeat(64 * 1024) }));

    // Assess
    expect(answer.status).toBe(500);
    expect(answer.body.error).toMatchObject({ code: 'internal_error', message: expect.stringMatching(/nothing was charged/) });
    expect(await balanceMicro()).toBe(before);
    expect((await host.gateway.accounts.get(host.demo.accountId))!.reservations).toEqual({});
    expect(host.claimCheck.keys()).toEqual([]);
  });

  it('answers 503 with Retry-After, charging nothing and releasing the reservation, when no Generate task could read the provider keys (it had answered 200 with every model an internal error)', async () => {
    const workflow = (host.gateway.prompts as unknown as { deps: { judging: { workflow: JudgingWorkflow } } }).deps.judging.workflow;
    vi.spyOn(workflow, 'run').mockImplementation(async (input) => ({
      ...input,
      results: input.models.map(({ index, modelId }) => ({ index, modelId, status: 'failed' as const, error: 'ProviderSecretError' })),
      judgments: [],
    }));
    const before = await balanceMicro();

    const answer = await post(body({ judges: JUDGES }));

    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.body.error).toEqual({ code: 'service_unavailable', message: 'The gateway could not read its provider keys; retry shortly. Nothing was charged' });
    expect(await balanceMicro()).toBe(before);
    expect((await host.gateway.accounts.get(host.demo.accountId))!.reservations).toEqual({});
  });

  it("shows a judge a lying vendor's megabyte answer cut to its output limit, so that the judge calls stay near what was reserved", async () => {
    // Prepare: a contestant whose vendor answers a million characters within its limit, it says.
    const huge = 'w '.repeat(500_000);
    host.simulator.setFault({
      kind: 'status',
      status: 200,
      provider: 'cerebras',
      body: chatCompletionAnswer(huge, { prompt_tokens: 5, completion_tokens: 100, total_tokens: 105 }),
    });

    // Act
    const answer = await post({ prompt: 'Say hello', models: ['fam_e-gpt-oss-120b', 'fam_k-8b'], judges: ['fam_c-5.4-mini'], generation_settings: { maxTokens: 1_000 } });

    // Assess: the result keeps the whole output; each judge call saw at most 8 characters a token of the allowance.
    expect(answer.status).toBe(200);
    expect(answer.body.results[0].output).toHaveLength(huge.length);
    const orders = (answer.body.evaluations as Evaluation[]).flatMap((e) => e.orders);
    expect(orders).toHaveLength(2);
    for (const order of orders) {
      expect(order.status).toBe('completed');
      expect(order.tokensIn).toBeLessThan(10_000);
    }
  });
});
