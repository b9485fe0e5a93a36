import { carry, retrieve } from '../claim-check/carry.js';
import type { ClaimCheckStore } from '../claim-check/types.js';
import type { ModelResult } from '../compare/result.js';
import { runModels } from '../compare/run-models.js';
import type { PromptRequest } from '../contract/types.js';
import { loadAjv } from '../contract/ajv.js';
import { validatePromptRequest } from '../contract/validate.js';
import type { Log } from '../log.js';
import type { RetryPolicy } from '../providers/retry.js';
import type { Router } from '../providers/router.js';
import { judgeOnce } from './judge.js';
import { claimKeys, type GenerateEvent, type GenerateOutput, type JudgeEvent, type JudgeOutput, type WorkflowRequest } from './workflow-types.js';
import type { Carried } from '../claim-check/types.js';

export interface WorkflowTaskDeps {
  route: Router;
  claimCheck: ClaimCheckStore;
  log: Log;
  retry?: RetryPolicy;
}

/**
 * The two task kinds of the judge workflow, as the `generate` and `judge` functions run
 * them (locally: the same functions, bound by the local workflow runner). A model or judge
 * that fails is a failed result or judgment, never a thrown error: a throw here is a
 * gateway fault, which the state machine's Catch turns into a failed item.
 */
export class WorkflowTasks {
  constructor(private readonly deps: WorkflowTaskDeps) {}

  /** Runs one model of the request; answers its result (claim-checked when large). */
  async generate(event: GenerateEvent): Promise<GenerateOutput> {
    const { context, model } = event;
    const request = await this.request(event.request);
    const requested = request.models[model.index];
    if (!requested || requested.requestedId !== model.modelId) throw new Error(`Generate item ${model.index} is not a model of the request`);
    const [result] = await runModels({ ...request, models: [requested] }, {
      route: this.deps.route,
      deadlineAt: context.generateDeadlineAt,
      retry: this.deps.retry,
    });
    if (!result) throw new Error('runModels answered no result');
    this.deps.log.info('Model generated', {
      requestId: context.requestId,
      modelId: result.modelId,
      status: result.status,
      latencyMs: result.latencyMs,
      errorCode: result.error?.code,
    });
    return {
      index: model.index,
      modelId: model.modelId,
      status: result.status,
      result: await carry(this.deps.claimCheck, claimKeys.result(context.requestId, model.index), result, context.resultInlineBytes),
    };
  }

  /** Runs one judge call on one ordered pair; answers the judgment (claim-checked when large). */
  async judge(event: JudgeEvent): Promise<JudgeOutput> {
    const { context, task } = event;
    if (event.a.status !== 'completed' || event.b.status !== 'completed' || !event.a.result || !event.b.result) {
      return { task, status: 'skipped' };
    }
    const [request, a, b] = await Promise.all([
      this.request(event.request),
      retrieve<ModelResult>(this.deps.claimCheck, event.a.result),
      retrieve<ModelResult>(this.deps.claimCheck, event.b.result),
    ]);
    const judge = request.judges[task.judge];
    if (!judge) throw new Error(`Judge task names judge ${task.judge}, which the request does not have`);
    const judgment = await judgeOnce(request, judge, a.output, b.output, {
      route: this.deps.route,
      deadlineAt: context.deadlineAt,
      retry: this.deps.retry,
    });
    this.deps.log.info('Pair judged', {
      requestId: context.requestId,
      judgeModelId: judge.requestedId,
      answerA: a.modelId,
      answerB: b.modelId,
      status: judgment.status,
      latencyMs: judgment.latencyMs,
      errorCode: judgment.error?.code,
    });
    return {
      task,
      status: judgment.status,
      judgment: await carry(this.deps.claimCheck, claimKeys.judgment(context.requestId, task), judgment, context.judgmentInlineBytes),
    };
  }

  /** The request again as the `api` function validated it (the body was valid there, so it is here). */
  private async request(carried: Carried<WorkflowRequest>): Promise<PromptRequest> {
    const { body } = await retrieve(this.deps.claimCheck, carried);
    await loadAjv(); // judge calls carry the verdict schema
    return validatePromptRequest(body);
  }
}
