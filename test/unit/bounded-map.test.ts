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

describe('Class: BoundedMap, shared between owners', () => {
  it("keeps an owner to its share: past it, the owner's own least recent entry goes, never another's", () => {
    const map = new BoundedMap<string, number>(4, { of: (key) => key.split(':')[0]!, most: 2 });
    map.set('a:1', 1).set('b:1', 1);
    for (let i = 2; i < 100; i++) map.set(`b:${i}`, i);
    expect([...map.keys()]).toEqual(['a:1', 'b:98', 'b:99']);
    // Set again, an entry stays one of its owner's; deleted, it leaves room in the share.
    map.set('b:99', 0).set('a:2', 2);
    expect([...map.keys()]).toEqual(['a:1', 'b:98', 'b:99', 'a:2']);
    map.delete('b:98');
    map.set('b:100', 100);
    expect([...map.keys()]).toEqual(['a:1', 'b:99', 'a:2', 'b:100']);
    // The capacity still holds: the least recent of all goes.
    map.set('c:1', 1);
    expect([...map.keys()]).toEqual(['b:99', 'a:2', 'b:100', 'c:1']);
    map.clear();
    map.set('b:1', 1).set('b:2', 2).set('b:3', 3);
    expect([...map.keys()]).toEqual(['b:2', 'b:3']);
  });
});
