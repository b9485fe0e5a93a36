import { describe, expect, it } from 'vitest';
import { promptLogId, ulid, ulidTime } from '../../shared/ids.js';

describe('Function: ulid', () => {
  it('sorts by time and never repeats', () => {
    const early = ulid(1_700_000_000_000);
    const late = ulid(1_700_000_000_001);
    expect(early < late).toBe(true);
    expect(early).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(Array.from({ length: 1000 }, () => ulid(5))).size).toBe(1000);
  });
});

describe('Function: ulidTime', () => {
  it('reads back the time of a ULID and of a request ID; NaN for anything else', () => {
    expect(ulidTime(ulid(1_700_000_000_123))).toBe(1_700_000_000_123);
    expect(ulidTime(promptLogId(0))).toBe(0);
    expect(ulidTime(promptLogId(2 ** 48 - 1))).toBe(2 ** 48 - 1);
    expect(ulidTime('pl_')).toBeNaN();
    expect(ulidTime('pl_not-a-ulid-at-all')).toBeNaN();
  });
});
