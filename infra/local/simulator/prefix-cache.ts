/**
 * The prompt prefixes a simulated vendor has "cached": hashes, most recently used last,
 * bounded so that a long run stays small. Each protocol module keeps one; the simulator's
 * reset() clears them all (through the protocol's reset hook).
 */
export class PrefixCache {
  private readonly seen = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(hash: string): boolean {
    return this.seen.has(hash);
  }

  remember(hash: string): void {
    this.seen.delete(hash);
    this.seen.add(hash);
    if (this.seen.size > this.capacity) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }

  clear(): void {
    this.seen.clear();
  }
}
