import type { JudgeTask } from './types.js';
import type { JudgeItem } from './workflow-types.js';

/**
 * Every judge x every unordered pair of the `models` indexes given x both orders: for each
 * judge and each pair (i, j) with i before j, the task showing i as Answer A and then the
 * one showing j as Answer A. `judges x n(n-1)` tasks for n models.
 */
export function planJudgeTasks(judges: number, models: readonly number[]): JudgeTask[] {
  const tasks: JudgeTask[] = [];
  for (let judge = 0; judge < judges; judge++) {
    for (let x = 0; x < models.length; x++) {
      for (let y = x + 1; y < models.length; y++) {
        const i = models[x] as number;
        const j = models[y] as number;
        tasks.push({ judge, a: i, b: j }, { judge, a: j, b: i });
      }
    }
  }
  return tasks;
}

/** The number of judge calls for `judges` judges and `n` completed results. */
export function judgeCallCount(judges: number, n: number): number {
  return judges * n * (n - 1);
}

/** The same tasks, one item per judge (the Judge map's items: one `judge` task each). */
export function planJudgeItems(judges: number, models: readonly number[]): JudgeItem[] {
  const tasks = planJudgeTasks(judges, models);
  return Array.from({ length: judges }, (_, judge) => ({ judge, tasks: tasks.filter((task) => task.judge === judge) }));
}
