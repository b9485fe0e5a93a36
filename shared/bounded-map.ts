/**
 * A Map that holds at most `capacity` entries, the least recently set dropped first: the
 * project's caches of what it has compiled, checked or seen (schemas, patterns, accounts'
 * rate windows, authorizer decisions), each bounded so that no caller can grow it for ever.
 * With `share`, the entries of one owner (`share.of` a key: an account) are at most
 * `share.most`: an owner past it drops its own least recent, never another's, so that one
 * account's stream of new entries cannot push every other account's out.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  private readonly owned = new Map<string, number>();

  constructor(
    private readonly capacity: number,
    private readonly share?: { of: (key: K) => string; most: number },
  ) {
    super();
  }

  override set(key: K, value: V): this {
    // Set again, a key is the most recent.
    this.delete(key);
    const share = this.share;
    if (share) {
      const owner = share.of(key);
      if ((this.owned.get(owner) ?? 0) >= share.most) {
        for (const held of this.keys()) {
          if (share.of(held) !== owner) continue;
          this.delete(held);
          break;
        }
      }
      this.owned.set(owner, (this.owned.get(owner) ?? 0) + 1);
    }
    super.set(key, value);
    if (this.size > this.capacity) this.delete(this.keys().next().value as K);
    return this;
  }

  override delete(key: K): boolean {
    if (!super.delete(key)) return false;
    if (this.share) {
      const owner = this.share.of(key);
      const left = (this.owned.get(owner) ?? 1) - 1;
      if (left > 0) this.owned.set(owner, left);
      else this.owned.delete(owner);
    }
    return true;
  }

  override clear(): void {
    super.clear();
    this.owned.clear();
  }
}
