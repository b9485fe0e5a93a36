/**
 * A claim check (DESIGN.md, The workflow): a payload too large for a Step Functions state
 * (256 KiB) is stored aside under a key, and the state carries the key instead. Keys are
 * chosen by the caller, scoped to one request (`<promptLogId>/...`), so that the request
 * can delete every object it may have caused once it ends.
 */
export interface ClaimCheckStore {
  /** Stores `body` under `key`, replacing what was there. */
  put(key: string, body: string): Promise<void>;
  /** The body stored under `key`; ClaimCheckNotFoundError when there is none. */
  get(key: string): Promise<string>;
  /** Deletes every key given; a key with nothing stored is not an error. */
  delete(keys: readonly string[]): Promise<void>;
}

/**
 * A value as a state carries it: inline, or by reference to the claim-check store, with the
 * key its stored copy is encrypted with (absent on a reference written before encryption).
 */
export type Carried<T> = { value: T } | { claim: string; bytes: number; key?: string };
