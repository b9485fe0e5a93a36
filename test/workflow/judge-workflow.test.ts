import { fakeAdapter } from '../support/model-calls.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGenerateHandler } from '../../functions/generate.js';
import { createJudgeHandler } from '../../functions/judge.js';
import { resolveIntrinsics, synthesizeWorkflow, type SynthesizedWorkflow } from '../../infra/local/workflow/definition.js';
import { createLocalWorkflow, stackWorkflow, type LocalTaskHandlers } from '../../infra/local/workflow/runner.js';
import { GatewayStack } from '../../infra/stack/gateway-stack.js';
import { MemoryClaimCheck } from '../../shared/claim-check/memory.js';
import type { PromptRequestBody } from '../../shared/contract/types.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { promptLogId } from '../../shared/ids.js';
import { WorkflowFailedError } from '../../shared/judging/errors.js';
import { ProviderSecretError } from '../../shared/secrets/provider-keys.js';
import { KeysUnreadError, startJudgedComparison } from '../../shared/judging/judged-comparison.js';
import { WORKFLOW_LIMITS } from '../../shared/judging/limits.js';
import { judgeCallCount } from '../../shared/judging/plan.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { VERDICT_SCHEMA } from '../../shared/judging/verdict.js';
import { weightedScores } from '../../shared/judging/weights.js';
import { WorkflowTasks } from '../../shared/judging/workflow-tasks.js';
import type { WorkflowInput } from '../../shared/judging/workflow-types.js';
import { silentLog, type Log } from '../../shared/log.js';
import { recordingLog } from '../support/log.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import type { Router } from '../../shared/providers/router.js';
import type { ModelCall, ModelReply } from '../../shared/providers/types.js';
import { gate } from '../support/gate.js';

/**
 * The judge workflow as the stack defines it, run by the local runner (aws-local-stepfunctions)
 * with its Lambda tasks bound to the real generate and judge handlers; only the providers are
 * fakes, so that each judge can behave as a test needs.
 */

/** `verbose`: a verdict with reasoning long enough (2 KB) to travel by claim check at the judge-call limit. */
type JudgeBehaviour = 'always-a' | 'longer' | 'fails' | 'prose' | 'verbose';

interface Fakes {
  /** Output per canonical model ID; `Error` makes the model fail. */
  outputs?: Record<string, string | Error>;
  /** Extra latency per canonical model ID. */
  delays?: Record<string, number>;
  judges?: Record<string, JudgeBehaviour>;
  /** Holds every judge call until this many are in flight at once (a request that runs in waves never gets there). */
  judgeBarrier?: { calls: number; inFlight: number; maxInFlight: number };
}

interface Call {
  modelId: string;
  judge: boolean;
  /** The vendor model called. */
  upstreamModel: string;
}

function between(prompt: string, tag: string): string {
  const match = new RegExp(`<${tag}>\\n([\\s\\S]*)\\n</${tag}>`).exec(prompt);
  if (!match) throw new Error(`no <${tag}> in the judge prompt`);
  return match[1]!;
}

function reply(output: string, inputChars: number): ModelReply {
  return {
    output,
    usage: { inputTokens: Math.ceil(inputChars / 4), cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: Math.ceil(output.length / 4), reasoningTokens: 0 },
    warnings: [],
  };
}

/** Providers as a Router: contestants answer from `outputs`, judges as their behaviour says. */
function fakeRouter(fakes: Fakes, calls: Call[]): Router {
  const allInFlight = gate();
  return (entry) => ({
    endpoint: { baseUrl: 'http://fake.invalid', simulated: true },
    adapter: fakeAdapter({
      async send(call: ModelCall): Promise<ModelReply> {
        const judging = call.responseSchema === VERDICT_SCHEMA;
        calls.push({ modelId: entry.id, judge: judging, upstreamModel: call.entry.upstreamModel });
        const barrier = fakes.judgeBarrier;
        if (judging && barrier) {
          barrier.inFlight++;
          barrier.maxInFlight = Math.max(barrier.maxInFlight, barrier.inFlight);
          if (barrier.inFlight === barrier.calls) allInFlight.open();
          await allInFlight.opened;
        }
        const delay = fakes.delays?.[entry.id];
        if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
        if (!judging) {
          const output = fakes.outputs?.[entry.id] ?? `An answer from ${entry.id}.`;
          if (output instanceof Error) throw output;
          return reply(output, call.prompt.length);
        }
        const a = between(call.prompt, 'answer_a');
        const b = between(call.prompt, 'answer_b');
        switch (fakes.judges?.[entry.id] ?? 'longer') {
          case 'always-a':
            return reply(JSON.stringify({ reasoning: 'A reads better.', scoreA: 8, scoreB: 6, winner: 'A' }), call.prompt.length);
          case 'verbose':
            return reply(JSON.stringify({ reasoning: 'A reads better, point by point. '.repeat(64), scoreA: 8, scoreB: 6, winner: 'A' }), call.prompt.length);
          case 'longer': {
            const winner = a.length === b.length ? 'tie' : a.length > b.length ? 'A' : 'B';
            const score = (text: string, other: string) => (text.length > other.length ? 9 : text.length === other.length ? 6 : 4);
            // Prose around the JSON, as judges without native structured output write it.
            return reply(`My verdict:\n${JSON.stringify({ reasoning: 'The longer one is fuller.', scoreA: score(a, b), scoreB: score(b, a), winner })}`, call.prompt.length);
          }
          case 'prose':
            return reply('Both answers are fine, but I lean towards the first.', call.prompt.length);
          case 'fails':
            throw new UpstreamError('upstream_error', 'The judge is down', { upstreamStatus: 500 });
        }
      },
    }),
  });
}

