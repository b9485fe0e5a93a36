import middy from '@middy/core';
import type { WorkflowTasks } from '../shared/judging/workflow-tasks.js';
import type { GenerateEvent, GenerateOutput, JudgeEvent, JudgeItemOutput } from '../shared/judging/workflow-types.js';

/* The workflow's task handlers, without Powertools (the Lambda entries generate.ts and judge.ts add it). */

/** The judge workflow's Generate task: one model of a judged request (an item of the Generate map). */
export function createGenerateHandler(tasks: () => WorkflowTasks | Promise<WorkflowTasks>) {
  return middy<GenerateEvent, GenerateOutput>().handler(async (event) => (await tasks()).generate(event));
}

/** The judge workflow's Judge task: one judge's calls, on every ordered pair of results (an item of the Judge map). */
export function createJudgeHandler(tasks: () => WorkflowTasks | Promise<WorkflowTasks>) {
  return middy<JudgeEvent, JudgeItemOutput>().handler(async (event) => (await tasks()).judge(event));
}
