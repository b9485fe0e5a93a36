import { BoundedMap } from '../../../shared/bounded-map.js';

/**
 * The prompt prefixes a simulated vendor has "cached": hashes, most recently used last,
 * bounded so that a long run stays small. Each protocol module keeps one; the simulator's
 * reset() clears them all (through the protocol's reset hook).
 */
export class PrefixCache {
  private readonly seen: BoundedMap<string, true>;

  constructor(capacity: number) {
    this.seen = new BoundedMap(capacity);
  }

  has(hash: string): boolean {
    return this.seen.has(hash);
  }

  remember(hash: string): void {
    this.seen.set(hash, true);
  }

  clear(): void {
    this.seen.clear();
  }
}