const NO_RETRY = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 };

function harness(fakes: Fakes, wrap: (handlers: LocalTaskHandlers) => LocalTaskHandlers = (h) => h, log: Log = silentLog) {
  const calls: Call[] = [];
  const claimCheck = new MemoryClaimCheck();
  const tasks = new WorkflowTasks({ route: fakeRouter(fakes, calls), claimCheck, log, retry: NO_RETRY });
  const workflow = createLocalWorkflow(wrap({ generate: createGenerateHandler(() => tasks), judge: createJudgeHandler(() => tasks) }));
  return {
    calls,
    claimCheck,
    workflow,
    /** The comparison, and the deletion of its claim-check objects, which a request runs once it has answered. */
    judge: async (body: Partial<PromptRequestBody> & Pick<PromptRequestBody, 'models' | 'judges'>) => {
      const run = startJudgedComparison(
        validatePromptRequest({ prompt: 'Explain recursion.', ...body }),
        { requestId: promptLogId(), deadlineAt: Date.now() + 20_000 },
        { workflow, claimCheck, log: silentLog },
      );
      return { ...(await run.comparison), discardClaims: run.discardClaims };
    },
  };
}

const MODELS = ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'];
/** Eleven models: one judge of them all makes 110 calls, near the judge-call limit. */
const ELEVEN_MODELS = [
  'fam_c-5.4',
  'fam_a-opus-4-6',
  'fam_b-3.1-pro',
  'fam_g-large',
  'fam_c-4.1',
  'fam_f-v4-pro',
  'fam_b-3.5-flash',
  'fam_d-4.3',
  'fam_k-8b',
  'fam_i-gpt-oss-120b',
  'fam_h-pro',
];
const JUDGES = ['fam_c-5.4-mini', 'fam_f-v4-pro'];
/** Outputs of three lengths: the order of length is the order of the longer-answer judge. */
const BY_LENGTH = { 'fam_c-5.4': 'Short.', 'fam_a-opus-4-6': 'A medium answer here.', 'fam_b-3.1-pro': 'The longest answer of all three, with details.' };

