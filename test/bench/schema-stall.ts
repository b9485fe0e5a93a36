/**
 * 7. Event-loop stalls from a hostile `response_schema` (issue 17): how long one request's
 * schema check, or one model output's check against it, holds the gateway's main thread.
 * Callers' schemas are compiled, and outputs checked, on the schema thread
 * (shared/contract/schema-checker.ts): what stays on the main thread is the synchronous
 * request check (`validatePromptRequest`: the compile budget) and posting the job. Each
 * row has that stall ("after"), and the same work done on the main thread as before the
 * schema thread (`before`: the compile and the check called in this thread, as main did),
 * each a synchronous call timed around itself (nothing else can run meanwhile, so its
 * duration is the stall every other request waits out), and the round trip's wall time.
 *
 * Grown cases (an output that makes a backtracking regex run longer with each character)
 * stop growing once one step passes STOP_MS, so the same file measures code that is
 * exponential without running for hours.
 */
import { checkStructuredOutput } from '../../shared/contract/structured-output.js';
import { loadAjv } from '../../shared/contract/ajv.js';
import { checkResponseSchema } from '../../shared/contract/response-schema.js';
import { compileResponseSchema } from '../../shared/contract/schema-compile.js';
import { compileRequestSchema, SchemaChecker } from '../../shared/contract/schema-checker.js';
import type { PromptRequest } from '../../shared/contract/types.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { ValidationError } from '../../shared/errors.js';
import { COSTLY_SCHEMAS, object } from '../support/costly-schemas.js';
import { round } from './stats.js';
import { check, type Benchmark, type Row } from './types.js';

const STOP_MS = 1_000;
/** "A few milliseconds" (issue 17): what a request may hold the thread for. */
const TARGET_MS = 10;

type Schema = Record<string, unknown>;

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

const since = (started: number) => performance.now() - started;

/** What one request's schema costs the main thread before the schema thread: the request check and ajv's compile, in this thread as main did. */
function timeBefore(schema: Schema): number {
  const started = performance.now();
  if (checkResponseSchema(schema, '/response_schema').length === 0) compileResponseSchema(JSON.stringify(schema), '/response_schema');
  return since(started);
}

/** What it costs the main thread now (the request check, then the job posted), and the round trip until the schema thread answered. */
async function timeAfter(schema: Schema, checker: SchemaChecker): Promise<{ afterMs: number; roundTripMs: number; accepted: boolean }> {
  const started = performance.now();
  let request: PromptRequest;
  try {
    request = validatePromptRequest(body(schema));
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { afterMs: since(started), roundTripMs: 0, accepted: false };
  }
  const compiling = compileRequestSchema(request, checker);
  const afterMs = since(started);
  await compiling;
  return { afterMs, roundTripMs: since(started), accepted: true };
}

/** What the main thread spends on one round trip to the schema thread (an output checked against a cached schema): its event loop's active time. */
async function roundTripCost(checker: SchemaChecker, count: number): Promise<{ mainMs: number; wallMs: number }> {
  const schema = JSON.stringify(object({ answer: { type: 'string' } }));
  await checker.check('{"answer":"warm"}', schema);
  const utilization = performance.eventLoopUtilization();
  const started = performance.now();
  for (let i = 0; i < count; i++) await checker.check(`{"answer":"${i}"}`, schema);
  const used = performance.eventLoopUtilization(utilization);
  return { mainMs: used.active / count, wallMs: since(started) / count };
}

export const schemaStall: Benchmark = {
  id: 'schema-stall',
  title: '7. Event-loop stalls from a hostile response_schema',
  async run(context) {
    await loadAjv();
    const checker = new SchemaChecker();
    try {
      return await measure(context.smoke, checker);
    } finally {
      await checker.close();
    }
  },
};

