import middy from '@middy/core';
import type { WorkflowTasks } from '../shared/judging/workflow-tasks.js';
import type { GenerateEvent, GenerateOutput, JudgeEvent, JudgeItemOutput } from '../shared/judging/workflow-types.js';

/* The workflow's task handlers, without Powertools (the Lambda entries generate.ts and judge.ts add it). */

/**
 * What a task's failure carries out of the function: its name alone, which the workflow's
 * Catch reads (`$.error.Error`). A task's own failures are results; what escapes is
 * unexpected, and its message may quote what it failed on (a JSON parse error quotes the
 * text it read: an output, a prompt). Lambda writes an uncaught error's message to the
 * function's log, and Step Functions keeps it as the error's cause, both of which outlive
 * the request: zero data retention or not, no content goes there.
 */
function nameOnly(): middy.MiddlewareObj {
  return {
    onError: (request) => {
      const name = request.error?.name || 'Error';
      const bare = new Error(`${name} in the task; its message is not passed on, as it may quote a request's content`);
      bare.name = name;
      request.error = bare;
    },
  };
}

/** The judge workflow's Generate task: one model of a judged request (an item of the Generate map). */
export function createGenerateHandler(tasks: () => WorkflowTasks | Promise<WorkflowTasks>) {
  return middy<GenerateEvent, GenerateOutput>()
    .use(nameOnly())
    .handler(async (event) => (await tasks()).generate(event));
}

/** The judge workflow's Judge task: one judge's calls, on every ordered pair of results (an item of the Judge map). */
export function createJudgeHandler(tasks: () => WorkflowTasks | Promise<WorkflowTasks>) {
  return middy<JudgeEvent, JudgeItemOutput>()
    .use(nameOnly())
    .handler(async (event) => (await tasks()).judge(event));
}