describe('Workflow: judge workflow (synthesized definition, local runner)', () => {
  beforeAll(async () => {
    // Synthesizing the stack takes about a second; every run below shares it.
    await stackWorkflow();
  }, 60_000);

  it('runs Generate then Judge end to end: every judge x every pair x both orders, one evaluation per judge and pair', async () => {
    // Prepare
    const { judge, calls, claimCheck } = harness({ outputs: BY_LENGTH });

    // Act
    const { results, evaluations, ranking } = await judge({ models: MODELS, judges: JUDGES });

    // Assess
    expect(results.map((r) => [r.modelId, r.status, r.output])).toEqual(MODELS.map((id) => [id, 'completed', BY_LENGTH[id as keyof typeof BY_LENGTH]]));
    expect(calls.filter((c) => !c.judge)).toHaveLength(3);
    expect(calls.filter((c) => c.judge)).toHaveLength(2 * 3 * 2);
    expect(evaluations.map((e) => [e.judgeModelId, e.modelA, e.modelB])).toEqual([
      ['fam_c-5.4-mini', 'fam_c-5.4', 'fam_a-opus-4-6'],
      ['fam_c-5.4-mini', 'fam_c-5.4', 'fam_b-3.1-pro'],
      ['fam_c-5.4-mini', 'fam_a-opus-4-6', 'fam_b-3.1-pro'],
      ['fam_f-v4-pro', 'fam_c-5.4', 'fam_a-opus-4-6'],
      ['fam_f-v4-pro', 'fam_c-5.4', 'fam_b-3.1-pro'],
      ['fam_f-v4-pro', 'fam_a-opus-4-6', 'fam_b-3.1-pro'],
    ]);
    for (const evaluation of evaluations) {
      expect(evaluation.orders.map((o) => [o.answerA, o.answerB])).toEqual([
        [evaluation.modelA, evaluation.modelB],
        [evaluation.modelB, evaluation.modelA],
      ]);
      expect(evaluation.orders.every((o) => o.status === 'completed' && o.tokensIn > 0 && (o.providerCost ?? 0) > 0)).toBe(true);
    }
    expect(ranking.map((r) => r.modelId)).toEqual(['fam_b-3.1-pro', 'fam_a-opus-4-6', 'fam_c-5.4']);
    expect(claimCheck.keys()).toEqual([]);
  });

  it("calls the models the api function read the catalog for, not the ones the tasks' own clock reads: a request run across a retirement", async () => {
    const { calls, workflow, claimCheck } = harness({});
    // Read before o3-mini's retirement (2026-10-23) and fam_c-4o-mini's (2027-01-14): its tasks run after the first.
    const request = validatePromptRequest({ prompt: 'Explain recursion.', models: ['o3-mini', 'fam_a-opus-4-6'], judges: ['fam_c-4o-mini'] }, 0);
    const { results } = await startJudgedComparison(request, { requestId: promptLogId(), deadlineAt: Date.now() + 20_000 }, { workflow, claimCheck, log: silentLog }).comparison;
    expect(new Set(calls.map((call) => call.upstreamModel))).toEqual(new Set(['o3-mini', 'claude-opus-4-6', 'gpt-4o-mini']));
    expect(results[0]).toMatchObject({ modelId: 'o3-mini', status: 'completed' });
    expect(results[0]!.warnings ?? []).not.toContainEqual(expect.stringMatching(/shut o3-mini down/));
  });

  it('makes a judge that always prefers position A give only ties, each marked inconsistent', async () => {
    const { judge } = harness({ outputs: BY_LENGTH, judges: { 'fam_c-5.4-mini': 'always-a', 'fam_f-v4-pro': 'always-a' } });

    const { evaluations, ranking } = await judge({ models: MODELS, judges: JUDGES });

    expect(evaluations).toHaveLength(6);
    for (const evaluation of evaluations) {
      expect(evaluation).toMatchObject({ status: 'completed', winner: 'tie', consistent: false });
      expect(evaluation.orders.map((o) => o.verdict?.winner)).toEqual(['A', 'A']);
      expect(evaluation.orders.map((o) => o.winner)).toEqual([evaluation.modelA, evaluation.modelB]);
    }
    // fam_c-5.4-mini judging fam_c-5.4 (its own vendor) is flagged and left out: fam_f-v4-pro judged those pairs independently.
    expect(evaluations.map((e) => [e.judgeModelId, e.modelA, e.modelB, e.selfPreference?.relation, e.inRanking])).toEqual([
      ['fam_c-5.4-mini', 'fam_c-5.4', 'fam_a-opus-4-6', 'same-family', false],
      ['fam_c-5.4-mini', 'fam_c-5.4', 'fam_b-3.1-pro', 'same-family', false],
      ['fam_c-5.4-mini', 'fam_a-opus-4-6', 'fam_b-3.1-pro', undefined, true],
      ['fam_f-v4-pro', 'fam_c-5.4', 'fam_a-opus-4-6', undefined, true],
      ['fam_f-v4-pro', 'fam_c-5.4', 'fam_b-3.1-pro', undefined, true],
      ['fam_f-v4-pro', 'fam_a-opus-4-6', 'fam_b-3.1-pro', undefined, true],
    ]);
    // Ties only: equal strengths, one shared rank.
    expect(ranking.map((r) => [r.rank, r.winRate, r.ties, r.strength])).toEqual([
      [1, 0.5, 2, 0],
      [1, 0.5, 3, 0],
      [1, 0.5, 3, 0],
    ]);
  });

  it('makes a judge that always prefers the longer answer give consistent wins', async () => {
    const { judge } = harness({ outputs: BY_LENGTH, judges: { 'fam_c-5.4-mini': 'longer', 'fam_f-v4-pro': 'longer' } });

    const { evaluations, ranking } = await judge({ models: MODELS, judges: JUDGES });

    for (const evaluation of evaluations) {
      const longer = [evaluation.modelA, evaluation.modelB].sort((x, y) => BY_LENGTH[y as keyof typeof BY_LENGTH].length - BY_LENGTH[x as keyof typeof BY_LENGTH].length)[0];
      expect(evaluation).toMatchObject({ status: 'completed', winner: longer, consistent: true });
      expect(evaluation.scores).toEqual({ [longer!]: 9, [[evaluation.modelA, evaluation.modelB].find((m) => m !== longer)!]: 4 });
    }
    // The evaluations the ranking counts (fam_c-5.4-mini on fam_c-5.4's pairs left out): b 3-0, opus 1-2, c-5.4 0-2.
    expect(ranking.map((r) => [r.modelId, r.winRate, r.wins, r.losses])).toEqual([
      ['fam_b-3.1-pro', 1, 3, 0],
      ['fam_a-opus-4-6', 0.3333, 1, 2],
      ['fam_c-5.4', 0, 0, 2],
    ]);
    expect(ranking[0]!.strength!).toBeGreaterThan(ranking[1]!.strength!);
    expect(ranking[1]!.strength!).toBeGreaterThan(ranking[2]!.strength!);
  });

  it('lets judge_weights change the winner as the formula says', async () => {
    // Prepare: the judge prefers the long answer, which is also much slower.
    const fakes: Fakes = {
      outputs: { 'fam_c-5.4': 'Short.', 'fam_a-opus-4-6': 'A much longer and more detailed answer.' },
      delays: { 'fam_a-opus-4-6': 150 },
    };
    const models = ['fam_c-5.4', 'fam_a-opus-4-6'];

    // Act
    const byAccuracy = await harness(fakes).judge({ models, judges: ['fam_c-5.4-mini'] });
    const bySpeed = await harness(fakes).judge({ models, judges: ['fam_c-5.4-mini'], judge_weights: { accuracy: 1, speed: 1 } });

    // Assess
    expect(byAccuracy.evaluations[0]).toMatchObject({ winner: 'fam_a-opus-4-6', consistent: true });
    const evaluation = bySpeed.evaluations[0]!;
    expect(evaluation).toMatchObject({ winner: 'fam_c-5.4', consistent: true });
    const [fast, slow] = bySpeed.results;
    const [wFast, wSlow] = weightedScores(
      // The judge picked the longer answer in both orders.
      { verdict: 0, score: evaluation.scores!['fam_c-5.4']!, latencyMs: fast!.latencyMs, providerCost: fast!.providerCost, answered: true },
      { verdict: 1, score: evaluation.scores!['fam_a-opus-4-6']!, latencyMs: slow!.latencyMs, providerCost: slow!.providerCost, answered: true },
      { accuracy: 1, speed: 1, cost: 0 },
    );
    expect(evaluation.weightedScores).toEqual({ 'fam_c-5.4': Math.round(wFast * 1e4) / 1e4, 'fam_a-opus-4-6': Math.round(wSlow * 1e4) / 1e4 });
    expect(wFast).toBeGreaterThan(wSlow);
  });

  it('isolates a failing contestant and failing judges: judges x n(n-1) calls for the n completed results', async () => {
    // Prepare: 4 models, one of which fails; one judge answers, one is down, one writes prose.
    const log = recordingLog();
    const { judge, calls } = harness(
      {
        outputs: { ...BY_LENGTH, 'fam_g-large': new UpstreamError('invalid_request', 'Bad request', { upstreamStatus: 400 }) },
        judges: { 'fam_c-5.4-mini': 'longer', 'fam_f-v4-pro': 'fails', 'fam_b-3.5-flash': 'prose' },
      },
      undefined,
      log,
    );

    // Act
    const { results, evaluations, ranking } = await judge({ models: [...MODELS, 'fam_g-large'], judges: ['fam_c-5.4-mini', 'fam_f-v4-pro', 'fam_b-3.5-flash'] });

    // Assess
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'failed']);
    expect(calls.filter((c) => c.judge)).toHaveLength(3 * 3 * 2);
    expect(evaluations).toHaveLength(3 * 3);
    expect(evaluations.some((e) => e.modelA === 'fam_g-large' || e.modelB === 'fam_g-large')).toBe(false);
    const byJudge = (id: string) => evaluations.filter((e) => e.judgeModelId === id);
    expect(byJudge('fam_c-5.4-mini').every((e) => e.status === 'completed' && e.consistent)).toBe(true);
    for (const e of byJudge('fam_f-v4-pro')) {
      expect(e).toMatchObject({ status: 'failed', winner: null, providerCost: 0, error: { code: 'upstream_error', upstreamStatus: 500 } });
    }
    for (const e of byJudge('fam_b-3.5-flash')) {
      expect(e).toMatchObject({ status: 'failed', winner: null, error: { code: 'unparseable_verdict' } });
      // Its vendor billed the prose all the same: each order is charged what it used.
      for (const order of e.orders) expect([order.tokensIn > 0, order.providerCost! > 0]).toEqual([true, true]);
      expect(e.providerCost).toBe(Math.round((e.orders[0].providerCost! + e.orders[1].providerCost!) * 1e12) / 1e12);
    }
    expect(ranking.find((r) => r.modelId === 'fam_g-large')).toMatchObject({ rank: null, winRate: null, evaluations: 0 });
    expect(ranking[0]).toMatchObject({ modelId: 'fam_b-3.1-pro', winRate: 1, evaluations: 2 });
    // Each failed call's line gives its vendor status, so that an operator tells a vendor down from a refusal.
    const judged = log.lines.map((line) => JSON.parse(line) as [string, Record<string, unknown>]).filter(([message]) => message === 'Pair judged');
    expect(judged.filter(([, fields]) => fields.judgeModelId === 'fam_f-v4-pro').map(([, fields]) => [fields.errorCode, fields.upstreamStatus])).toEqual(
      Array(6).fill(['upstream_error', 500]),
    );
    const generated = log.lines
      .map((line) => JSON.parse(line) as [string, Record<string, unknown>])
      .find(([message, fields]) => message === 'Model generated' && fields.modelId === 'fam_g-large');
    expect(generated?.[1]).toMatchObject({ status: 'failed', errorCode: 'invalid_request', upstreamStatus: 400 });
  });

  it('turns a task that throws into a failed item, never a failed execution', async () => {
    // Prepare: the generate function crashes for one model, the judge function for the second judge.
    const { judge } = harness({ outputs: BY_LENGTH }, (handlers) => ({
      generate: async (event, context) => {
        if (event.model.modelId === 'fam_a-opus-4-6') throw new TypeError('generate crashed');
        return handlers.generate(event, context);
      },
      judge: async (event, context) => {
        if (event.item.judge === 1) throw new RangeError('judge crashed');
        return handlers.judge(event, context);
      },
    }));

    // Act
    const { results, evaluations } = await judge({ models: MODELS, judges: JUDGES });

    // Assess
    expect(results[1]).toMatchObject({ modelId: 'fam_a-opus-4-6', status: 'failed', error: { code: 'internal_error', message: expect.stringContaining('TypeError') } });
    expect(evaluations.map((e) => [e.judgeModelId, e.modelA, e.modelB, e.status])).toEqual([
      ['fam_c-5.4-mini', 'fam_c-5.4', 'fam_b-3.1-pro', 'completed'],
      ['fam_f-v4-pro', 'fam_c-5.4', 'fam_b-3.1-pro', 'failed'],
    ]);
    for (const order of evaluations[1]!.orders) {
      expect(order).toMatchObject({ status: 'failed', error: { code: 'internal_error', message: expect.stringContaining('RangeError') } });
    }
  });

  it.each([
    ['1 judge x 11 models', ['fam_c-5.4-mini'], 11],
    ['4 judges x 6 models', ['fam_c-5.4-mini', 'fam_f-v4-pro', 'fam_b-3.1-pro', 'fam_a-opus-4-6'], 6],
  ])('runs a request at the judge-call limit (%s) in one wave: every judge call in flight at once, one judge task per judge', async (_, judges, n) => {
    // Prepare: every judge call is held until all of them have arrived.
    const models = ELEVEN_MODELS.slice(0, n);
    const expected = judgeCallCount(judges.length, n);
    expect(expected).toBeGreaterThan(LIMITS.judgeCalls - 11);
    expect(expected).toBeLessThanOrEqual(LIMITS.judgeCalls);
    const barrier = { calls: expected, inFlight: 0, maxInFlight: 0 };
    let judgeTasks = 0;
    const { judge, calls } = harness({ judgeBarrier: barrier }, (handlers) => ({
      ...handlers,
      judge: async (event, context) => {
        judgeTasks++;
        return handlers.judge(event, context);
      },
    }));

    // Act
    const { evaluations } = await judge({ models, judges });

    // Assess
    expect(calls.filter((c) => c.judge)).toHaveLength(expected);
    expect(barrier.maxInFlight).toBe(expected);
    expect(judgeTasks).toBe(judges.length);
    expect(evaluations).toHaveLength((judges.length * n * (n - 1)) / 2);
    expect(evaluations.every((e) => e.status === 'completed')).toBe(true);
  });

  it('carries outputs totalling over 256 KiB and a large request by claim check, and deletes them when told (after the answer)', async () => {
    // Prepare: three outputs of 100 KiB (300 KiB together), within what 32,000 output tokens allow, and a 40 KiB prompt.
    const big = (char: string, extra: number) => char.repeat(100 * 1024 + extra);
    const outputs = { 'fam_c-5.4': big('a', 0), 'fam_a-opus-4-6': big('b', 10), 'fam_b-3.1-pro': big('c', 20) };
    const { judge, claimCheck } = harness({ outputs });
    const written: string[] = [];
    const put = claimCheck.put.bind(claimCheck);
    claimCheck.put = async (key, body) => {
      written.push(key);
      return put(key, body);
    };

    // Act
    const { results, evaluations, discardClaims } = await judge({
      models: MODELS,
      judges: ['fam_c-5.4-mini'],
      prompt: 'p'.repeat(40 * 1024),
      generation_settings: { maxTokens: 32_000 },
    });
    const keptForTheAnswer = claimCheck.keys().length;
    await discardClaims();

    // Assess
    expect(results.map((r) => r.output)).toEqual(Object.values(outputs));
    expect(evaluations.map((e) => [e.status, e.winner])).toEqual([
      ['completed', 'fam_a-opus-4-6'],
      ['completed', 'fam_b-3.1-pro'],
      ['completed', 'fam_b-3.1-pro'],
    ]);
    expect(written.filter((k) => k.endsWith('/request.json'))).toHaveLength(1);
    expect(written.filter((k) => k.includes('/results/'))).toHaveLength(3);
    expect(keptForTheAnswer).toBe(4);
    expect(claimCheck.keys()).toEqual([]);
  });

  it('fails a comparison whose execution fails, and deletes what it left by claim check when told', async () => {
    // Prepare: a request large enough to travel by claim check, and an execution that fails.
    const claimCheck = new MemoryClaimCheck();
    const workflow = {
      run: async () => {
        throw new WorkflowFailedError('FAILED', 'States.Timeout');
      },
    };
    const request = validatePromptRequest({ prompt: 'p'.repeat(40 * 1024), models: MODELS, judges: ['fam_c-5.4-mini'] });

    // Act
    const run = startJudgedComparison(request, { requestId: promptLogId(), deadlineAt: Date.now() + 20_000 }, { workflow, claimCheck, log: silentLog });
    await expect(run.comparison).rejects.toThrow(WorkflowFailedError);
    const left = claimCheck.keys();
    await run.discardClaims();

    // Assess
    expect(left).toEqual([expect.stringMatching(/\/request\.json$/)]);
    expect(claimCheck.keys()).toEqual([]);
  });

  it('fails only the model whose result cannot be read back from the claim-check store, and only the judge calls that show it', async () => {
    // Prepare: outputs large enough to travel by claim check; every read of the second
    // model's result fails, as an S3 that keeps failing would.
    const big = (char: string) => char.repeat(100 * 1024);
    const { judge, claimCheck } = harness({ outputs: { 'fam_c-5.4': big('a'), 'fam_a-opus-4-6': big('b'), 'fam_b-3.1-pro': big('c') } });
    const get = claimCheck.get.bind(claimCheck);
    claimCheck.get = async (key) => {
      if (key.endsWith('/results/1.json')) throw Object.assign(new Error('Please reduce your request rate'), { name: 'SlowDown' });
      return get(key);
    };

    // Act
    const { results, evaluations, discardClaims } = await judge({ models: MODELS, judges: ['fam_c-5.4-mini'], generation_settings: { maxTokens: 32_000 } });
    await discardClaims();

    // Assess: the api function failed that result alone; the judge task, which reads it for
    // four of its six calls, failed those, and judged the pair it could read in both orders.
    expect(results.map((r) => [r.modelId, r.status, r.error?.code])).toEqual([
      ['fam_c-5.4', 'completed', undefined],
      ['fam_a-opus-4-6', 'failed', 'internal_error'],
      ['fam_b-3.1-pro', 'completed', undefined],
    ]);
    expect(results[1]!.error!.message).toMatch(/could not be read back/);
    expect(evaluations.map((e) => [e.modelA, e.modelB, e.status, e.orders.map((o) => o.status)])).toEqual([
      ['fam_c-5.4', 'fam_b-3.1-pro', 'completed', ['completed', 'completed']],
    ]);
    expect(claimCheck.keys()).toEqual([]);
  });

  it('fails only the judge call whose judgment the claim-check store cannot keep, and only the one it cannot give back', async () => {
    // Prepare: one judge and eleven models, 110 calls: each judgment's share of a state is
    // small enough that the judge's long verdicts travel by claim check. One put fails, one get fails.
    const models = ELEVEN_MODELS;
    const { judge, claimCheck } = harness({ outputs: BY_LENGTH, judges: { 'fam_c-5.4-mini': 'verbose' } });
    const { put, get } = { put: claimCheck.put.bind(claimCheck), get: claimCheck.get.bind(claimCheck) };
    const slowDown = () => Object.assign(new Error('Please reduce your request rate'), { name: 'SlowDown' });
    const written: string[] = [];
    claimCheck.put = async (key, body) => {
      if (key.endsWith('/judgments/0-0-1.json')) throw slowDown();
      written.push(key);
      return put(key, body);
    };
    claimCheck.get = async (key) => {
      if (key.endsWith('/judgments/0-2-3.json')) throw slowDown();
      return get(key);
    };

    // Act
    const { evaluations, discardClaims } = await judge({ models, judges: ['fam_c-5.4-mini'] });
    await discardClaims();

    // Assess
    expect(written.filter((k) => k.includes('/judgments/'))).toHaveLength(109);
    const order = (a: string, b: string) => evaluations.flatMap((e) => e.orders).find((o) => o.answerA === a && o.answerB === b)!;
    expect(order('fam_c-5.4', 'fam_a-opus-4-6')).toMatchObject({ status: 'failed', providerCost: 0 });
    expect(order('fam_b-3.1-pro', 'fam_g-large')).toMatchObject({ status: 'failed', providerCost: 0 });
    expect(order('fam_b-3.1-pro', 'fam_g-large').error?.message).toMatch(/could not be read back/);
    const orders = evaluations.flatMap((e) => e.orders);
    expect(orders).toHaveLength(110);
    expect(orders.filter((o) => o.status === 'completed')).toHaveLength(108);
    expect(claimCheck.keys()).toEqual([]);
  });

  it('judges nothing for a single model, and ranks it without a rank', async () => {
    const { judge, calls } = harness({});

    const { results, evaluations, ranking } = await judge({ models: ['fam_c-5.4'], judges: ['fam_c-5.4-mini'] });

    expect(results.map((r) => r.status)).toEqual(['completed']);
    expect(calls.filter((c) => c.judge)).toHaveLength(0);
    expect(evaluations).toEqual([]);
    expect(ranking).toEqual([{ rank: null, modelId: 'fam_c-5.4', strength: null, interval: null, winRate: null, wins: 0, ties: 0, losses: 0, evaluations: 0 }]);
  });

  it('answers a request whose every Generate task could not read the provider keys as unavailable (503, as an unjudged one), not as a comparison of failures each naming an internal error', async () => {
    const unkeyed = () => Promise.reject(new ProviderSecretError('Reading the provider secret failed: AccessDeniedException'));
    const { judge } = harness({ outputs: BY_LENGTH }, (handlers) => ({ ...handlers, generate: createGenerateHandler(unkeyed) }));
    await expect(judge({ models: MODELS, judges: JUDGES })).rejects.toBeInstanceOf(KeysUnreadError);
  });

  it('fails only the model whose task could not read the provider keys, saying so, where the others ran', async () => {
    const { judge } = harness({ outputs: BY_LENGTH }, (handlers) => ({
      ...handlers,
      generate: (event, context) =>
        event.model.index === 0
          ? createGenerateHandler(() => Promise.reject(new ProviderSecretError('Reading the provider secret failed: ThrottlingException')))(event, context)
          : handlers.generate(event, context),
    }));
    const { results } = await judge({ models: MODELS, judges: JUDGES });
    expect(results[0]).toMatchObject({
      status: 'failed',
      error: { code: 'internal_error', message: 'The gateway failed to run this model (its task could not read the provider keys)' },
    });
    expect(results.slice(1).map((r) => r.status)).toEqual(['completed', 'completed']);
  });

  it("fails a judge's calls, saying so, where its task could not read the provider keys (it had named a class)", async () => {
    const unkeyed = () => Promise.reject(new ProviderSecretError('Reading the provider secret failed: ThrottlingException'));
    const { judge } = harness({ outputs: BY_LENGTH }, (handlers) => ({ ...handlers, judge: createJudgeHandler(unkeyed) }));
    const { evaluations } = await judge({ models: MODELS, judges: [JUDGES[0]!] });
    const orders = evaluations.flatMap((e) => e.orders);
    expect(orders.length).toBeGreaterThan(0);
    for (const order of orders)
      expect(order).toMatchObject({
        status: 'failed',
        error: { code: 'internal_error', message: 'The gateway failed to run this judge call (its task could not read the provider keys)' },
      });
  });

  /** A workflow's input for one model and no judge, with 9 s left. */
  const oneModelInput = (requestId: string): WorkflowInput => ({
    request: { value: { body: { prompt: 'p', models: ['fam_c-5.4'] } } },
    context: { requestId, generateDeadlineAt: Date.now() + 5_000, deadlineAt: Date.now() + 9_000, resultInlineBytes: 1024, judgmentInlineBytes: 1024, catalogAt: Date.now() },
    models: [{ index: 0, modelId: 'fam_c-5.4' }],
    judges: [],
  });

  it('fails the execution, as Step Functions would, when a task answers more than 256 KiB', async () => {
    // Prepare: a generate handler that ignores its inline budget.
    const workflow = createLocalWorkflow({
      generate: async (event) => ({
        index: event.model.index,
        modelId: event.model.modelId,
        status: 'completed',
        result: { value: { output: 'x'.repeat(WORKFLOW_LIMITS.stateBytes) } as never },
      }),
      judge: async (event) => ({ judge: event.item.judge, judgments: [] }),
    });
    const input = oneModelInput('pl_x');

    // Act / Assess
    await expect(workflow.run(input, { executionName: 'pl_x' })).rejects.toThrow(WorkflowFailedError);
    await expect(workflow.run(input, { executionName: 'pl_x' })).rejects.toMatchObject({ error: 'States.DataLimitExceeded' });
  });

  it("stops waiting for an execution just past the request's deadline, as the AWS client does: a task running late fails it ABORTED (it had been waited for to the function's timeout)", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const workflow = createLocalWorkflow({
      generate: async (event) => {
        await released;
        return { index: event.model.index, modelId: event.model.modelId, status: 'completed', result: { value: { output: 'x' } as never } };
      },
      judge: async (event) => ({ judge: event.item.judge, judgments: [] }),
    });
    const input = { ...oneModelInput('pl_late'), context: { ...oneModelInput('pl_late').context, deadlineAt: Date.now() } };
    try {
      await expect(workflow.run(input, { executionName: 'pl_late' })).rejects.toMatchObject({ name: 'WorkflowFailedError', status: 'ABORTED' });
    } finally {
      release();
    }
  });

  it('runs the definition the stack deploys for a longer request deadline, its tasks given that time (a fixed 29 s had failed judged requests at 29 s)', async () => {
    // The stack's timeouts for a 64 s integration: the machine's and each task's.
    const timeouts: unknown[] = [];
    JSON.stringify((await stackWorkflow(64)).definition, (key, value: unknown) => (key === 'TimeoutSeconds' ? void timeouts.push(value) : value));
    expect(timeouts.length).toBeGreaterThanOrEqual(3);
    expect(new Set(timeouts)).toEqual(new Set([64]));

    let remaining: number | undefined;
    const workflow = createLocalWorkflow(
      {
        generate: async (event, context) => {
          remaining = context.getRemainingTimeInMillis();
          return { index: event.model.index, modelId: event.model.modelId, status: 'completed', result: { value: { output: 'x' } as never } };
        },
        judge: async (event) => ({ judge: event.item.judge, judgments: [] }),
      },
      { functionTimeoutMs: 64_000 },
    );
    const input = oneModelInput('pl_y');
    await workflow.run(input, { executionName: 'pl_y' });
    expect(remaining).toBeGreaterThan(60_000);
    expect(remaining).toBeLessThanOrEqual(64_000);
  });
});

