import { UnauthorizedError } from '../errors.js';
import type { ApiKeysRepository } from '../storage/api-keys.js';
import { bearerKey, hashApiKey } from './keys.js';

export interface Principal {
  accountId: string;
}

/**
 * `Authorization: Bearer <key>` to the account it belongs to. Keys are looked up by their
 * SHA-256 only; missing, malformed, unknown and revoked keys are all the same 401.
 */
export async function authenticate(authorization: string | undefined, keys: ApiKeysRepository): Promise<Principal> {
  const key = bearerKey(authorization);
  if (!key) throw new UnauthorizedError();
  const record = await keys.get(hashApiKey(key));
  if (!record || record.revokedAt) throw new UnauthorizedError();
  return { accountId: record.accountId };
}
