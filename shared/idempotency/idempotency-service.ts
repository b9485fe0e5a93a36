import { createHash, createHmac } from 'node:crypto';
import { ValidationError, type FieldError } from '../errors.js';
import { lazyAsync } from '../lazy.js';
import { silentLog, type Log } from '../log.js';
import type { IdempotencyRepository } from '../storage/idempotency.js';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, ResponseNotRetainedError } from './errors.js';

/** Records answer retries for a day, checked by timestamp (TTL deletion is late, and absent locally). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * gzip and gunzip, loaded with the first Idempotency-Key (about 2 ms that a cold start
 * without one does not pay). Asynchronous, on libuv's thread pool: a stored answer can be
 * megabytes (32 models' outputs), which gzip's synchronous form would compress on the event
 * loop, holding every other request of the process (150 ms for 16 MB here).
 */
const zlib = lazyAsync(async () => {
  const [{ gzip, gunzip }, { promisify }] = await Promise.all([import('node:zlib'), import('node:util')]);
  return { gzip: promisify(gzip), gunzip: promisify(gunzip) };
});

/** Stored responses above this (gzipped) are not retained: DynamoDB items stop at 400 KB. */
const MAX_STORED_BYTES = 350_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
/**
 * Marks a body hash keyed with the Idempotency-Key, over the body as canonicalJson writes it.
 * Records written before hold KEYED_SORTED (keyed, the response schema as written by some
 * versions and sorted by older ones: either form matches) or, older, a bare SHA-256 of the
 * sorted form: each compared in its own form for its 24 hours.
 */
const KEYED = 'hmac-sha256-v2:';
const KEYED_SORTED = 'hmac-sha256:';

export type Begin<T> = { kind: 'run'; recordKey: string } | { kind: 'replay'; response: T };

/** A unit of work's answer, and the writes that follow it. */
export interface Outcome<T> {
  response: T;
  /**
   * Whether a retry with the key should get this answer rather than run again (the default).
   * False for an answer that charged nothing and holds nothing a retry could want (every
   * model cancelled before its vendor, or failed): its key is then freed, as after a
   * refusal, and its writes charge nothing.
   */
  replayable?: boolean;
  /**
   * The writes that follow the answer, resolving with the micro-credits they charged where
   * they say. `charge` false: the work must charge nothing (its answer could not be recorded,
   * so a retry with the same key will run it again).
   */
  finish(charge?: boolean): Promise<number | undefined>;
}

/** A unit of work past everything that may refuse it: its answer to come. */
export interface Running<T> {
  answered: Promise<Outcome<T>>;
}

/** What `run` gives: the stored answer of an earlier run with the key, or this run's. */
export type IdempotentRun<T> = { replayed: true; response: T } | ({ replayed: false } & Running<T>);

/** Who asks, and what: the key is scoped to the account, the body is what a retry must repeat. */
export interface IdempotencyScope {
  accountId: string;
  key: string;
  body: unknown;
  promptLogId: string;
  receivedAt: number;
  /** Under zero data retention the answer is not stored: a replay gets 409 response_not_retained. */
  zeroDataRetention: boolean;
  /** Times the record's claim (the `idempotency` phase of Server-Timing). */
  measure?: <R>(phase: 'idempotency', work: () => Promise<R>) => Promise<R>;
  /**
   * Admits a replay before its stored answer is read (the account's rate limit: a replay
   * counts as a request, and past the limit gets the 429 a new request would).
   */
  admitReplay?: () => Promise<void>;
}

/**
 * `Idempotency-Key` (optional, 1 to 255 visible ASCII characters, scoped to the account):
 * the first request with a key runs; a retry with the same body gets the stored response
 * without running or paying again; a retry while the first runs gets 409; the same key
 * with another body gets 422.
 */
export class IdempotencyService<T> {
  constructor(
    private readonly records: IdempotencyRepository,
    private readonly leaseMs: number,
    private readonly log: Log = silentLog,
  ) {}

