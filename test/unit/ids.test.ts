import { describe, expect, it } from 'vitest';
import { ulid } from '../../shared/ids.js';

describe('Function: ulid', () => {
  it('sorts by time and never repeats', () => {
    const early = ulid(1_700_000_000_000);
    const late = ulid(1_700_000_000_001);
    expect(early < late).toBe(true);
    expect(early).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(Array.from({ length: 1000 }, () => ulid(5))).size).toBe(1000);
  });
});
