import { BoundedMap } from '../bounded-map.js';
import { decimalDigits } from '../text/decimal.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FieldError } from '../errors.js';
import { createAjv, type Ajv } from './ajv.js';
import { linearPatternProblem, linearRegExp, linearRegExpIn, patternSyntaxProblem } from './linear-regexp.js';
import { walkSchema } from './response-schema.js';
import { accountShare, scopedKey } from './schema-protocol.js';

/** ajv's options for callers' schemas: a separate set from ours, so that their keywords never mix. */
const OPTIONS = {
  strict: false,
  // The first error only: collecting every one, a check tried each failing branch of an `anyOf`
  // for every item and grew with the square of the output (10 KB of items, six `$defs` each an
  // `anyOf` of two references: 3.2 s on the thread every tenant shares; 2 ms now for 100 KB).
  allErrors: false,
  // `format` is an annotation here: ajv's format checks are regexes of their own, and vendors do not enforce most formats either.
  validateFormats: false,
  // Patterns run on RE2 (linear time), never on V8's backtracking engine. ajv's optimising
  // pass over the generated code halves what a compile costs the thread, for a validator
  // that is run once an output (measured: 100 properties, 5.8 ms instead of 10.7 ms).
  code: { regExp: linearRegExp, optimize: false },
  // A `$ref` compiles to one function called from each use: inlined, a subschema referenced n times is compiled n times.
  inlineRefs: false,
  // A property is the output's own: otherwise `required: ["constructor"]` (or `__proto__`) is met by every object, which inherits it.
  ownProperties: true,
  // A number is finite: 1e400 in an output, read as Infinity, had conformed to `type: number` and been answered as null.
  strictNumbers: true,
} as const;

/** Digits a whole number may have and still be exact in a double (below 2^53), its sign counted. */
const EXACT_DIGITS = 15;

/**
 * `multipleOf` as decimals read it, exactly: the output's number and the step as the decimals
 * JSON wrote them, scaled to whole numbers at one scale, in doubles where both stay exact (most
 * numbers), else in BigInt. ajv's check divides in binary floating point, where 0.07 is no
 * multiple of 0.01 (a price in cents had not conformed), and its `multipleOfPrecision` tolerance
 * refused multiples past a million and took numbers a billionth off one. The step's decimal is
 * read once a schema; a number JSON cannot hold as one (1e400, read as Infinity) is none.
 */
function decimalMultipleOf(step: number) {
  const unit = decimalDigits(step);
  // A whole number below this, scaled to the step's decimals, stays exact in a double: no text to read.
  const wholeBelow = unit.power <= 0 && -unit.power < EXACT_DIGITS && unit.digits.length <= EXACT_DIGITS ? 10 ** (EXACT_DIGITS + unit.power) : 0;
  const unitWhole = Number(unit.digits);
  const check = (data: number): boolean => {
    if (Number.isInteger(data) && Math.abs(data) < wholeBelow) return (data * 10 ** -unit.power) % unitWhole === 0 || fail(check, 'multipleOf', `must be multiple of ${step}`);
    if (!Number.isFinite(data)) return fail(check, 'multipleOf', 'must be a finite number');
    // Both as whole numbers of the smaller power of ten.
    const value = decimalDigits(data);
    const power = Math.min(value.power, unit.power);
    const valueShift = value.power - power;
    const unitShift = unit.power - power;
    const multiple =
      value.digits.length + valueShift <= EXACT_DIGITS && unit.digits.length + unitShift <= EXACT_DIGITS
        ? (Number(value.digits) * 10 ** valueShift) % (Number(unit.digits) * 10 ** unitShift) === 0
        : (BigInt(value.digits) * 10n ** BigInt(valueShift)) % (BigInt(unit.digits) * 10n ** BigInt(unitShift)) === 0n;
    return multiple || fail(check, 'multipleOf', `must be multiple of ${step}`);
  };
  check.errors = [] as Partial<ErrorObject>[];
  return check;
}

/** Sets a keyword check's one error, for ajv to report; false. */
function fail(check: { errors: Partial<ErrorObject>[] }, keyword: string, message: string, params?: Record<string, unknown>): false {
  check.errors = [{ keyword, message, ...(params ? { params } : {}) }];
  return false;
}

