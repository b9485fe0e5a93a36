import { carry, retrieve } from '../claim-check/carry.js';
import type { Carried, ClaimCheckStore } from '../claim-check/types.js';
import type { ModelResult } from '../compare/result.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import type { Log } from '../log.js';
import { toEvaluation } from './evaluation.js';
import { WORKFLOW_LIMITS } from './limits.js';
import { planJudgeItems } from './plan.js';
import { rankModels } from './ranking.js';
import { rankedEvaluations, selfPreferenceOf } from './self-preference.js';
import { judgingStatistics, type JudgingStatistics } from './statistics.js';
import type { Evaluation, JudgeTask, Judgment, RankingEntry } from './types.js';
import { claimKeys, type GenerateOutput, type JudgingWorkflow, type WorkflowInput, type WorkflowOutput } from './workflow-types.js';

export interface JudgedComparisonDeps {
  workflow: JudgingWorkflow;
  claimCheck: ClaimCheckStore;
  log: Log;
  /**
   * Turns of the event loop to decode what is read back in (run-models' preparingInTurns),
   * given by the caller: imported here, the module would be shared by the api's entry and this
   * chunk loaded on demand, and split into a file of its own at every cold start.
   */
  turns?: () => () => Promise<void>;
}

export interface JudgedComparison {
  results: ModelResult[];
  evaluations: Evaluation[];
  ranking: RankingEntry[];
  judgeStatistics: JudgingStatistics;
}

/** A judged comparison under way, and what its caller does once the request is over. */
export interface JudgedRun {
  /** Its outcome; it fails only when the workflow's execution fails as a whole, or ran nothing for want of the provider keys (KeysUnreadError). */
  comparison: Promise<JudgedComparison>;
  /**
   * Deletes every claim-check object the request may have caused (zero data retention:
   * nothing outlives the request). The caller runs it once the request is over and before
   * its invocation ends: after the answer on success, so that the answer does not wait for
   * S3; beside the release when the comparison failed. Never rejects: a failure is logged,
   * and the bucket's one-day expiry rule removes what is left, sealed.
   */
  discardClaims(): Promise<void>;
}

/** The run's name (the promptLogId), its deadline, and the account whose request it is (the workflow's context). */
export interface JudgedRunSettings {
  requestId: string;
  deadlineAt: number;
  accountId?: string;
  now?: number;
}

/**
 * A comparison with judges (DESIGN.md, The workflow): one synchronous execution of the
 * judge workflow (Generate, then Judge), then both orders of each pair folded into one
 * evaluation and the models ranked. A result or judgment that cannot be read back from the
 * claim-check store is a failed one, as a failed task's are: it fails no other.
 */
export function startJudgedComparison(request: PromptRequest, run: JudgedRunSettings, deps: JudgedComparisonDeps): JudgedRun {
  const plan = workflowPlan(request, run);
  const comparison = (async () => {
    const input = { ...plan, request: await carry(deps.claimCheck, claimKeys.request(run.requestId), { body: request.body }, WORKFLOW_LIMITS.requestInlineBytes) };
    const output = await deps.workflow.run(input, { executionName: run.requestId });
    // No Generate task could read the provider keys: nothing ran, as an unjudged request whose
    // keys cannot be read (its caller answers 503, not a comparison of failures each naming an internal error).
    if (request.models.every((_, index) => output.results?.[index]?.error === KEYS_UNREAD)) throw new KeysUnreadError();
    // A value read back from the claim-check store, or undefined (logged) when it cannot be;
    // decoded in the caller's turns of the event loop (the models' large outputs, read together).
    const turn = deps.turns?.();
    const readBack: ReadBack = (what, carried) =>
      retrieve(deps.claimCheck, carried, turn).catch((error: unknown) => {
        deps.log.error('Claim-check object not read', { promptLogId: run.requestId, what, errorName: (error as Error).name });
        return undefined;
      });
    const results = await Promise.all(request.models.map((model, index) => toResult(output, index, model.requestedId, readBack)));
    const judgments = await collectJudgments(input, output, readBack);
    const evaluations = evaluate(request, results, judgments);
    return {
      results,
      evaluations,
      ranking: await rankModels(
        request.models.map((m) => m.requestedId),
        evaluations,
        (modelId) => request.models.find((m) => m.requestedId === modelId)?.entry.id ?? modelId,
      ),
      judgeStatistics: judgingStatistics(
        request.judges.map((j) => j.requestedId),
        evaluations,
      ),
    };
  })();
  return {
    comparison,
    // Every key, the request's own included: its put may have landed though it failed.
    discardClaims: () =>
      deps.claimCheck.delete(possibleClaimKeys(plan)).catch((error: unknown) => {
        deps.log.error('Claim-check objects not deleted', { promptLogId: run.requestId, errorName: (error as Error).name });
      }),
  };
}

/** The workflow's input but the request itself (carried, maybe by claim check, when the run starts). */
function workflowPlan(request: PromptRequest, run: JudgedRunSettings): Omit<WorkflowInput, 'request'> {
  const now = run.now ?? Date.now();
  const models = request.models.map((model, index) => ({ index, modelId: model.requestedId }));
  const judges = planJudgeItems(
    request.judges.length,
    models.map((m) => m.index),
  );
  const calls = judges.reduce((sum, item) => sum + item.tasks.length, 0);
  return {
    context: {
      requestId: run.requestId,
      generateDeadlineAt: Math.round(now + Math.max(0, run.deadlineAt - now) * WORKFLOW_LIMITS.generateShare),
      deadlineAt: run.deadlineAt,
      resultInlineBytes: Math.floor(WORKFLOW_LIMITS.resultsInlineBytes / Math.max(1, models.length)),
      judgmentInlineBytes: Math.floor(WORKFLOW_LIMITS.judgmentsInlineBytes / Math.max(1, calls)),
      catalogAt: request.catalogAt,
      accountId: run.accountId,
    },
    models,
    judges,
  };
}

