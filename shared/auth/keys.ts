import { createHash, randomBytes } from 'node:crypto';

/** Issued keys: `mcg_` + 32 random bytes in base64url (43 characters). */
const KEY_PREFIX = 'mcg_';
/** What the authorizer accepts as a key at all (issued keys, and pinned DEMO_API_KEY values). */
const KEY_CHARACTERS = '[A-Za-z0-9._~+/=-]{16,256}';
const KEY_SHAPE = new RegExp(`^${KEY_CHARACTERS}$`);

/**
 * The one spelling of an `Authorization` header the gateway takes: `Bearer`, in any case
 * (RFC 9110: a scheme is case-insensitive), one space, the key. One spelling per key, so
 * that what counts requests by the header's value (WAF's per-key rule, the authorizer's
 * cache) counts each key once: with spaces or a trailing blank allowed, every spelling of
 * a key was a bucket of its own. Written without flags: API Gateway's authorizer takes it
 * as its validation expression (infra/stack/api.ts), and refuses any other header unread.
 */
export const AUTHORIZATION_PATTERN = `^[Bb][Ee][Aa][Rr][Ee][Rr] ${KEY_CHARACTERS}$`;
const AUTHORIZATION = new RegExp(AUTHORIZATION_PATTERN);

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_SHAPE.test(key);
}

/**
 * What names a key in listings and the local host's banner, stored beside its hash: 4
 * characters of it after the `mcg_` issued keys start with. A pinned DEMO_API_KEY (16
 * characters or more, any shape) shows no more than its first 4: 8 had printed and stored
 * half of a 16-character one.
 */
export function keyPrefix(key: string): string {
  return key.slice(0, key.startsWith(KEY_PREFIX) ? KEY_PREFIX.length + 4 : 4);
}

/**
 * The key from an `Authorization` header value, or undefined when the header is missing
 * or malformed (not AUTHORIZATION_PATTERN: `Bearer <key>`, one space, a key of the right shape).
 */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header || !AUTHORIZATION.test(header)) return undefined;
  return header.slice('Bearer '.length);
}
