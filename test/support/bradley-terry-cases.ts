import type { Games } from '../../shared/judging/bradley-terry.js';
import { seededRandom } from '../../shared/seeded-random.js';

/**
 * Seeded sets of games for Bradley-Terry fits: 2 to 8 items, 1 to 30 games each, ties,
 * items that win every game, items that play none, and groups that never meet.
 */
export function bradleyTerryCases(count: number, seed = 20261125): { n: number; games: Games[] }[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, c) => {
    const n = 2 + Math.floor(random() * 7);
    const games: Games[] = Array.from({ length: 1 + Math.floor(random() * 30) }, () => {
      const a = Math.floor(random() * n);
      const b = Math.floor(random() * n);
      const r = random();
      // Every seventh case lopsided: the first-named item wins 80 % of its games.
      const [winsA, winsB] = r < 0.15 ? [0.5, 0.5] : r < (c % 7 === 0 ? 0.95 : 0.55) ? [1, 0] : [0, 1];
      return { a, b, winsA, winsB };
    });
    return { n, games };
  });
}
