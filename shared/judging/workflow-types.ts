import type { Carried } from '../claim-check/types.js';
import type { ModelResult } from '../compare/result.js';
import type { PromptRequestBody } from '../contract/types.js';
import type { JudgeTask, Judgment } from './types.js';

/**
 * The payloads of the judge workflow (infra/stack/workflow.ts): what the `api` function
 * starts it with, what each `generate` and `judge` task gets and answers, and what the
 * execution answers. Every state stays under Step Functions' 256 KiB: large parts travel
 * as Carried values (claim check) within the budgets of limits.ts.
 */

/** The request as it travels: the validated body; each task validates it again into a PromptRequest. */
export interface WorkflowRequest {
  body: PromptRequestBody;
}

export interface WorkflowContext {
  /** The promptLogId: names the execution and prefixes every claim-check key of the request. */
  requestId: string;
  /** Epoch ms by which every model call ends; judging keeps the time after it. */
  generateDeadlineAt: number;
  /** Epoch ms by which every judge call ends. */
  deadlineAt: number;
  /** Largest result (JSON bytes) a `generate` task answers inline. */
  resultInlineBytes: number;
  /** Largest judgment (JSON bytes) a `judge` task answers inline. */
  judgmentInlineBytes: number;
  /**
   * When the `api` function read the catalog (epoch ms): the tasks read it at the same
   * instant, so that a request run across a model's retirement calls and is charged for the
   * model its estimate reserved for.
   */
  catalogAt: number;
  /**
   * The account whose request it is: its outputs are checked with its own compiled schemas,
   * and vendors are sent it as the end user (runModels' `accountId`). Absent in an execution
   * started by an `api` function deployed before it was carried.
   */
  accountId?: string;
}

/** An item of the Generate map: one requested model. */
export interface GenerateItem {
  index: number;
  modelId: string;
}

/**
 * An item of the Judge map: one judge with every ordered pair it judges (every pair of
 * requested models, both orders). One `judge` task makes all of them at once, so that a
 * request at the judge-call limit runs in one wave (an inline Map runs at most 40
 * iterations at a time; a request has at most LIMITS.judges judges).
 */
export interface JudgeItem {
  judge: number;
  tasks: JudgeTask[];
}

export interface WorkflowInput {
  request: Carried<WorkflowRequest>;
  context: WorkflowContext;
  models: GenerateItem[];
  /** One item per judge; a task whose pair has a failed result is skipped without a call. */
  judges: JudgeItem[];
}

/** What the `generate` task gets: one item of the Generate map. */
export interface GenerateEvent {
  request: Carried<WorkflowRequest>;
  context: WorkflowContext;
  model: GenerateItem;
}

/**
 * What Generate answers per model. `status` travels inline for the Judge map's choice;
 * `error` (without `result`) is the error name of a task that failed as a whole (the
 * state machine's Catch).
 */
export interface GenerateOutput {
  index: number;
  modelId: string;
  status: 'completed' | 'failed';
  result?: Carried<ModelResult>;
  error?: string;
}

/** What the `judge` task gets: one item of the Judge map and every Generate answer (each inline within its budget, or claim-checked). */
export interface JudgeEvent {
  request: Carried<WorkflowRequest>;
  context: WorkflowContext;
  item: JudgeItem;
  results: GenerateOutput[];
}

/** One judge call's answer: `skipped` when a contestant failed (no call). */
export interface JudgeOutput {
  task: JudgeTask;
  status: 'completed' | 'failed' | 'skipped';
  judgment?: Carried<Judgment>;
}

/**
 * What Judge answers per judge: one JudgeOutput per task of its item, or, when the task
 * failed as a whole (the state machine's Catch), `error`, its error name, and no judgments.
 */
export interface JudgeItemOutput {
  judge: number;
  judgments?: JudgeOutput[];
  status?: 'failed';
  error?: string;
}

/** The execution's output: its input with both maps' answers. */
export interface WorkflowOutput extends WorkflowInput {
  results: GenerateOutput[];
  judgments: JudgeItemOutput[];
}

/** Starts one execution and answers its output once it has finished (StartSyncExecution in AWS). */
export interface JudgingWorkflow {
  run(input: WorkflowInput, options: { executionName: string }): Promise<WorkflowOutput>;
}

/** Claim-check keys, all under the request's prefix. */
export const claimKeys = {
  request: (requestId: string) => `${requestId}/request.json`,
  result: (requestId: string, index: number) => `${requestId}/results/${index}.json`,
  judgment: (requestId: string, task: JudgeTask) => `${requestId}/judgments/${task.judge}-${task.a}-${task.b}.json`,
};