async function measure(smoke: boolean, checker: SchemaChecker): Promise<Awaited<ReturnType<Benchmark['run']>>> {
  const repeats = smoke ? 1 : 7;
  const rows: Row[] = [];
  let salt = Date.now() % 1_000_000;
  // The first compile of an ajv instance also compiles the meta-schema, and the thread starts: not what a request pays afterwards.
  await timeAfter(object({ warm: { type: 'string' } }), checker);
  timeBefore(object({ warm: { type: 'string' } }));

  // The same schemas both ways (each thread has its own cache: new to both). Every "after"
  // first, then every "before": the garbage ajv leaves in this thread would otherwise be
  // collected during an "after".
  const objects = smoke ? 20 : 100;
  const cases: { name: string; size: number; schemas: Schema[] }[] = Object.entries(COSTLY_SCHEMAS).map(([name, build]) => ({
    name: `${name}, ${objects} objects`,
    size: objects,
    schemas: Array.from({ length: repeats }, () => build(salt++, objects)),
  }));
  cases.push({
    name: 'flat string properties, 63 KB',
    size: Object.keys(bigSchema(salt).properties as Schema).length,
    schemas: Array.from({ length: smoke ? 1 : 3 }, () => bigSchema(salt++)),
  });
  const after: { afterMs: number; roundTripMs: number; accepted: boolean }[] = [];
  for (const { schemas } of cases) {
    const worst = { afterMs: 0, roundTripMs: 0, accepted: true };
    for (const schema of schemas) {
      const timed = await timeAfter(schema, checker);
      worst.afterMs = Math.max(worst.afterMs, timed.afterMs);
      worst.roundTripMs = Math.max(worst.roundTripMs, timed.roundTripMs);
      worst.accepted &&= timed.accepted;
    }
    after.push(worst);
  }
  cases.forEach(({ name, size, schemas }, i) => {
    const { afterMs, roundTripMs, accepted } = after[i]!;
    rows.push({
      case: `schema: ${name}`,
      size,
      accepted: accepted ? 'yes' : 'no (400)',
      beforeMs: round(Math.max(...schemas.map(timeBefore)), 2),
      worstMs: round(afterMs, 2),
      roundTripMs: round(roundTripMs, 2),
    });
  });

  for (const grown of OUTPUTS) {
    const schema = JSON.stringify(grown.schema);
    const { validate } = compileResponseSchema(schema, '/response_schema');
    if (!validate) throw new Error(`schema-stall: ${grown.name}: no validator`);
    const worst = { beforeMs: 0, afterMs: 0, roundTripMs: 0 };
    let reached = 0;
    for (const n of smoke ? grown.lengths.slice(0, 1) : grown.lengths) {
      const output = grown.output(n);
      let started = performance.now();
      checkStructuredOutput(output, validate);
      const beforeMs = since(started);
      started = performance.now();
      const checking = checker.check(output, schema);
      worst.afterMs = Math.max(worst.afterMs, since(started));
      await checking;
      worst.roundTripMs = Math.max(worst.roundTripMs, since(started));
      worst.beforeMs = Math.max(worst.beforeMs, beforeMs);
      reached = n;
      if (beforeMs > STOP_MS) break;
    }
    const stopped = reached !== (smoke ? grown.lengths[0] : grown.lengths.at(-1));
    rows.push({
      case: `${grown.name}${stopped ? ' (before stopped growing: past 1 s)' : ''}`,
      size: reached,
      accepted: 'yes',
      beforeMs: round(worst.beforeMs, 2),
      worstMs: round(worst.afterMs, 2),
      roundTripMs: round(worst.roundTripMs, 2),
    });
  }

  const cost = await roundTripCost(checker, smoke ? 20 : 500);
  rows.push({
    case: 'one output check, small, cached schema (per round trip)',
    size: 1,
    accepted: 'yes',
    beforeMs: null,
    worstMs: round(cost.mainMs, 3),
    roundTripMs: round(cost.wallMs, 3),
  });

  const worst = Math.max(...rows.map((r) => r.worstMs as number));
  const worstBefore = Math.max(...rows.map((r) => (r.beforeMs as number | null) ?? 0));
  return {
    status: 'ok',
    notes: [`worst main-thread stall before the schema thread (compile and check on the main thread): ${round(worstBefore, 2)} ms; after: ${round(worst, 2)} ms`],
    method: `schemas new to the gateway (no cache hit), ${repeats} each, the worst kept; outputs grown until one step passes ${STOP_MS} ms; each stall is one synchronous call timed around itself; "before" runs the compile or check on this thread as main did, "after" is what the main thread does now (the request check and posting the job); the round trip is the wall time until the schema thread answered; the last row is the main thread's event-loop active time per round trip`,
    columns: [
      { key: 'case', label: 'case' },
      { key: 'size', label: 'objects / properties / characters' },
      { key: 'accepted', label: 'schema accepted' },
      { key: 'beforeMs', label: 'stall before ms', digits: 2 },
      { key: 'worstMs', label: 'main-thread stall ms', digits: 2 },
      { key: 'roundTripMs', label: 'round trip ms', digits: 2 },
    ],
    rows,
    targets: [check('worst event-loop stall from a hostile response_schema', '<=', TARGET_MS, round(worst, 2), 'ms')],
  };
}
