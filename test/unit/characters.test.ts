import { describe, expect, it } from 'vitest';
import { errorBodyToUpstreamError } from '../../shared/providers/anthropic-messages/errors.js';
import { cutWhole } from '../../shared/text/characters.js';

const LONE_HALF = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('Function: cutWhole', () => {
  it('cuts to the length asked, a character short where the cut would split a surrogate pair', () => {
    expect(cutWhole('abc', 5)).toBe('abc');
    expect(cutWhole('abcdef', 3)).toBe('abc');
    expect(cutWhole('ab😀', 3)).toBe('ab');
    expect(cutWhole('ab😀', 4)).toBe('ab😀');
    expect(cutWhole('😀', 0)).toBe('');
  });

  it('leaves no lone surrogate in a vendor message cut short', () => {
    const error = errorBodyToUpstreamError({ error: { type: 'api_error', message: `${'x'.repeat(499)}😀😀` } }, 500);
    expect(error.message.length).toBeLessThanOrEqual(500);
    expect(error.message).not.toMatch(LONE_HALF);
  });
});