/** The values of one output, numbered by what they are: equal values (in JSON Schema's sense), equal numbers. */
interface Interned {
  /** A value's key (its kind and content, an array's or object's children by their numbers) → its number. */
  ids: Map<string, number>;
  /** The number of each array and object already seen. */
  nodes: WeakMap<object, number>;
}

/** Each output's interned values, by its root: the `uniqueItems` of every level of one output share them. */
const internedByOutput = new WeakMap<object, Interned>();

/**
 * A value's number: equal for values JSON Schema calls equal (an object's keys in any order,
 * 1 and 1.0, -0 and 0), distinct otherwise (Infinity, read from 1e400, is not null). An array
 * or object is keyed by its children's numbers, each worked out once an output: keyed by their
 * whole JSON, nested arrays of `uniqueItems` had each serialised everything below them again
 * (a 430 KiB output held the schema thread to its deadline).
 */
function valueId(value: unknown, interned: Interned): number {
  let key: string;
  if (value === null || typeof value !== 'object') {
    key = typeof value === 'string' ? `s${value}` : typeof value === 'number' && !Number.isFinite(value) ? `n${value}` : `${typeof value}${JSON.stringify(value)}`;
  } else {
    const known = interned.nodes.get(value);
    if (known !== undefined) return known;
    const record = value as Record<string, unknown>;
    key = Array.isArray(value)
      ? `[${value.map((item) => valueId(item, interned)).join(',')}]`
      : `{${Object.keys(record)
          .sort()
          .map((name) => `${JSON.stringify(name)}:${valueId(record[name], interned)}`)
          .join(',')}}`;
  }
  let id = interned.ids.get(key);
  if (id === undefined) {
    id = interned.ids.size;
    interned.ids.set(key, id);
  }
  if (value !== null && typeof value === 'object') interned.nodes.set(value, id);
  return id;
}

/**
 * `uniqueItems` in one pass: each item numbered by what it is (valueId), the numbers in a Map.
 * ajv's own compares items of other than scalar types pairwise (quadratic in the output), and its
 * one pass over scalar items skips an item of another type than `items`' (two alike in
 * `prefixItems` had conformed) and keeps its keys in an object, where `"__proto__"` is no key
 * (two had conformed).
 */
function uniqueItems(unique: boolean) {
  const check = (data: unknown[], context?: { rootData?: unknown }): boolean => {
    const root = context?.rootData;
    let interned = root !== null && typeof root === 'object' ? internedByOutput.get(root) : undefined;
    if (interned === undefined) {
      interned = { ids: new Map(), nodes: new WeakMap() };
      if (root !== null && typeof root === 'object') internedByOutput.set(root, interned);
    }
    const seen = new Map<number, number>();
    for (const [index, item] of data.entries()) {
      const id = valueId(item, interned);
      const first = seen.get(id);
      if (first !== undefined) return fail(check, 'uniqueItems', `must NOT have duplicate items (items ## ${first} and ${index} are identical)`, { i: index, j: first });
      seen.set(id, index);
    }
    return true;
  };
  check.errors = [] as Partial<ErrorObject>[];
  return unique ? check : () => true;
}

/** `ajv` with the gateway's `multipleOf` and `uniqueItems` in place of its own. */
function withGatewayKeywords(ajv: Ajv): Ajv {
  ajv.removeKeyword('multipleOf');
  ajv.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: true, compile: decimalMultipleOf });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, compile: uniqueItems });
  return ajv;
}

/**
 * Checks callers' schemas against JSON Schema 2020-12's meta-schemas, with validators
 * compiled once (after `loadAjv()`) and only ever run on a caller's schema: nothing of
 * it is registered or compiled. (ajv's `validateSchema` resolves a `$schema` it does not
 * know, a fragment of a meta-schema for example, and keeps it, compiled.)
 */
