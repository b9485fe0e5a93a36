/**
 * A Map that holds at most `capacity` entries, the least recently set dropped first: the
 * project's caches of what it has compiled, checked or seen (schemas, patterns, accounts'
 * rate windows, authorizer decisions), each bounded so that no caller can grow it for ever.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly capacity: number) {
    super();
  }

  override set(key: K, value: V): this {
    // Set again, a key is the most recent.
    super.delete(key);
    super.set(key, value);
    if (this.size > this.capacity) super.delete(this.keys().next().value as K);
    return this;
  }
}
