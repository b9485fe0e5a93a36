import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Random bytes drawn from the system in one call per 4 KiB (400 IDs), not one call per ID. */
const pool = Buffer.alloc(4_096);
let poolOffset = pool.length;

function randomTen(): Buffer {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.subarray(poolOffset - 10, poolOffset);
}

/**
 * A ULID: 48 bits of milliseconds then 80 random bits, in Crockford base32, so IDs sort
 * by creation time as strings and never collide in practice.
 */
export function ulid(now = Date.now()): string {
  let time = '';
  let ms = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD.charAt(ms % 32) + time;
    ms = Math.floor(ms / 32);
  }
  const bytes = randomTen();
  let random = '';
  // 80 bits -> 16 characters of 5 bits.
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      random += CROCKFORD.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  return time + random;
}

/** The milliseconds a ULID (or a `pl_` request ID) was made at; NaN for a string that is neither. */
export function ulidTime(id: string): number {
  const time = id.replace(/^pl_/, '').slice(0, 10);
  if (time.length < 10) return Number.NaN;
  let ms = 0;
  for (const char of time) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) return Number.NaN;
    ms = ms * 32 + digit;
  }
  return ms;
}

export function promptLogId(now?: number): string {
  return `pl_${ulid(now)}`;
}
