import { carry, retrieve } from '../claim-check/carry.js';
import type { ClaimCheckStore } from '../claim-check/types.js';
import type { ModelResult } from '../compare/result.js';
import type { PromptRequest } from '../contract/types.js';
import type { Log } from '../log.js';
import { toEvaluation } from './evaluation.js';
import { WORKFLOW_LIMITS } from './limits.js';
import { planJudgeItems } from './plan.js';
import { rankModels } from './ranking.js';
import type { Evaluation, JudgeTask, Judgment, RankingEntry } from './types.js';
import { claimKeys, type GenerateOutput, type JudgingWorkflow, type WorkflowInput, type WorkflowOutput } from './workflow-types.js';

export interface JudgedComparisonDeps {
  workflow: JudgingWorkflow;
  claimCheck: ClaimCheckStore;
  log: Log;
}

export interface JudgedComparison {
  results: ModelResult[];
  evaluations: Evaluation[];
  ranking: RankingEntry[];
}

/**
 * A comparison with judges (DESIGN.md, The workflow): one synchronous execution of the
 * judge workflow (Generate, then Judge), then both orders of each pair folded into one
 * evaluation and the models ranked. Every claim-check object the request may have caused
 * is deleted before this returns, whatever happened.
 */
export async function runJudgedComparison(
  request: PromptRequest,
  run: { requestId: string; deadlineAt: number; now?: number },
  deps: JudgedComparisonDeps,
): Promise<JudgedComparison> {
  const input = await workflowInput(request, run, deps.claimCheck);
  try {
    const output = await deps.workflow.run(input, { executionName: run.requestId });
    const results = await Promise.all(request.models.map((model, index) => toResult(output, index, model.requestedId, deps.claimCheck)));
    const judgments = await collectJudgments(input, output, deps.claimCheck);
    const evaluations = evaluate(request, results, judgments);
    return { results, evaluations, ranking: rankModels(request.models.map((m) => m.requestedId), evaluations) };
  } finally {
    await deps.claimCheck.delete(possibleClaimKeys(input)).catch((error: unknown) => {
      // The bucket's one-day expiry rule removes what is left.
      deps.log.error('Claim-check objects not deleted', { requestId: run.requestId, errorName: (error as Error).name });
    });
  }
}

async function workflowInput(request: PromptRequest, run: { requestId: string; deadlineAt: number; now?: number }, claimCheck: ClaimCheckStore): Promise<WorkflowInput> {
  const now = run.now ?? Date.now();
  const models = request.models.map((model, index) => ({ index, modelId: model.requestedId }));
  const judges = planJudgeItems(request.judges.length, models.map((m) => m.index));
  const calls = judges.reduce((sum, item) => sum + item.tasks.length, 0);
  return {
    request: await carry(claimCheck, claimKeys.request(run.requestId), { body: request.body }, WORKFLOW_LIMITS.requestInlineBytes),
    context: {
      requestId: run.requestId,
      generateDeadlineAt: Math.round(now + Math.max(0, run.deadlineAt - now) * WORKFLOW_LIMITS.generateShare),
      deadlineAt: run.deadlineAt,
      resultInlineBytes: Math.floor(WORKFLOW_LIMITS.resultsInlineBytes / Math.max(1, models.length)),
      judgmentInlineBytes: Math.floor(WORKFLOW_LIMITS.judgmentsInlineBytes / Math.max(1, calls)),
    },
    models,
    judges,
  };
}

/** Every key a task of this request could have written: deleting a key that holds nothing is no error. */
function possibleClaimKeys(input: WorkflowInput): string[] {
  const { requestId } = input.context;
  return [
    claimKeys.request(requestId),
    ...input.models.map((m) => claimKeys.result(requestId, m.index)),
    ...input.judges.flatMap((item) => item.tasks.map((task) => claimKeys.judgment(requestId, task))),
  ];
}

async function toResult(output: WorkflowOutput, index: number, modelId: string, claimCheck: ClaimCheckStore): Promise<ModelResult> {
  const item: GenerateOutput | undefined = output.results?.[index];
  if (item?.result) return retrieve(claimCheck, item.result);
  // The task failed as a whole (the state machine caught it): the model gets a failed result.
  return {
    modelId,
    status: 'failed',
    output: '',
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 0,
    providerCost: 0,
    error: { code: 'internal_error', message: `The gateway failed to run this model${item?.error ? ` (${item.error})` : ''}` },
  };
}

function taskKey(task: JudgeTask): string {
  return `${task.judge}:${task.a}:${task.b}`;
}

/** Every judge call's judgment by task; the calls of a judge whose task failed as a whole are failed judgments. */
async function collectJudgments(input: WorkflowInput, output: WorkflowOutput, claimCheck: ClaimCheckStore): Promise<Map<string, Judgment>> {
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
        for (const task of input.judges[index]?.tasks ?? []) judgments.set(taskKey(task), failed(item.error));
        return [];
      }
      return item.judgments.map(async (call) => {
        if (call.status === 'skipped') return;
        judgments.set(taskKey(call.task), call.judgment ? await retrieve(claimCheck, call.judgment) : failed(undefined));
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

/** One evaluation per judge per pair of completed results, judges in request order, then pairs in request order. */
function evaluate(request: PromptRequest, results: ModelResult[], judgments: Map<string, Judgment>): Evaluation[] {
  const completed = results.flatMap((result, index) => (result.status === 'completed' ? [index] : []));
  const evaluations: Evaluation[] = [];
  request.judges.forEach((judge, j) => {
    for (let x = 0; x < completed.length; x++) {
      for (let y = x + 1; y < completed.length; y++) {
        const i = completed[x] as number;
        const k = completed[y] as number;
        evaluations.push(
          toEvaluation({
            judgeModelId: judge.requestedId,
            a: results[i] as ModelResult,
            b: results[k] as ModelResult,
            aFirst: judgments.get(taskKey({ judge: j, a: i, b: k })) ?? NOT_RUN,
            bFirst: judgments.get(taskKey({ judge: j, a: k, b: i })) ?? NOT_RUN,
            weights: request.judgeWeights,
          }),
        );
      }
    }
  });
  return evaluations;
}

/** What the judge calls cost, USD: completed calls only (a failed call costs nothing). */
export function judgingCostUsd(evaluations: readonly Evaluation[]): number {
  let usd = 0;
  for (const evaluation of evaluations) {
    for (const order of evaluation.orders) if (order.status === 'completed') usd += order.providerCost ?? 0;
  }
  return usd;
}
