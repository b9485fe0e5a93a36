/**
 * The schema thread: compiles callers' `response_schema`s and checks model outputs
 * against them, so that neither ever runs on the main thread (docs/structured-output.md).
 * One message at a time, answered in the order received (schema-checker.ts relies on it).
 * Loaded from `schema-worker.mjs` (from source) or bundled as `schema-worker.mjs` (Lambda).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkStructuredOutput } from './structured-output.js';
import { loadAjv } from './ajv.js';
import { compileResponseSchema, validatorOf } from './schema-compile.js';
import type { SchemaAnswer, SchemaJob } from './schema-protocol.js';

const port = parentPort;
if (!port) throw new Error('schema-thread.ts runs as a worker thread only');
const faults = (workerData as { faults?: boolean } | undefined)?.faults === true;

await loadAjv();

port.on('message', (job: SchemaJob) => {
  port.postMessage({ id: job.id, answer: answerOrRefuse(job) });
});
port.postMessage({ ready: true });

/**
 * A job that throws is answered, not left to end the thread: every request that sent the
 * same input would otherwise restart it, and fail the checks of other requests in flight.
 */
function answerOrRefuse(job: SchemaJob): SchemaAnswer {
  try {
    return answer(job);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (job.op === 'compile') return { errors: [{ field: '/response_schema', message: `could not be compiled: ${message}` }] };
    return { conforms: false, errors: [`the output could not be checked: ${message}`] };
  }
}

function answer(job: SchemaJob): SchemaAnswer {
  switch (job.op) {
    case 'compile':
      return { errors: compileResponseSchema(job.schema, '/response_schema', job.scope).errors };
    case 'check': {
      const { validate } = validatorOf(job.schema, job.scope);
      if (!validate) return { conforms: false, errors: ['the response_schema could not be compiled'] };
      return checkStructuredOutput(job.output, validate);
    }
    case 'fault':
      // Only for the tests of a thread that hangs or dies mid-check (test/unit/schema-checker.test.ts).
      if (!faults) return { conforms: false, errors: ['faults are not enabled'] };
      if (job.kind === 'crash') process.exit(1);
      if (job.kind === 'throw') throw new Error('a job that throws');
      for (;;) {
        // hang: what a runaway validation looks like from the main thread
      }
  }
}
