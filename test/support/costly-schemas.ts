/**
 * The costliest `response_schema`s the compile budget admits that we could build (issue 17):
 * for benchmark 7 and the tests that the main thread stays responsive while one compiles.
 */
type Schema = Record<string, unknown>;
export const object = (properties: Schema): Schema => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

/** Every keyword a string or number subschema can carry, so that each object costs ajv the most code. */
export const heavyString = (i: number): Schema => ({ type: 'string', minLength: 1, maxLength: 90 + i, format: 'email', description: 'x' });
export const heavyNumber = (i: number): Schema => ({ type: 'number', minimum: -i, maximum: 1e6, exclusiveMaximum: 1e7, multipleOf: 0.5 });

/** Schemas new to the gateway (a fresh salt each time, so no cache hit), the most costly shapes we could build. */
export const COSTLY_SCHEMAS: Record<string, (salt: number, objects: number) => Schema> = {
  'flat properties, every keyword': (salt, n) => object(Object.fromEntries(Array.from({ length: n - 2 }, (_, i) => [`p${salt}_${i}`, i % 2 ? heavyString(i) : heavyNumber(i)]))),
  'anyOf of objects': (salt, n) => object({ x: { anyOf: Array.from({ length: Math.floor((n - 4) / 3) }, (_, i) => object({ [`k${salt}_${i}`]: heavyNumber(i) })) } }),
  'nested objects': (salt, n) => {
    const width = 3;
    const build = (budget: number, depth: number): Schema => {
      if (budget < 2 + width || depth > 8) return heavyString(salt % 7);
      const share = Math.floor((budget - 2) / width);
      return object(Object.fromEntries(Array.from({ length: width }, (_, i) => [`n${salt}_${i}`, build(share, depth + 1)])));
    };
    return build(n, 0);
  },
  /** As many patterns as allowed, the costliest to compile we found: Unicode classes, alternation, all the repetition allowed. */
  'patterns at every limit': (salt, n) => {
    const costly = (i: number) =>
      `^(?:\\p{L}|\\p{N}|\\p{P}|\\p{S}|\\p{M}|[\\s\\S]${salt % 10}${i})${i === 0 ? '{1,100}' : '+'}(?:\\p{Lu}\\p{Ll}|\\p{Nd}\\p{Sc}|[\\u0100-\\uFFFF]\\w)*$`.slice(0, 256);
    return object(Object.fromEntries(Array.from({ length: n - 2 }, (_, i) => [`s${salt}_${i}`, i < 10 ? { type: 'string', pattern: costly(i) } : heavyNumber(i)])));
  },
  '$ref to one definition from every property': (salt, n) => ({
    ...object(Object.fromEntries(Array.from({ length: n - 8 }, (_, i) => [`r${salt}_${i}`, { $ref: '#/$defs/d' }]))),
    $defs: { d: object({ a: heavyString(1), b: heavyNumber(2), c: heavyString(3) }) },
  }),
};
