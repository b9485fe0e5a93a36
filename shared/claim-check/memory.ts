import { ClaimCheckNotFoundError } from './errors.js';
import type { ClaimCheckStore } from './types.js';

/**
 * How long an object is kept, here and in the stack's bucket (its lifecycle rule): a task the
 * workflow stopped waiting for (its timeout caught) may still write its object after the
 * request deleted its own, and a host that runs for weeks would keep every one.
 */
export const CLAIM_CHECK_EXPIRY_MS = 24 * 60 * 60 * 1000;

/** The claim-check store of the local host and the tests: a map in this process, each object kept a day at most. */
export class MemoryClaimCheck implements ClaimCheckStore {
  /** By key, in the order written (a key written again moves to the end): the oldest first. */
  private readonly objects = new Map<string, { body: string; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async put(key: string, body: string): Promise<void> {
    const at = this.now();
    // The expired ones are the first: dropped from the front at each write.
    for (const [oldest, object] of this.objects) {
      if (at - object.at < CLAIM_CHECK_EXPIRY_MS) break;
      this.objects.delete(oldest);
    }
    this.objects.delete(key);
    this.objects.set(key, { body, at });
  }

  async get(key: string): Promise<string> {
    const object = this.objects.get(key);
    if (object === undefined || this.now() - object.at >= CLAIM_CHECK_EXPIRY_MS) throw new ClaimCheckNotFoundError(key);
    return object.body;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.objects.delete(key);
  }

  /** The keys stored now (tests check that a request leaves none behind). */
  keys(): string[] {
    return [...this.objects.keys()];
  }
}
