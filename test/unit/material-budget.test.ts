import { describe, expect, it } from 'vitest';
import { WorkBudget } from '../../shared/judging/material-budget.js';

/** Work that records its start and ends when the test says. */
function gated(log: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  return {
    work: async () => {
      log.push(`start ${name}`);
      await ended;
      log.push(`end ${name}`);
      return name;
    },
    end,
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('Class: WorkBudget', () => {
  it('runs work within its limit at once, the rest in turn as work ends, first come first served', async () => {
    const budget = new WorkBudget(10);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => gated(log, name)) as [
      ReturnType<typeof gated>,
      ReturnType<typeof gated>,
      ReturnType<typeof gated>,
      ReturnType<typeof gated>,
    ];
    const runs = [budget.run(6, a.work), budget.run(4, b.work), budget.run(6, c.work), budget.run(1, d.work)];
    await settled();
    // c does not fit beside a and b; d, which would, waits behind it.
    expect(log).toEqual(['start a', 'start b']);
    a.end();
    await settled();
    expect(log).toEqual(['start a', 'start b', 'end a', 'start c']);
    b.end();
    await settled();
    expect(log.slice(-2)).toEqual(['end b', 'start d']);
    c.end();
    d.end();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('runs a piece larger than the limit alone, and gives its units back when it throws', async () => {
    const budget = new WorkBudget(10);
    const log: string[] = [];
    const big = gated(log, 'big');
    const small = gated(log, 'small');
    const running = [budget.run(25, big.work), budget.run(1, small.work)];
    await settled();
    expect(log).toEqual(['start big']);
    big.end();
    small.end();
    await Promise.all(running);
    await expect(budget.run(10, async () => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    expect(await budget.run(10, async () => 'ran')).toBe('ran');
  });
});
