import type { Carried, ClaimCheckStore } from './types.js';

/**
 * `value` inline when its JSON takes at most `inlineBytes` (UTF-8), otherwise stored under
 * `key` and carried by reference. The caller sizes `inlineBytes` so that every state the
 * value travels through stays under Step Functions' 256 KiB.
 */
export async function carry<T>(store: ClaimCheckStore, key: string, value: T, inlineBytes: number): Promise<Carried<T>> {
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= inlineBytes) return { value };
  await store.put(key, json);
  return { claim: key, bytes };
}

/** The value a Carried stands for, read back from the store when it travelled by reference. */
export async function retrieve<T>(store: ClaimCheckStore, carried: Carried<T>): Promise<T> {
  if ('value' in carried) return carried.value;
  return JSON.parse(await store.get(carried.claim)) as T;
}

/** Whether a value travelled by reference. */
export function isClaimed<T>(carried: Carried<T>): carried is { claim: string; bytes: number } {
  return 'claim' in carried;
}
