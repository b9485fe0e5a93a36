import { BoundedMap } from '../bounded-map.js';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type { StructuredOutput } from './structured-output.js';
import { ServiceUnavailableError, ValidationError, type FieldError } from '../errors.js';
import { accountShare, scopedKey, type SchemaAnswer, type SchemaJob, type SchemaMessage } from './schema-protocol.js';
import type { PromptRequest } from './types.js';

/** How long one compile or check may run on the schema thread before the thread is ended (docs/structured-output.md). */
export const SCHEMA_DEADLINE_MS = 2_000;
/** Schemas SchemaChecker remembers as compiled: as many as the thread keeps compiled (schema-compile.ts, which the main thread does not load). */
const MAX_COMPILED = 100;
/** How long a new thread may take to load (tsx from source on a busy machine, ajv) before its first job is failed. */
const START_DEADLINE_MS = 15_000;

/**
 * `node:worker_threads`, loaded with the first schema thread: a process that never sees a
 * `response_schema` never loads it (3 ms of a Lambda cold start here). Synchronous, as
 * starting the thread is.
 */
const workerThreads = (): typeof import('node:worker_threads') => createRequire(import.meta.url)('node:worker_threads');

/** The schema thread did not answer: it stopped, or a job outran the deadline. */
export class SchemaThreadUnavailable extends Error {
  override name = 'SchemaThreadUnavailable';
}

/** A job before it is numbered. */
type Unnumbered = { [Op in SchemaJob['op']]: Omit<Extract<SchemaJob, { op: Op }>, 'id'> }[SchemaJob['op']];

/** A job and its lane: the account whose schema it compiles or whose output it checks, or UNSCOPED. */
type Job = { message: SchemaJob; lane: string; resolve: (answer: SchemaAnswer) => void; reject: (error: Error) => void };

/** The lane of the jobs that name no account (faults, and the tests' and the bench's checks), apart from every account's (an account's ID is never empty): the gateway's checks name their request's. */
const UNSCOPED = '';

/**
 * The schema thread seen from the main thread: compiles of callers' schemas and checks of
 * outputs against them are posted to one worker thread, which keeps the compiled
 * validators. Started on first need, `unref()`ed while idle (it never keeps a process
 * alive), started again after it stopped. One job is posted at a time (`running`, which
 * alone has a deadline: when the thread outruns it or dies, that job fails and the others
 * go to a new thread). The others wait in lanes, one an account's compiles and output
 * checks, one the jobs that name none, and the thread takes each lane's next job in
 * turn: an account sending new schemas without end (refused requests too, whose schema is
 * checked before the balance), or outputs that take the check its whole deadline, has one
 * job in the thread's turns, and another account's waits behind one of its jobs, not all
 * of them.
 */
export class SchemaChecker {
  private worker: Worker | undefined;
  private ready = false;
  private running: Job | undefined;
  /** The jobs not yet posted, by lane, the next lane to be served first. */
  private readonly waiting = new Map<string, Job[]>();
  private timer: NodeJS.Timeout | undefined;
  private nextId = 1;
  /** Threads started so far (a restart makes it 2): for the tests and the benchmark. */
  started = 0;
  /**
   * Schemas the thread compiled without a fault, by account and JSON, oldest dropped first:
   * compiled again they would pass again, so they are answered here, never queued behind
   * other requests' jobs (an evaluation sends one schema with every request; another
   * tenant's new schemas keep the thread busy meanwhile). Never one account's for another:
   * the quicker answer would tell it that the schema had been sent before. An account holds a
   * quarter of them at most: one sending new schemas without end pushes out its own.
   */
  private readonly compiled = new BoundedMap<string, true>(MAX_COMPILED, accountShare(MAX_COMPILED));

  constructor(private readonly options: { deadlineMs?: number; faults?: boolean } = {}) {}

