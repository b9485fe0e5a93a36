import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suite's slowest files, slowest first (seconds on two cores, in a full run). A clean
 * clone has no record of durations, and Vitest then runs larger files first: these small
 * ones started last and ran alone at the end (the bench's smoke run, 60 to 85 s, started
 * 82nd of 93 files). Started first, they run beside the many short files instead.
 */
const SLOWEST = [
  'test/bench/smoke.test.ts',
  'test/browser/page.test.ts',
  'test/e2e/local-host-process.test.ts',
  'test/infra/bundle.test.ts',
  'test/hostile/fuzz.test.ts',
  'test/e2e/money-safety.test.ts',
  'test/infra/stack.test.ts',
  'test/unit/schema-checker.test.ts',
  'test/e2e/credits.test.ts',
  'test/workflow/judge-workflow.test.ts',
  'test/hostile/faults.test.ts',
  'test/hostile/secrets.test.ts',
];

/** Vitest's own order (failed first, then longest first where it knows, else largest), with SLOWEST ahead of it. */
export default class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = SLOWEST.indexOf(relative(this.ctx.config.root, file.moduleId).split('\\').join('/'));
      return at === -1 ? SLOWEST.length : at;
    };
    return sorted
      .map((file, index) => ({ file, index, rank: rank(file) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map(({ file }) => file);
  }
}
