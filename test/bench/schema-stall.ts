/**
 * 7. Event-loop stalls from a hostile `response_schema` (issue 17): how long one request's
 * schema check, or one model output's check against it, holds the gateway's only thread.
 * Each case is a synchronous call timed around itself (nothing else can run meanwhile, so
 * its duration is the stall every other request waits out). In process, no host: cheap.
 *
 * Grown cases (an output that makes a backtracking regex run longer with each character)
 * stop growing once one step passes STOP_MS, so the same file measures code that is
 * exponential without running for hours.
 */
import { checkStructuredOutput } from '../../shared/compare/structured-output.js';
import { loadAjv } from '../../shared/contract/ajv.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { ValidationError } from '../../shared/errors.js';
import { round } from './stats.js';
import { check, type Benchmark, type Row } from './types.js';

const STOP_MS = 1_000;
/** "A few milliseconds" (issue 17): what a request may hold the thread for. */
const TARGET_MS = 10;

type Schema = Record<string, unknown>;
const object = (properties: Schema): Schema => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

/** Every keyword a string or number subschema can carry, so that each object costs ajv the most code. */
const heavyString = (i: number): Schema => ({ type: 'string', minLength: 1, maxLength: 90 + i, format: 'email', description: 'x' });
const heavyNumber = (i: number): Schema => ({ type: 'number', minimum: -i, maximum: 1e6, exclusiveMaximum: 1e7, multipleOf: 0.5 });

/** Schemas new to the gateway (a fresh salt each time, so no cache hit), the most costly shapes we could build. */
const SCHEMAS: Record<string, (salt: number, objects: number) => Schema> = {
  'flat properties, every keyword': (salt, n) =>
    object(Object.fromEntries(Array.from({ length: n - 2 }, (_, i) => [`p${salt}_${i}`, i % 2 ? heavyString(i) : heavyNumber(i)]))),
  'anyOf of objects': (salt, n) =>
    object({ x: { anyOf: Array.from({ length: Math.floor((n - 4) / 3) }, (_, i) => object({ [`k${salt}_${i}`]: heavyNumber(i) })) } }),
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

/** The schema of issue 17: flat string properties up to 63 KB of JSON (the old limit was 64 KB, nothing else). */
const BIG_SCHEMA_BYTES = 63 * 1024;
function bigSchema(salt: number): Schema {
  const names = Array.from({ length: 2_000 }, (_, i) => `p${salt}_${i}`);
  const build = (count: number) => object(Object.fromEntries(names.slice(0, count).map((name) => [name, { type: 'string' }])));
  let count = names.length;
  while (JSON.stringify(build(count)).length > BIG_SCHEMA_BYTES) count -= 10;
  return build(count);
}

/** Grown outputs: each step longer, against the schema that makes it costly. */
const OUTPUTS: { name: string; schema: Schema; output: (n: number) => string; lengths: number[] }[] = [
  {
    name: 'output "aaa…a!" against pattern ^(a+)+$',
    schema: object({ x: { type: 'string', pattern: '^(a+)+$' } }),
    output: (n) => JSON.stringify({ x: `${'a'.repeat(n)}!` }),
    lengths: [16, 18, 20, 22, 24, 26, 28, 10_000],
  },
  {
    name: 'output "```" + spaces + "x" (the fence parser)',
    schema: object({ x: { type: 'string' } }),
    output: (n) => `\`\`\`${' '.repeat(n)}x`,
    lengths: [250, 500, 1_000, 2_000, 200_000],
  },
  {
    name: 'output of "{" only',
    schema: object({ x: { type: 'string' } }),
    output: (n) => '{'.repeat(n),
    lengths: [1_000_000],
  },
];

function body(schema: Schema): Schema {
  return { prompt: 'x', models: ['fam_c-5.4'], response_schema: schema };
}

/** The stall of one request's schema check, and whether the request was accepted. */
function timeRequest(schema: Schema): { ms: number; accepted: boolean; refusal?: string } {
  const started = performance.now();
  try {
    validatePromptRequest(body(schema));
    return { ms: performance.now() - started, accepted: true };
  } catch (error) {
    const ms = performance.now() - started;
    if (!(error instanceof ValidationError)) throw error;
    return { ms, accepted: false, refusal: error.message };
  }
}

export const schemaStall: Benchmark = {
  id: 'schema-stall',
  title: '7. Event-loop stalls from a hostile response_schema',
  async run(context) {
    await loadAjv();
    const repeats = context.smoke ? 1 : 7;
    const rows: Row[] = [];
    let salt = Date.now() % 1_000_000;
    // The first compile of an ajv instance also compiles the meta-schema; not what a request pays afterwards.
    timeRequest(object({ warm: { type: 'string' } }));

    const objects = context.smoke ? 20 : 100;
    for (const [name, build] of Object.entries(SCHEMAS)) {
      let worst = 0;
      let accepted = true;
      for (let r = 0; r < repeats; r++) {
        const timed = timeRequest(build(salt++, objects));
        worst = Math.max(worst, timed.ms);
        accepted &&= timed.accepted;
      }
      rows.push({ case: `schema: ${name}, ${objects} objects`, size: objects, accepted: accepted ? 'yes' : 'no (400)', worstMs: round(worst, 2) });
    }
    {
      let worst = 0;
      let accepted = true;
      for (let r = 0; r < (context.smoke ? 1 : 3); r++) {
        const timed = timeRequest(bigSchema(salt++));
        worst = Math.max(worst, timed.ms);
        accepted &&= timed.accepted;
      }
      const properties = Object.keys(bigSchema(salt).properties as Schema).length;
      rows.push({ case: 'schema: flat string properties, 63 KB', size: properties, accepted: accepted ? 'yes' : 'no (400)', worstMs: round(worst, 2) });
    }

    for (const grown of OUTPUTS) {
      const checked = validatePromptRequest(body(grown.schema));
      if (!checked.validateOutput) throw new Error(`schema-stall: ${grown.name}: no validator`);
      let worst = 0;
      let reached = 0;
      for (const n of context.smoke ? grown.lengths.slice(0, 1) : grown.lengths) {
        const output = grown.output(n);
        const started = performance.now();
        checkStructuredOutput(output, checked.validateOutput);
        const ms = performance.now() - started;
        worst = Math.max(worst, ms);
        reached = n;
        if (ms > STOP_MS) break;
      }
      const stopped = reached !== (context.smoke ? grown.lengths[0] : grown.lengths.at(-1));
      rows.push({ case: `${grown.name}${stopped ? ' (stopped growing: past 1 s)' : ''}`, size: reached, accepted: 'yes', worstMs: round(worst, 2) });
    }

    const worst = Math.max(...rows.map((r) => r.worstMs as number));
    return {
      status: 'ok',
      notes: [],
      method: `schemas new to the gateway (no cache hit), ${repeats} each, the worst kept; outputs grown until one step passes ${STOP_MS} ms; each figure is one synchronous call (the whole request check, or one output check) timed around itself`,
      columns: [
        { key: 'case', label: 'case' },
        { key: 'size', label: 'objects / properties / characters' },
        { key: 'accepted', label: 'schema accepted' },
        { key: 'worstMs', label: 'worst stall ms', digits: 2 },
      ],
      rows,
      targets: [check('worst event-loop stall from a hostile response_schema', '<=', TARGET_MS, round(worst, 2), 'ms')],
    };
  },
};
