import { describe, expect, it } from 'vitest';
import { createGenerateHandler, createJudgeHandler } from '../../functions/workflow-handlers.js';
import type { WorkflowTasks } from '../../shared/judging/workflow-tasks.js';

/** What a task handler throws when its task throws `error`. */
async function thrown(handler: 'generate' | 'judge', error: Error): Promise<Error> {
  const failing = { generate: () => Promise.reject(error), judge: () => Promise.reject(error) } as unknown as WorkflowTasks;
  const run = (handler === 'generate' ? createGenerateHandler(() => failing) : createJudgeHandler(() => failing)) as unknown as (
    event: unknown,
    context: unknown,
  ) => Promise<unknown>;
  return run({}, {}).then(
    () => {
      throw new Error('the task did not fail');
    },
    (failure: Error) => failure,
  );
}

describe('Function: createGenerateHandler, createJudgeHandler', () => {
  it.each(['generate', 'judge'] as const)(
    "lets a %s task's failure out with its name alone: its message may quote content, which Lambda's log and the workflow would keep",
    async (handler) => {
      const quoting = new SyntaxError('Unexpected token \'S\', "Secret prompt of a tenant" is not valid JSON');
      const failure = await thrown(handler, quoting);
      // The name is what the workflow's Catch reads ($.error.Error).
      expect(failure.name).toBe('SyntaxError');
      expect(`${failure.message}\n${failure.stack}`).not.toContain('Secret prompt');
      expect(failure.message).toBe("SyntaxError in the task; its message is not passed on, as it may quote a request's content");
    },
  );
});
