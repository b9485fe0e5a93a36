import { base64Bytes } from '../contract/base64.js';
import type { PromptRequest } from '../contract/types.js';
import type { Evaluation, RankingEntry } from '../judging/types.js';
import type { PromptLogContent, PromptLogMeta } from '../storage/prompt-logs.js';
import type { ModelResult } from '../compare/result.js';
import { callCharged } from '../pricing/charge.js';

export interface PromptLogInput {
  promptLogId: string;
  accountId: string;
  request: PromptRequest;
  results: ModelResult[];
  evaluations: Evaluation[];
  ranking?: RankingEntry[];
  chargedMicro: number;
  zeroDataRetention: boolean;
  receivedAt: number;
}

/**
 * What the prompt log keeps of a request: metadata and usage always; prompt, system
 * prompt, history, outputs, verdicts, scores and reasoning only without zero data
 * retention. Judging is kept per evaluation (who judged which pair, and the calls' usage)
 * without it; under it, as each judge's usage totals only: the spec (1.7) keeps judge
 * metadata out of the records too, and the totals still account for what was charged.
 */
export function toPromptLog(input: PromptLogInput): {
  meta: PromptLogMeta & { evaluations?: EvaluationLog[]; judgeUsage?: JudgeUsage[] };
  content?: PromptLogContent & { evaluations?: Evaluation[]; ranking?: RankingEntry[] };
} {
  const { request, results, evaluations, ranking } = input;
  const judged = request.judges.length > 0;
  return {
    meta: {
      ...toLogMeta(input.promptLogId, input.accountId, request, results, input.chargedMicro, input.zeroDataRetention, input.receivedAt),
      ...(judged ? (input.zeroDataRetention ? { judgeUsage: judgeUsage(evaluations) } : { evaluations: evaluations.map(toEvaluationLog) }) : {}),
    },
    ...(input.zeroDataRetention ? {} : { content: { ...toLogContent(request, results), ...(judged ? { evaluations, ranking } : {}) } }),
  };
}

/** An evaluation as the prompt log keeps it under any retention: who judged what, and the calls' usage. */
type EvaluationLog = ReturnType<typeof toEvaluationLog>;

function toEvaluationLog(evaluation: Evaluation) {
  return {
    judgeModelId: evaluation.judgeModelId,
    modelA: evaluation.modelA,
    modelB: evaluation.modelB,
    status: evaluation.status,
    tokensIn: evaluation.tokensIn,
    tokensOut: evaluation.tokensOut,
    latencyMs: evaluation.latencyMs,
    providerCost: evaluation.providerCost,
    // What its calls were charged beside providerCost where a usage was missing or could not be true, as the answer says it.
    ...(evaluation.estimatedCost !== undefined ? { estimatedCost: evaluation.estimatedCost } : {}),
    ...(evaluation.error ? { errorCode: evaluation.error.code } : {}),
  };
}

/** One judge's calls in a request, added up: what zero data retention keeps of judging. */
export interface JudgeUsage {
  judgeModelId: string;
  /** The judge calls of its evaluations (two each, one per order). */
  calls: number;
  /** Those that failed or did not run (cut off by the deadline). */
  failedCalls: number;
  tokensIn: number;
  tokensOut: number;
  /** USD, as the vendors reported it: a failed call (but one its vendor billed, as a result's providerCost says), or one whose usage was missing, counts 0. */
  providerCost: number;
  /** USD charged for calls whose usage was missing or could not be true, estimated from their text (as a result's `estimatedCost`). */
  estimatedCost: number;
}

function judgeUsage(evaluations: readonly Evaluation[]): JudgeUsage[] {
  const byJudge = new Map<string, JudgeUsage>();
  for (const evaluation of evaluations) {
    const usage = byJudge.get(evaluation.judgeModelId) ?? {
      judgeModelId: evaluation.judgeModelId,
      calls: 0,
      failedCalls: 0,
      tokensIn: 0,
      tokensOut: 0,
      providerCost: 0,
      estimatedCost: 0,
    };
    for (const order of evaluation.orders) {
      usage.calls++;
      if (order.status === 'failed') usage.failedCalls++;
      usage.tokensIn += order.tokensIn;
      usage.tokensOut += order.tokensOut;
      // As the request charged it, so that the totals account for the charge.
      const { observedUsd, estimatedUsd } = callCharged(order);
      usage.providerCost = round12(usage.providerCost + observedUsd);
      usage.estimatedCost = round12(usage.estimatedCost + estimatedUsd);
    }
    byJudge.set(evaluation.judgeModelId, usage);
  }
  return [...byJudge.values()];
}

/** USD sums kept to 12 decimals, as an evaluation's own cost is. */
function round12(usd: number): number {
  return Math.round(usd * 1e12) / 1e12;
}

function toLogMeta(
  promptLogId: string,
  accountId: string,
  request: PromptRequest,
  results: ModelResult[],
  creditsUsedMicro: number,
  zeroDataRetention: boolean,
  receivedAt: number,
): PromptLogMeta {
  return {
    promptLogId,
    accountId,
    createdAt: new Date(receivedAt).toISOString(),
    zeroDataRetention,
    models: results.map((r) => ({
      modelId: r.modelId,
      status: r.status,
      tokensIn: r.tokensIn,
      tokensOut: r.tokensOut,
      latencyMs: r.latencyMs,
      providerCost: r.providerCost,
      ...(r.estimatedCost !== undefined ? { estimatedCost: r.estimatedCost } : {}),
      ...(r.error ? { errorCode: r.error.code } : {}),
    })),
    judges: request.judges.map((j) => j.requestedId),
    creditsUsedMicro,
  };
}

function toLogContent(request: PromptRequest, results: ModelResult[]): PromptLogContent {
  const { body } = request;
  return {
    prompt: body.prompt,
    systemPrompt: body.system_prompt,
    history: body.history,
    judgePrompt: body.judge_prompt,
    attachments: body.attachments?.map((a) => ({ name: a.name, type: a.type, bytes: base64Bytes(a.base64) })),
    outputs: results.filter((r) => r.status === 'completed').map((r) => ({ modelId: r.modelId, output: r.output })),
  };
}