/** Every key a task of this request could have written: deleting a key that holds nothing is no error. */
function possibleClaimKeys(plan: Omit<WorkflowInput, 'request'>): string[] {
  const { requestId } = plan.context;
  return [
    claimKeys.request(requestId),
    ...plan.models.map((m) => claimKeys.result(requestId, m.index)),
    ...plan.judges.flatMap((item) => item.tasks.map((task) => claimKeys.judgment(requestId, task))),
  ];
}

/**
 * No Generate task of the request could read the provider keys: nothing ran. Its caller answers
 * as for an unjudged request (503). Of its own, not errors.ts's: shared with the api's entry,
 * that module would be split into a chunk of its own at every cold start.
 */
export class KeysUnreadError extends Error {
  override name = 'KeysUnreadError';
  constructor() {
    super('No Generate task could read the provider keys');
  }
}

/** The error name a Generate or Judge task fails with when it cannot read the provider keys (ProviderSecretError, by name: the workflow carries no more). */
const KEYS_UNREAD = 'ProviderSecretError';

/** Why a task failed as a whole, as a result says it: its error's name, but for the keys unread, said in words. */
function taskFailure(error: string | undefined): string | undefined {
  return error === KEYS_UNREAD ? 'its task could not read the provider keys' : error;
}

type ReadBack = <T>(what: 'result' | 'judgment', carried: Carried<T>) => Promise<T | undefined>;

/** A model's result, or a failed one: its task failed as a whole (the state machine caught it), or its result could not be read back. */
async function toResult(output: WorkflowOutput, index: number, modelId: string, readBack: ReadBack): Promise<ModelResult> {
  const item: GenerateOutput | undefined = output.results?.[index];
  const result = item?.result && (await readBack('result', item.result));
  if (result) return result;
  const reason = item?.result ? 'its result could not be read back' : taskFailure(item?.error);
  return {
    modelId,
    status: 'failed',
    output: '',
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 0,
    providerCost: 0,
    error: { code: 'internal_error', message: `The gateway failed to run this model${reason ? ` (${reason})` : ''}` },
  };
}

function taskKey(task: JudgeTask): string {
  return `${task.judge}:${task.a}:${task.b}`;
}

/**
 * Every judge call's judgment by task; the calls of a judge whose task failed as a whole,
 * and a judgment that cannot be read back, are failed judgments.
 */
async function collectJudgments(input: WorkflowInput, output: WorkflowOutput, readBack: ReadBack): Promise<Map<string, Judgment>> {
  const judgments = new Map<string, Judgment>();
  const failed = (error: string | undefined): Judgment => ({
    status: 'failed',
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 0,
    providerCost: 0,
    error: { code: 'internal_error', message: `The gateway failed to run this judge call${error ? ` (${error})` : ''}` },
  });
  await Promise.all(
    (output.judgments ?? []).flatMap((item, index) => {
      if (!item.judgments) {
        for (const task of input.judges[index]?.tasks ?? []) judgments.set(taskKey(task), failed(taskFailure(item.error)));
        return [];
      }
      return item.judgments.map(async (call) => {
        if (call.status === 'skipped') return;
        const judgment = call.judgment ? ((await readBack('judgment', call.judgment)) ?? failed('its judgment could not be read back')) : failed(undefined);
        judgments.set(taskKey(call.task), judgment);
      });
    }),
  );
  return judgments;
}

const NOT_RUN: Judgment = {
  status: 'failed',
  tokensIn: 0,
  tokensOut: 0,
  latencyMs: 0,
  providerCost: 0,
  error: { code: 'internal_error', message: 'This judge call did not run' },
};

/**
 * One evaluation per judge per pair of completed results, judges in request order, then
 * pairs in request order; each flagged where its judge may prefer itself, and marked for
 * whether the ranking counts it.
 */
function evaluate(request: PromptRequest, results: ModelResult[], judgments: Map<string, Judgment>): Evaluation[] {
  const completed = results.flatMap((result, index) => (result.status === 'completed' ? [index] : []));
  const evaluations: Omit<Evaluation, 'inRanking'>[] = [];
  const contestant = (index: number) => ({ modelId: (results[index] as ModelResult).modelId, entry: (request.models[index] as RequestedModel).entry });
  request.judges.forEach((judge, j) => {
    for (let x = 0; x < completed.length; x++) {
      for (let y = x + 1; y < completed.length; y++) {
        const i = completed[x] as number;
        const k = completed[y] as number;
        const selfPreference = selfPreferenceOf(judge.entry, [contestant(i), contestant(k)]);
        evaluations.push({
          ...toEvaluation({
            judgeModelId: judge.requestedId,
            a: results[i] as ModelResult,
            b: results[k] as ModelResult,
            aFirst: judgments.get(taskKey({ judge: j, a: i, b: k })) ?? NOT_RUN,
            bFirst: judgments.get(taskKey({ judge: j, a: k, b: i })) ?? NOT_RUN,
            weights: request.judgeWeights,
          }),
          ...(selfPreference ? { selfPreference } : {}),
        });
      }
    }
  });
  return rankedEvaluations(evaluations);
}
