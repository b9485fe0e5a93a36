/** A parsed JSON object, as the protocol modules read request bodies. */
export type Json = Record<string, unknown>;

export function isObject(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
