import { describe, expect, it } from 'vitest';
import { CUT_OUTPUT_CHECK, heldToBudget, MAX_REQUEST_OUTPUT_BYTES, OutputBudget } from '../../shared/compare/output-budget.js';
import type { ModelResult } from '../../shared/compare/result.js';

describe('Class: OutputBudget', () => {
  it('takes texts whole while they fit, counted in UTF-8 bytes, then the start that fits, then nothing', () => {
    const share = new OutputBudget(10).share();
    expect(share.take('abc')).toBe('abc');
    // é is 2 bytes: 3 + 4 = 7 of 10.
    expect(share.take('éé')).toBe('éé');
    expect(share.take('xyzw')).toBe('xyz');
    expect(share.take('more')).toBe('');
  });

  it('never cuts inside a character: a 4-byte emoji that does not fit is left out whole', () => {
    const share = new OutputBudget(6).share();
    expect(share.take('ab😀😀')).toBe('ab😀');
    expect(share.take('c')).toBe('');
  });

  it('counts a lone surrogate as the 3 bytes it is sent as', () => {
    const share = new OutputBudget(4).share();
    expect(share.take('\uD800')).toBe('\uD800');
    expect(share.take('ab')).toBe('a');
  });

  it('is 16 MiB by default', () => {
    expect(new OutputBudget().limitBytes).toBe(MAX_REQUEST_OUTPUT_BYTES);
    expect(MAX_REQUEST_OUTPUT_BYTES).toBe(16 * 1024 * 1024);
  });

  it("keeps each call's share of half the budget for it while it runs: a call that writes past its limit takes its share and the free half, no other's", () => {
    // 100 bytes, 4 calls: 12 bytes each held, 52 free.
    const budget = new OutputBudget(100, 4);
    const [flood, a, b, c] = [budget.share(), budget.share(), budget.share(), budget.share()];
    expect(flood.take('x'.repeat(1000))).toBe('x'.repeat(64));
    expect(flood.take('x')).toBe('');
    expect(a.take('a'.repeat(12))).toBe('a'.repeat(12));
    expect(a.take('a')).toBe('');
    expect(b.take('b'.repeat(13))).toBe('b'.repeat(12));
    // What an ended call left of its share goes to whoever writes next.
    c.take('c'.repeat(2));
    c.end();
    expect(b.take('b'.repeat(20))).toBe('b'.repeat(10));
  });

  it('gives a share past the ones it was made with only what no call holds', () => {
    const budget = new OutputBudget(10, 1);
    budget.share();
    expect(budget.share().take('x'.repeat(10))).toBe('x'.repeat(5));
  });
});

describe('Function: heldToBudget', () => {
  const result = (output: string): ModelResult => ({
    modelId: 'fam_c-5.4',
    status: 'completed',
    output,
    tokensIn: 1,
    tokensOut: 1,
    latencyMs: 1,
    providerCost: 0.001,
    structuredOutput: { conforms: true, value: {} },
    warnings: ['maxTokens clamped'],
  });

  it('leaves results that fit as they are, and cuts the one that passes, saying so, its schema check no longer standing for what is left', () => {
    const whole = result('{"a":1}');
    // 12 bytes, 2 results: 3 each held, 6 free; the first takes its 3 and 4 of the free 6.
    const [kept, cut] = heldToBudget([whole, result('{"b":22}')], 12);
    expect(kept).toBe(whole);
    expect(cut!.output).toBe('{"b":');
    expect(cut!.structuredOutput).toBe(CUT_OUTPUT_CHECK);
    expect(cut!.warnings).toEqual(['maxTokens clamped', expect.stringMatching(/^The output was cut/)]);
    expect(cut!.providerCost).toBe(0.001);
  });

  it('holds the smallest outputs first, in whatever order the models come: a large output first in the list is not cut for the small ones after it', () => {
    // 40 bytes, 3 results: 6 each held, 22 free; the small two leave 10 of their 12.
    const [large, small, smaller] = heldToBudget([result('L'.repeat(50)), result('s'), result('')], 40);
    expect(small!.output).toBe('s');
    expect(smaller!.output).toBe('');
    expect(large!.output).toBe('L'.repeat(39));
  });
});