  /**
   * The fields at fault in a schema that passed `checkResponseSchema` (none: it compiled),
   * `scope` the account that sent it (no cache of one account's serves another's). Rejects
   * with SchemaThreadUnavailable.
   */
  async compile(schemaJson: string, scope = ''): Promise<FieldError[]> {
    const key = scopedKey(scope, schemaJson);
    if (this.compiled.has(key)) return [];
    const { errors } = (await this.ask({ op: 'compile', schema: schemaJson, scope }, scope)) as { errors: FieldError[] };
    if (errors.length === 0) this.compiled.set(key, true);
    return errors;
  }

  /**
   * An output checked against the schema, with the validator compiled for `scope`, the
   * account that sent it (validatorOf; a check's time is inside the models phase, behind the
   * vendors' latency); never rejects: an unanswered check says so.
   */
  async check(output: string, schemaJson: string, scope = '', deadlineAt?: number): Promise<StructuredOutput> {
    try {
      return (await this.ask({ op: 'check', schema: schemaJson, output, scope }, scope, deadlineAt)) as StructuredOutput;
    } catch (error) {
      if (!(error instanceof SchemaThreadUnavailable)) throw error;
      return { conforms: false, errors: [`the output could not be checked: ${error.message}`] };
    }
  }

  /** Only with `faults`: a job that hangs the thread, ends it, or throws. */
  async fault(kind: 'hang' | 'crash' | 'throw'): Promise<SchemaAnswer> {
    return this.ask({ op: 'fault', kind }, UNSCOPED);
  }

  /** Ends the thread (its jobs fail); the next job starts another. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker) this.lose(worker, 'the schema thread was closed', false);
  }

  /**
   * A job's answer. With `deadlineAt` (a request's), it is not waited for past it: the job
   * leaves its lane if it is still there, and fails (one the thread is running is answered
   * within the thread's own deadline, unheard).
   */
  private ask(job: Unnumbered, lane: string, deadlineAt?: number): Promise<SchemaAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<SchemaAnswer>((resolve, reject) => {
      const waiting: Job = { message: { ...job, id: this.nextId++ } as SchemaJob, lane, resolve, reject };
      if (deadlineAt !== undefined) {
        timer = setTimeout(
          () => {
            this.withdraw(waiting);
            reject(new SchemaThreadUnavailable("the request's deadline passed before the check was done"));
          },
          Math.max(0, deadlineAt - Date.now()),
        );
      }
      const jobs = this.waiting.get(lane);
      if (jobs) jobs.push(waiting);
      else this.waiting.set(lane, [waiting]);
      this.next();
    });
    return timer === undefined ? answer : answer.finally(() => clearTimeout(timer));
  }

  /** A job taken out of its lane, if it is still waiting there. */
  private withdraw(job: Job): void {
    const jobs = this.waiting.get(job.lane);
    const at = jobs?.indexOf(job) ?? -1;
    if (at === -1) return;
    jobs!.splice(at, 1);
    if (jobs!.length === 0) this.waiting.delete(job.lane);
  }

  /** Posts the next lane's next job, the thread free; that lane goes to the back of the turns. */
  private next(): void {
    if (this.running) return;
    const first = this.waiting.entries().next();
    if (first.done) {
      this.worker?.unref();
      return;
    }
    const [lane, jobs] = first.value;
    let worker: Worker;
    try {
      worker = this.thread();
    } catch (error) {
      // Its file missing, or flags a worker refuses: the jobs fail as any unanswered one does (a 503, not a 500).
      this.failWaiting(`the schema thread could not start: ${(error as Error).message}`);
      return;
    }
    const job = jobs.shift() as Job;
    this.waiting.delete(lane);
    if (jobs.length > 0) this.waiting.set(lane, jobs);
    this.running = job;
    worker.ref(); // waiting for an answer keeps the process alive
    worker.postMessage(job.message);
    this.arm();
  }

  private failWaiting(reason: string): void {
    const jobs = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const job of jobs) job.reject(new SchemaThreadUnavailable(reason));
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // The parent's flags are inherited, unless one is `--input-type` (a `node -e` parent's), which a worker given a file
    // refuses to start with. Only then are they passed explicitly: Node validates explicit flags, and refuses the V8 ones
    // a Lambda runtime starts node with (`--max-old-space-size` and the like).
    const inputType = process.execArgv.some((flag) => flag.startsWith('--input-type'));
    const execArgv = inputType ? process.execArgv.filter((flag) => !flag.startsWith('--input-type')) : undefined;
    const worker = new (workerThreads().Worker)(threadUrl(), { ...(execArgv ? { execArgv } : {}), workerData: { faults: this.options.faults === true } });
    worker.unref();
    this.worker = worker;
    this.ready = false;
    this.started++;
    worker.on('message', (message: SchemaMessage) => this.answered(worker, message));
    // An uncaught error ends the thread: 'exit' follows, and handles it.
    worker.on('error', () => undefined);
    worker.on('exit', (code) => this.lose(worker, `the schema thread stopped (exit code ${code})`));
    return worker;
  }

  /** The deadline of the job at the head: a new thread's start is allowed longer. */
  private arm(): void {
    clearTimeout(this.timer);
    const worker = this.worker;
    if (!worker || !this.running) return;
    const ms = this.ready ? (this.options.deadlineMs ?? SCHEMA_DEADLINE_MS) : START_DEADLINE_MS;
    this.timer = setTimeout(() => this.lose(worker, `the check ran past its ${ms} ms deadline`), ms);
    this.timer.unref();
  }

  private answered(worker: Worker, message: SchemaMessage): void {
    if (worker !== this.worker) return;
    if ('ready' in message) {
      this.ready = true;
      this.arm();
      return;
    }
    const job = this.running;
    if (job?.message.id !== message.id) throw new Error('the schema thread answered out of order');
    this.running = undefined;
    clearTimeout(this.timer);
    job.resolve(message.answer);
    this.next();
  }

  /** The thread is gone or must go: the job it was running fails, the others go to a new thread (unless closing). */
  private lose(worker: Worker, reason: string, restart = true): void {
    if (worker !== this.worker) return;
    clearTimeout(this.timer);
    this.worker = undefined;
    void worker.terminate();
    const running = this.running;
    this.running = undefined;
    running?.reject(new SchemaThreadUnavailable(reason));
    if (restart) this.next();
    else this.failWaiting(reason);
  }
}

