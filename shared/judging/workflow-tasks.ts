import { carry, retrieve } from '../claim-check/carry.js';
import type { ClaimCheckStore } from '../claim-check/types.js';
import type { ModelResult } from '../compare/result.js';
import { planCall } from '../compare/model-call.js';
import { runModels } from '../compare/run-models.js';
import { preparingInTurns } from '../compare/turns.js';
import type { PromptRequest } from '../contract/types.js';
import { validatePromptRequest } from '../contract/validate.js';
import type { Log } from '../log.js';
import type { RetryPolicy } from '../providers/retry.js';
import type { Router } from '../providers/router.js';
import { judgeOnce } from './judge.js';
import { UNSHARED_MATERIAL_CHARS, WorkBudget } from './material-budget.js';
import { SHARES_PROMPT_PIECES } from '../providers/adapters.js';
import { answerAllowance, judgeMaterialLength, showAnswerWithin, type ShownAnswer } from './judge-prompt.js';
import { claimKeys, type GenerateEvent, type GenerateOutput, type JudgeEvent, type JudgeItemOutput, type JudgeOutput, type WorkflowRequest } from './workflow-types.js';
import type { Carried } from '../claim-check/types.js';

export interface WorkflowTaskDeps {
  route: Router;
  claimCheck: ClaimCheckStore;
  log: Log;
  retry?: RetryPolicy;
  /** UNSHARED_MATERIAL_CHARS by default. */
  unsharedMaterialChars?: number;
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
    const request = await this.request(event.request, context.catalogAt);
    const requested = request.models[model.index];
    if (!requested || requested.requestedId !== model.modelId) throw new Error(`Generate item ${model.index} is not a model of the request`);
    const [result] = await runModels([planCall(request, requested)], {
      route: this.deps.route,
      deadlineAt: context.generateDeadlineAt,
      retry: this.deps.retry,
      accountId: context.accountId,
    });
    if (!result) throw new Error('runModels answered no result');
    this.logOutcome('Model generated', context.requestId, { modelId: result.modelId }, result);
    return {
      index: model.index,
      modelId: model.modelId,
      // No caller can cancel a workflow's call (it has no stream): completed or failed.
      status: result.status === 'completed' ? 'completed' : 'failed',
      result: await carry(this.deps.claimCheck, claimKeys.result(context.requestId, model.index), result, context.resultInlineBytes),
    };
  }

  /**
   * Runs every judge call of one judge, all at once, prepared one after another in turns of the
   * event loop (run-models' preparingInTurns, one for the task): each contestant's output read
   * and defused, then each call's material built and its request prepared, so that a task of
   * large answers (30 calls of 5 MB material) never holds the thread for seconds; answers one
   * judgment per call (claim-checked when large). A call whose pair has a failed result is skipped; one that
   * fails in the gateway (a claim check not read or kept) is failed, without a judgment.
   */
  async judge(event: JudgeEvent): Promise<JudgeItemOutput> {
    const { context, item } = event;
    const request = await this.request(event.request, context.catalogAt);
    const judge = request.judges[item.judge];
    if (!judge) throw new Error(`Judge item names judge ${item.judge}, which the request does not have`);
    const completed = (index: number) => {
      const output = event.results[index];
      return output?.status === 'completed' && output.result !== undefined ? output.result : undefined;
    };
    const turn = preparingInTurns();
    // A judge whose bodies cannot share the material (the SDK's) sends it within a budget.
    const unshared = SHARES_PROMPT_PIECES.has(judge.entry.protocol) ? undefined : new WorkBudget(this.deps.unsharedMaterialChars ?? UNSHARED_MATERIAL_CHARS);
    // Each contestant's output is read and defused once, however many calls show it, and shown
    // within the allowance the estimate reserved for it (showAnswerWithin).
    const outputs = new Map<number, Promise<{ modelId: string; shown: ShownAnswer }>>();
    const output = (index: number, carried: Carried<ModelResult>) => {
      let result = outputs.get(index);
      if (!result) {
        const allowance = answerAllowance(planCall(request, request.models[index]!).call);
        result = retrieve<ModelResult>(this.deps.claimCheck, carried, turn).then(async ({ modelId, output }) => {
          await turn();
          return { modelId, shown: showAnswerWithin(output, allowance) };
        });
        outputs.set(index, result);
      }
      return result;
    };
    const judgments = await Promise.all(
      item.tasks.map(async (task): Promise<JudgeOutput> => {
        const carriedA = completed(task.a);
        const carriedB = completed(task.b);
        if (!carriedA || !carriedB) return { task, status: 'skipped' };
        try {
          const [a, b] = await Promise.all([output(task.a, carriedA), output(task.b, carriedB)]);
          const call = () =>
            judgeOnce(request, judge, a.shown, b.shown, { route: this.deps.route, deadlineAt: context.deadlineAt, retry: this.deps.retry, turn, accountId: context.accountId });
          const judgment = unshared ? await unshared.run(judgeMaterialLength(request, a.shown, b.shown), call) : await call();
          this.logOutcome('Pair judged', context.requestId, { judgeModelId: judge.requestedId, answerA: a.modelId, answerB: b.modelId }, judgment);
          return {
            task,
            status: judgment.status,
            judgment: await carry(this.deps.claimCheck, claimKeys.judgment(context.requestId, task), judgment, context.judgmentInlineBytes),
          };
        } catch (error) {
          // A contestant's output or this judgment that the claim-check store could not
          // read or keep: this call failed (charged nothing), not the judge's other calls.
          this.deps.log.error('Judge call failed in the gateway', { promptLogId: context.requestId, judgeModelId: judge.requestedId, errorName: (error as Error).name });
          return { task, status: 'failed' };
        }
      }),
    );
    return { judge: item.judge, judgments };
  }

  /** One line per call: who, and how it ended (never its content). */
  private logOutcome(
    message: string,
    requestId: string,
    who: Record<string, string>,
    outcome: { status: string; latencyMs: number; error?: { code: string; upstreamStatus?: number } },
  ): void {
    const { error } = outcome;
    // The vendor's status too, as "Prompt completed" gives it: a 529 is told apart from a 4xx.
    this.deps.log.info(message, {
      promptLogId: requestId,
      ...who,
      status: outcome.status,
      latencyMs: outcome.latencyMs,
      errorCode: error?.code,
      upstreamStatus: error?.upstreamStatus,
    });
  }

  /** The request again as the `api` function validated it (the body was valid there, so it is here), the catalog read at the same instant. */
  private async request(carried: Carried<WorkflowRequest>, catalogAt: number): Promise<PromptRequest> {
    const { body } = await retrieve(this.deps.claimCheck, carried);
    // Synchronous: the api function compiled this response_schema on its schema thread before the workflow started.
    // Outputs are checked on this process's schema thread (runModel), which compiles it on the first check.
    return validatePromptRequest(body, catalogAt);
  }
}
