import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Carried, ClaimCheckStore } from './types.js';

const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * `value` inline when its JSON takes at most `inlineBytes` (UTF-8), otherwise stored under
 * `key` and carried by reference. The caller sizes `inlineBytes` so that every state the
 * value travels through stays under Step Functions' 256 KiB.
 *
 * The stored copy is encrypted (AES-256-GCM) with a key of its own that only the reference
 * carries, in the request's states and memory. The request deletes its objects when it
 * ends; should it die first, what is left in the store until the bucket's expiry rule
 * removes it cannot be read: no prompt or output outlives the request in readable form.
 */
export async function carry<T>(store: ClaimCheckStore, key: string, value: T, inlineBytes: number): Promise<Carried<T>> {
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= inlineBytes) return { value };
  const secret = randomBytes(32);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(CIPHER, secret, iv);
  const sealed = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  await store.put(key, Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64'));
  return { claim: key, bytes, key: secret.toString('base64') };
}

/**
 * The value a Carried stands for, read back from the store (and decrypted) when it travelled by
 * reference. `turn`, given, is awaited between the read and the decoding (base64, decryption and
 * parse: tens of ms for megabytes), so that many values read together decode in turns of the
 * event loop (a judge task's preparingInTurns).
 */
export async function retrieve<T>(store: ClaimCheckStore, carried: Carried<T>, turn?: () => Promise<void>): Promise<T> {
  if ('value' in carried) return carried.value;
  const stored = await store.get(carried.claim);
  await turn?.();
  if (carried.key === undefined) return JSON.parse(stored) as T; // written before encryption
  const packed = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv(CIPHER, Buffer.from(carried.key, 'base64'), packed.subarray(0, IV_BYTES));
  decipher.setAuthTag(packed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const json = Buffer.concat([decipher.update(packed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  return JSON.parse(json) as T;
}

/** Whether a value travelled by reference. */
export function isClaimed<T>(carried: Carried<T>): carried is Extract<Carried<T>, { claim: string }> {
  return 'claim' in carried;
}
