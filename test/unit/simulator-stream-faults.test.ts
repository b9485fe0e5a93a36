import { describe, expect, it } from 'vitest';
import { parseFaultRule } from '../../infra/local/simulator/faults.js';
import { pieces } from '../../infra/local/simulator/streaming.js';

describe('Function: parseFaultRule, slow-stream', () => {
  it('takes a non-negative delayMs, narrowed like every rule', () => {
    expect(parseFaultRule({ kind: 'slow-stream', delayMs: 250, model: 'claude-opus-4-6', times: 2 })).toEqual({
      ok: true,
      rule: { kind: 'slow-stream', delayMs: 250, model: 'claude-opus-4-6', times: 2 },
    });
  });

  it.each([undefined, -1, 'fast', Number.POSITIVE_INFINITY])('refuses delayMs %s', (delayMs) => {
    expect(parseFaultRule({ kind: 'slow-stream', delayMs })).toEqual({ ok: false, error: 'delayMs must be a non-negative number' });
  });
});

describe('Function: pieces', () => {
  it('cuts text at word boundaries into up to four pieces that join back to it', () => {
    const text = 'one two three four five six seven eight nine';
    const cut = pieces(text);
    expect(cut.length).toBe(3);
    expect(cut.join('')).toBe(text);
    expect(pieces('')).toEqual([]);
    expect(pieces('✓✓')).toEqual(['✓✓']);
  });
});
