import { ClaimCheckNotFoundError } from './errors.js';
import type { ClaimCheckStore } from './types.js';

/** The claim-check store of the local host and the tests: a map in this process. */
export class MemoryClaimCheck implements ClaimCheckStore {
  private readonly objects = new Map<string, string>();

  async put(key: string, body: string): Promise<void> {
    this.objects.set(key, body);
  }

  async get(key: string): Promise<string> {
    const body = this.objects.get(key);
    if (body === undefined) throw new ClaimCheckNotFoundError(key);
    return body;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.objects.delete(key);
  }

  /** The keys stored now (tests check that a request leaves none behind). */
  keys(): string[] {
    return [...this.objects.keys()];
  }
}