  /**
   * A unit of work under its key, as Powertools' idempotency utility wraps a handler: the
   * record is claimed first (a replay answers the stored response, and `work` never runs;
   * 409 while another run holds it; 422 for another body); the work runs; its answer is
   * recorded before it leaves, so that a retry sent once the answer arrived replays it,
   * never a 409; should the work fail, the record is released, so that a retry runs again.
   * Should the answer not be recorded (it cannot even be serialised, or the store failed),
   * the work's writes run with `charge` false: a retry will run it again, so this run must
   * not charge (it never charges twice); and the record is released, so that the retry runs
   * at once instead of waiting for the lease (409 till then). An answer the work says is not
   * worth replaying (`replayable` false: it charged nothing) is not recorded either.
   */
  async run(scope: IdempotencyScope, work: () => Promise<Running<T>>): Promise<IdempotentRun<T>> {
    const { accountId, key, body, promptLogId, receivedAt, zeroDataRetention } = scope;
    const claim = () => this.begin(accountId, key, body, promptLogId, receivedAt, scope.admitReplay);
    const begun = await (scope.measure ? scope.measure('idempotency', claim) : claim());
    if (begun.kind === 'replay') return { replayed: true, response: begun.response };
    const release = async (error: unknown): Promise<never> => {
      await this.freeKey(begun.recordKey, promptLogId);
      throw error;
    };
    const { answered } = await work().catch(release);
    const recorded = answered.then(async ({ response, finish, replayable = true }): Promise<Outcome<T>> => {
      const completed =
        replayable &&
        (await this.complete(begun.recordKey, promptLogId, response, zeroDataRetention).then(
          () => true,
          (error: unknown) => {
            this.log.error('Idempotency record not completed: the request is not charged, so that a retry cannot charge twice', {
              promptLogId,
              errorName: (error as Error).name,
            });
            return false;
          },
        ));
      // Unrecorded (not worth replaying, or the store failed), the key is released after the
      // answer (the answer never waits on a failing store twice); refused by its condition
      // should the completion have landed after all (its answer lost): a retry then replays it.
      return {
        response,
        finish: async (charge = true) => {
          const [charged] = await Promise.all([finish(charge && completed), completed || this.freeKey(begun.recordKey, promptLogId)]);
          return charged;
        },
      };
    }, release);
    return { replayed: false, answered: recorded };
  }

  /** What is wrong with an Idempotency-Key, as the 400 names it, or undefined. */
  static keyProblem(key: string): FieldError | undefined {
    return KEY_SHAPE.test(key) ? undefined : { field: 'header:Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' };
  }

  static checkKey(key: string): void {
    const problem = IdempotencyService.keyProblem(key);
    if (problem) throw new ValidationError([problem]);
  }

  async begin(accountId: string, key: string, body: unknown, promptLogId: string, now = Date.now(), admitReplay?: () => Promise<void>): Promise<Begin<T>> {
    IdempotencyService.checkKey(key);
    const recordKey = `${accountId}#${sha256(key)}`;
    const canonical = canonicalJson(body);
    const bodyHash = keyedBodyHash(key, canonical);
    const claim = await this.records.claim(
      {
        idempotencyKey: recordKey,
        bodyHash,
        status: 'running',
        promptLogId,
        leaseUntil: now + this.leaseMs,
        createdAt: now,
        expiresAt: Math.floor((now + IDEMPOTENCY_WINDOW_MS) / 1000),
      },
      now,
    );
    if (claim.claimed) return { kind: 'run', recordKey };
    const { existing } = claim;
    if (!sameBody(existing.bodyHash, { key, body, canonical, bodyHash })) throw new IdempotencyKeyReusedError();
    if (existing.status === 'running') throw new IdempotencyInProgressError(existing.leaseUntil - now);
    if (!existing.responseStored && !existing.response) throw new ResponseNotRetainedError(existing.promptLogId, existing.notRetained ?? 'zero_data_retention');
    await admitReplay?.();
    const stored = await this.records.response(existing);
    // Its item gone while the record stays (TTL deletes each item in its own time): said so.
    if (!stored) throw new ResponseNotRetainedError(existing.promptLogId, 'gone');
    return { kind: 'replay', response: JSON.parse((await (await zlib()).gunzip(stored)).toString('utf8')) as T };
  }

