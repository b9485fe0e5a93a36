import { UnauthorizedError } from '../errors.js';
import type { AccountsRepository } from '../storage/accounts.js';
import type { ApiKeysRepository } from '../storage/api-keys.js';
import { bearerKey, hashApiKey } from './keys.js';

/**
 * Who is calling, and what of their account is safe to cache with the authorizer's
 * decision (API Gateway caches it per key for the authorizer TTL): never the balance.
 */
export interface Principal {
  accountId: string;
  zeroDataRetention: boolean;
  /** 0 when the account uses the gateway default. */
  rateLimitRpm: number;
  /** The key's SHA-256: the reserve refuses it once the key is revoked, though this decision is cached. */
  keyHash: string;
}

/**
 * `Authorization: Bearer <key>` to the account it belongs to. Keys are looked up by their
 * SHA-256 only; missing, malformed, unknown and revoked keys, and keys of a deleted
 * account, are all the same 401.
 */
export async function authenticate(authorization: string | undefined, store: { apiKeys: ApiKeysRepository; accounts: AccountsRepository }): Promise<Principal> {
  const key = bearerKey(authorization);
  if (!key) throw new UnauthorizedError();
  // As last written: a key created a moment ago is not refused (a 401 API Gateway would then
  // cache), and a revoked one is not let in by a stale copy. Read only when the cache misses.
  const keyHash = hashApiKey(key);
  const record = await store.apiKeys.get(keyHash, { consistent: true });
  if (!record || record.revokedAt) throw new UnauthorizedError();
  const account = await store.accounts.get(record.accountId);
  if (!account) throw new UnauthorizedError();
  return { accountId: account.accountId, zeroDataRetention: account.zeroDataRetention, rateLimitRpm: account.rateLimitRpm ?? 0, keyHash };
}
