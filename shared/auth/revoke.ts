import type { AccountsRepository } from '../storage/accounts.js';
import type { ApiKeyRecord, ApiKeysRepository } from '../storage/api-keys.js';

/**
 * Revokes a key, in two writes: its record, which the authorizer reads when its cache
 * misses (a 401 from then on), then its account's list of revoked keys, which the reserve
 * refuses (a 401 before any model is called, though API Gateway may still hold the key's
 * Allow for its cache's TTL, 30 s by default). Revoking again keeps the first time and
 * lists the key again. Returns the key's record as revoked.
 */
export async function revokeApiKey(store: { apiKeys: ApiKeysRepository; accounts: AccountsRepository }, keyHash: string, now = Date.now()): Promise<ApiKeyRecord> {
  const record = await store.apiKeys.revoke(keyHash, new Date(now));
  await store.accounts.revokeKey(record.accountId, keyHash, now);
  return record;
}
