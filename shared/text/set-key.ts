import { createHash } from 'node:crypto';

/**
 * The longest string a Set or Map is given as it is: V8 hashes a string over 16,383
 * characters by its length alone, so a Set of many such strings of one length compares each
 * with all the others (300 names of 16,400 characters took 200 ms).
 */
const LONGEST_PLAIN_KEY = 4_096;

/**
 * The key `text` is compared by in a Set or Map: itself, or a longer one's SHA-256, of its
 * UTF-8 (of its UTF-16 code units where it holds half of a surrogate pair, which UTF-8 cannot
 * spell; the encoding is part of the key): two texts share a key only if they are equal.
 */
export function setKey(text: string): string {
  if (text.length <= LONGEST_PLAIN_KEY) return text;
  const encoding = text.isWellFormed() ? 'utf8' : 'utf16le';
  return `\u0000${encoding}:${createHash('sha256').update(text, encoding).digest('base64')}`;
}