/**
 * Where the thread's code is. From source (this file is .ts): the `.mjs` beside it, which
 * has tsx compile schema-thread.ts. Bundled (infra/stack/bundle.ts): `schema-worker.mjs`
 * at the bundle's root, beside `index.mjs`; this code is in index.mjs or in `chunks/`.
 */
function threadUrl(): URL {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return new URL('./schema-worker.mjs', here);
  return new URL(here.includes('/chunks/') ? '../schema-worker.mjs' : './schema-worker.mjs', here);
}

let shared: SchemaChecker | undefined;

/** The process's one schema thread (started on the first `response_schema`). */
export function schemaChecker(): SchemaChecker {
  shared ??= new SchemaChecker();
  return shared;
}

/**
 * The asynchronous half of the request check, run after `validatePromptRequest` and
 * before anything is reserved or sent: the schema thread compiles the `response_schema`
 * for `scope`, the account that sent it.
 * A schema it refuses is a 400 naming the field; a thread that cannot answer is a 503
 * (the gateway's fault, not the caller's: the schema passed the compile budget).
 */
export async function compileRequestSchema(request: PromptRequest, checker: SchemaChecker = schemaChecker(), scope = ''): Promise<void> {
  if (request.outputSchema === undefined) return;
  let errors: FieldError[];
  try {
    errors = await checker.compile(request.outputSchema, scope);
  } catch (error) {
    if (!(error instanceof SchemaThreadUnavailable)) throw error;
    throw new ServiceUnavailableError(`The response_schema could not be checked (${error.message}); retry the request`, 1, { cause: error });
  }
  if (errors.length > 0) throw new ValidationError(errors);
}
