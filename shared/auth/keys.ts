import { createHash, randomBytes } from 'node:crypto';

/** Issued keys: `mcg_` + 32 random bytes in base64url (43 characters). */
const KEY_PREFIX = 'mcg_';
/** What the authorizer accepts as a key at all (issued keys, and pinned DEMO_API_KEY values). */
const KEY_SHAPE = /^[A-Za-z0-9._~+/=-]{16,256}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_SHAPE.test(key);
}

export function keyPrefix(key: string): string {
  return key.slice(0, 8);
}

/**
 * The key from an `Authorization` header value, or undefined when the header is missing
 * or malformed (not `Bearer <key>`, or a key of the wrong shape).
 */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  return key && isWellFormedKey(key) ? key : undefined;
}