  async complete(recordKey: string, promptLogId: string, response: T, zeroDataRetention: boolean, now = Date.now()): Promise<void> {
    if (zeroDataRetention) return this.records.complete(recordKey, promptLogId, { notRetained: 'zero_data_retention' });
    const packed = await (await zlib()).gzip(JSON.stringify(response));
    if (packed.length > MAX_STORED_BYTES) return this.records.complete(recordKey, promptLogId, { notRetained: 'too_large' });
    await this.records.complete(recordKey, promptLogId, { response: new Uint8Array(packed), expiresAt: Math.floor((now + IDEMPOTENCY_WINDOW_MS) / 1000) });
  }

  /** Releases the key of a run that leaves nothing to replay; where the store fails, a retry waits for the lease (409), which the log says. */
  private async freeKey(recordKey: string, promptLogId: string): Promise<void> {
    try {
      await this.records.release(recordKey, promptLogId);
    } catch (error) {
      this.log.warn('Idempotency key not freed: a retry with it gets 409 until its lease ends', { promptLogId, leaseMs: this.leaseMs, errorName: (error as Error).name });
    }
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Whether `body` is the one a record's hash `recorded` was made of, in the form its prefix says:
 * this version's (`bodyHash`); an earlier keyed one's, the response schema as written or sorted;
 * or the oldest, a bare SHA-256 of the sorted form.
 */
function sameBody(recorded: string, { key, body, canonical, bodyHash }: { key: string; body: unknown; canonical: string; bodyHash: string }): boolean {
  if (recorded.startsWith(KEYED)) return recorded === bodyHash;
  const sorted = canonicalJson(body, false);
  if (recorded.startsWith(KEYED_SORTED)) return recorded === keyedBodyHash(key, canonical, KEYED_SORTED) || recorded === keyedBodyHash(key, sorted, KEYED_SORTED);
  return recorded === sha256(sorted);
}

/**
 * The body's fingerprint, keyed with the Idempotency-Key. The record keeps the key only
 * hashed, so a reader of the table cannot test a guessed prompt against the fingerprint,
 * as a bare SHA-256 of the body would let them (zero data retention included).
 */
function keyedBodyHash(key: string, canonicalBody: string, prefix = KEYED): string {
  return prefix + createHmac('sha256', key).update(canonicalBody, 'utf8').digest('hex');
}

/**
 * A request body as JSON with its object keys sorted, so that key order does not make two
 * bodies differ; but for `response_schema`, kept as written (`schemaAsWritten`, as records
 * are written since it was): the order of its properties is the order the vendors write the
 * output's members in (OpenAI's structured outputs, Gemini's propertyOrdering), so two orders
 * are two requests.
 */
export function canonicalJson(value: unknown, schemaAsWritten = true): string {
  if (!schemaAsWritten || !isPlainObject(value)) return sortedJson(value);
  return sortedObject(value, (key, member) => (key === 'response_schema' ? JSON.stringify(member) : sortedJson(member)));
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => sortedJson(item)).join(',')}]`;
  return isPlainObject(value) ? sortedObject(value, (_key, member) => sortedJson(member)) : JSON.stringify(value);
}

/** An object's members in key order, each written by `member`. */
function sortedObject(value: Record<string, unknown>, member: (key: string, value: unknown) => string): string {
  const entries = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${member(key, value[key])}`);
  return `{${entries.join(',')}}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