let metaSchemas: Ajv | undefined;
function checkAgainstMetaSchema(schema: Record<string, unknown>): void {
  metaSchemas ??= createAjv(OPTIONS);
  const $schema = schema.$schema;
  if ($schema !== undefined && typeof $schema !== 'string') throw new Error('$schema must be a string');
  // ajv's default meta-schema when none is named; ajv stores ids without their empty fragment.
  const fallback = metaSchemas.opts.defaultMeta ?? metaSchemas.defaultMeta();
  const id = $schema === undefined ? (typeof fallback === 'string' ? fallback : undefined) : $schema.replace(/#$/, '');
  const known = id !== undefined && (Object.hasOwn(metaSchemas.schemas, id) || Object.hasOwn(metaSchemas.refs, id));
  const validate = known ? metaSchemas.getSchema(id) : undefined;
  if (!validate) throw new Error(`no schema with key or ref "${String($schema)}"`);
  if (!validate(schema)) throw new Error(`schema is invalid: ${metaSchemas.errorsText(validate.errors)}`);
}

/**
 * A compiler of its own for each caller's schema: ajv keeps in an instance every `$id` a
 * schema declares (nested ones too, which `removeSchema` leaves behind) and, in the scope
 * its code runs in, every schema and validator it compiled. Shared, one tenant's `$id`s
 * refused another's schemas ("already exists": it told them what was sent), and every
 * schema ever compiled stayed in memory. This one is dropped with its validator. It skips
 * the meta-schema check, done by `checkAgainstMetaSchema`: the meta-schema compiled anew for each
 * schema would cost 15 to 50 ms; an instance without it costs 0.1 to 0.5 ms.
 */
const compilerOfOne = (scope: string): Ajv => withGatewayKeywords(createAjv({ ...OPTIONS, code: { ...OPTIONS.code, regExp: linearRegExpIn(scope) }, validateSchema: false }));

/** Checks an output against the request's schema (on the schema thread). */
export type OutputValidator = ValidateFunction;

/**
 * Valid schemas already compiled (on the schema thread), by the account that sent them and
 * their JSON: the judge workflow checks the same request once per task, and callers repeat
 * their schemas. Not shared between accounts: a hit answers in microseconds where a compile
 * takes milliseconds, which would tell an account that another sent the same schema.
 * Bounded, oldest dropped first, an account's share at most a quarter.
 */
const MAX_COMPILED = 100;
const compiled = new BoundedMap<string, OutputValidator>(MAX_COMPILED, accountShare(MAX_COMPILED));

/**
 * The validator of a schema, for an output check: the one compiled for the account that sent
 * it (`scope`: in the api function its request compiled it just before, and an account's
 * share of the cache keeps it there, however many new schemas another sends), compiled now
 * where it is not there; the empty scope for the workflow's tasks, which name no account.
 */
export function validatorOf(json: string, scope = ''): { errors: FieldError[]; validate?: OutputValidator } {
  return compileResponseSchema(json, '/response_schema', scope);
}

/**
 * Compiles a schema that passed `checkResponseSchema` (given as its JSON): its patterns
 * (ECMA-262 syntax, then for RE2), then the whole with ajv. Returns the validator every output is checked with, or
 * the fields at fault. Runs on the schema thread: up to 160 ms of compiling (docs/structured-output.md).
 */
export function compileResponseSchema(json: string, path: string, scope = ''): { errors: FieldError[]; validate?: OutputValidator } {
  const key = scopedKey(scope, json);
  const known = compiled.get(key);
  if (known) return { errors: [], validate: known };
  const schema = JSON.parse(json) as Record<string, unknown>;
  // ajv reads a root `$id` as a string before it checks the schema against its meta-schema
  // (and again when it forgets the schema), so one that is not is refused here.
  if (schema.$id !== undefined && typeof schema.$id !== 'string') return { errors: [{ field: `${path}/$id`, message: 'must be a string' }] };
  const errors: FieldError[] = [];
  for (const { pattern, field } of walkSchema(schema, path).patterns) {
    const problem = patternSyntaxProblem(pattern) ?? linearPatternProblem(pattern, scope);
    if (problem) errors.push({ field, message: problem });
  }
  if (errors.length > 0) return { errors };
  try {
    // As ajv's own compile does (same messages), before anything is compiled.
    checkAgainstMetaSchema(schema);
    const validate = compilerOfOne(scope).compile(schema);
    compiled.set(key, validate);
    return { errors, validate };
  } catch (error) {
    return { errors: [{ field: path, message: `is not a valid JSON Schema: ${(error as Error).message}` }] };
  }
}
