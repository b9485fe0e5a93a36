import { describe, expect, it } from 'vitest';
import { CUT_OUTPUT_CHECK, heldToBudget, MAX_REQUEST_OUTPUT_BYTES, OutputBudget } from '../../shared/compare/output-budget.js';
import type { ModelResult } from '../../shared/compare/result.js';

describe('Class: OutputBudget', () => {
  it('takes texts whole while they fit, counted in UTF-8 bytes, then the start that fits, then nothing', () => {
    const budget = new OutputBudget(10);
    expect(budget.take('abc')).toBe('abc');
    // é is 2 bytes: 3 + 4 = 7 of 10.
    expect(budget.take('éé')).toBe('éé');
    expect(budget.take('xyzw')).toBe('xyz');
    expect(budget.take('more')).toBe('');
  });

  it('never cuts inside a character: a 4-byte emoji that does not fit is left out whole', () => {
    const budget = new OutputBudget(6);
    expect(budget.take('ab😀😀')).toBe('ab😀');
    expect(budget.take('c')).toBe('');
  });

  it('counts a lone surrogate as the 3 bytes it is sent as', () => {
    const budget = new OutputBudget(4);
    expect(budget.take('\uD800')).toBe('\uD800');
    expect(budget.take('ab')).toBe('a');
  });

  it('is 16 MiB by default', () => {
    expect(new OutputBudget().limitBytes).toBe(MAX_REQUEST_OUTPUT_BYTES);
    expect(MAX_REQUEST_OUTPUT_BYTES).toBe(16 * 1024 * 1024);
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

  it('leaves a result that fits as it is, and cuts the one that passes, saying so, its schema check no longer standing for what is left', () => {
    const budget = new OutputBudget(8);
    const whole = result('{"a":1}');
    expect(heldToBudget(whole, budget)).toBe(whole);
    const cut = heldToBudget(result('{"b":22}'), budget);
    expect(cut.output).toBe('{');
    expect(cut.structuredOutput).toBe(CUT_OUTPUT_CHECK);
    expect(cut.warnings).toEqual(['maxTokens clamped', expect.stringMatching(/^The output was cut/)]);
    expect(cut.providerCost).toBe(0.001);
  });
});
