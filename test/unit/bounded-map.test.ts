import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../shared/bounded-map.js';

describe('Class: BoundedMap', () => {
  it('holds at most its capacity, the least recently set dropped first, a key set again the most recent', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 3).set('c', 4);
    expect([...map]).toEqual([
      ['a', 3],
      ['c', 4],
    ]);
    expect(map.size).toBe(2);
  });
});