describe('Workflow: the definition the local runner executes', () => {
  let template: Template;
  let local: SynthesizedWorkflow;
  let stack: GatewayStack;
  const outdir = mkdtempSync(join(tmpdir(), 'workflow-synth-'));

  beforeAll(async () => {
    // What `cdk synth` does (cdk.json's feature flags; bundling skipped: the template is what matters).
    const context = (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context;
    const app = new App({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': [] } });
    stack = new GatewayStack(app, 'LocalGateway');
    template = Template.fromJSON(app.synth().getStackArtifact(stack.artifactId).template as Record<string, unknown>);
    local = await synthesizeWorkflow();
  }, 60_000);

  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('is the DefinitionString of the synthesized template', () => {
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(machines).toHaveLength(1);
    const deployed = JSON.parse(resolveIntrinsics(machines[0]!.Properties.DefinitionString) as string);
    expect(local.definition).toEqual(deployed);
    expect(Object.values(local.functions).sort()).toEqual(['generate', 'judge']);
  });

  it('is an Express state machine: Generate map then Judge map, logging every event without execution data, traced', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'EXPRESS',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
    const states = local.definition.States as Record<string, Record<string, any>>;
    expect(local.definition.StartAt).toBe('Generate');
    expect(states.Generate).toMatchObject({ Type: 'Map', ItemsPath: '$.models', Next: 'Judge' });
    expect(states.Judge).toMatchObject({ Type: 'Map', ItemsPath: '$.judges', End: true });
    for (const [map, task] of [
      ['Generate', 'GenerateModel'],
      ['Judge', 'JudgeCalls'],
    ] as const) {
      const state = states[map]!.ItemProcessor.States[task];
      expect(state.Resource).toBe('arn:aws:states:::lambda:invoke');
      // A throttled invocation only, which never ran: any other may follow a run whose vendor calls a retry would pay again.
      expect(state.Retry[0].ErrorEquals).toEqual(['Lambda.TooManyRequestsException']);
      expect(state.Catch).toEqual([expect.objectContaining({ ErrorEquals: ['States.ALL'] })]);
    }
  });

  it('lets the api function start it synchronously, and gives every function the claim-check bucket', () => {
    const apiRole = stack.resolve((stack.apiFunction.role!.node.defaultChild as any).logicalId);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === apiRole))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.some((s: { Action: unknown }) => JSON.stringify(s.Action).includes('states:StartSyncExecution'))).toBe(true);
    for (const fn of [stack.apiFunction, stack.generateFunction, stack.judgeFunction]) {
      const variables = template.toJSON().Resources[stack.resolve((fn.node.defaultChild as any).logicalId)].Properties.Environment.Variables;
      expect(variables.CLAIM_CHECK_BUCKET).toEqual({ Ref: stack.resolve((stack.data.claimCheckBucket.node.defaultChild as any).logicalId) });
    }
  });
});
