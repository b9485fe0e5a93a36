import type { ModelReply, Usage, UsageHints } from './types.js';

/** What a stream had delivered when it was aborted. */
export interface PartialReply {
  output: string;
  usage?: Usage;
  hints?: UsageHints;
}

/**
 * The code of a vendor's error answer by its HTTP status: its limits (429), its capacity (503,
 * or a status the vendor has of its own for it: `capacityStatuses`), or anything else.
 */
export function codeForStatus(status: number, capacityStatuses: readonly number[] = []): 'upstream_rate_limited' | 'upstream_overloaded' | 'upstream_error' {
  if (status === 429) return 'upstream_rate_limited';
  return status === 503 || capacityStatuses.includes(status) ? 'upstream_overloaded' : 'upstream_error';
}

/** Whether a 429's body says the account is out of quota (OpenAI's `insufficient_quota`), not that it sends too fast. */
function quotaSpent(body: unknown): boolean {
  const error = (body as { error?: unknown } | null | undefined)?.error;
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'insufficient_quota';
}

/**
 * A vendor's error answer (`body`: its JSON, if it was) as an UpstreamError, by its status:
 * its code (codeForStatus), retryable for a 429, a 5xx or the vendor's capacity statuses,
 * waiting as long as `retryAfterMs` says; but a 429 whose body says the account is out of quota
 * is spent credit (`creditSpent`), which no wait helps.
 */
export function statusError(
  status: number,
  message: string,
  { body, retryAfterMs, capacityStatuses = [] }: { body?: unknown; retryAfterMs?: number; capacityStatuses?: readonly number[] } = {},
): UpstreamError {
  const code = codeForStatus(status, capacityStatuses);
  const creditSpent = status === 429 && quotaSpent(body);
  return new UpstreamError(code, message, {
    upstreamStatus: status,
    retryable: !creditSpent && (status === 429 || status >= 500 || code === 'upstream_overloaded'),
    retryAfterMs,
    ...(creditSpent ? { creditSpent: true as const } : {}),
  });
}

/** A failed upstream call: what the result's `error` object reports, and whether to try again. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly code: string,
    message: string,
    readonly details: {
      upstreamStatus?: number;
      retryable?: boolean;
      /** From Retry-After, when the vendor sent one. */
      retryAfterMs?: number;
      cause?: unknown;
      /** On an aborted stream: the answer's text streamed so far, and its usage if the vendor had sent it. */
      partial?: PartialReply;
      /**
       * The answer a vendor generated and then refused itself, sent back with the refusal (Groq's
       * `json_validate_failed` with its `failed_generation`), as the reply a whole call answers
       * instead of failing (prepared-http.ts), with a warning that says so.
       */
      refusedAnswer?: ModelReply;
      /**
       * On an answer the vendor generated and then withheld (`upstream_blocked`: a safety block,
       * a content filter) or gave no text the gateway can use (`upstream_malformed_response`:
       * another finish reason, a tool call), and reported a usage block with, which it bills:
       * the call fails, charged that usage where it can be true, else the estimate with what it showed.
       */
      billed?: BilledAnswer;
      /**
       * On a call stopped (its deadline, its caller) that its vendor bills nothing for: its
       * request had not reached the vendor (the connection not yet made, TCP or TLS, or the body
       * not yet handed to it), or the vendor had answered an error status (its body cut off).
       */
      unbilled?: true;
      /**
       * The vendor said the gateway's account with it cannot pay (OpenAI's 429
       * `insufficient_quota`, "check your plan and billing details"): no retry helps, and the
       * caller is told so in the gateway's words, as for a 402.
       */
      creditSpent?: true;
    } = {},
  ) {
    super(message, { cause: details.cause });
  }
  get retryable(): boolean {
    return this.details.retryable ?? false;
  }
}

/**
 * What a withheld answer's usage block showed: its usage, undefined where it cannot be read
 * (cost unavailable, the call charged the estimate), and the counts it gave for that estimate.
 */
export interface BilledAnswer {
  usage: Usage | undefined;
  hints?: UsageHints;
}

/**
 * An answer the vendor generated but that holds nothing to show: withheld (`upstream_blocked`,
 * a prompt or an answer blocked) or without text the gateway can use
 * (`upstream_malformed_response`). Not retried (the same request would most likely end alike,
 * and be billed again). Billed (`billed`, what it showed of its usage) where the vendor
 * reported a usage block with it (`reported`, the block as it came, whatever it holds);
 * without one it is free.
 */
export function unusableAnswer(code: 'upstream_blocked' | 'upstream_malformed_response', message: string, reported?: unknown, billed?: BilledAnswer): UpstreamError {
  const isBilled = billed !== undefined && typeof reported === 'object' && reported !== null;
  return new UpstreamError(code, message, { upstreamStatus: 200, retryable: false, ...(isBilled ? { billed } : {}) });
}

/**
 * A stream that ended before the event that ends its vendor's answer (the connection closed
 * cleanly mid-answer): the text may stop anywhere, so the call failed; what it delivered
 * is charged by the caller as any stream that broke off.
 */
export function streamEndedEarly(finalEvent: string): UpstreamError {
  return new UpstreamError('upstream_malformed_response', `The provider's stream ended before its ${finalEvent}: the answer is incomplete`, { upstreamStatus: 200 });
}

/**
 * Retry-After's two forms (RFC 9110 10.2.3): delay-seconds (digits; a fraction taken too), or an
 * HTTP-date, each of whose three forms (IMF-fixdate, RFC 850, asctime, which has no comma)
 * starts with a day's name.
 */
const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;
/**
 * A date that names no zone, ending at its time (`… 00:00:03`, a fraction of a second too), at
 * the year after it (asctime) or at its year (no time): read as GMT, as every HTTP date is, not
 * in the machine's zone. One that names a zone (GMT, EST, `UTC+1`, `+0900`) is read in it.
 */
const NAMES_NO_ZONE = /(?:(?:^|\s)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s+\d{4})?|\s\d{4})$/;

/**
 * Retry-After as seconds or an HTTP date, in milliseconds from now; undefined for anything
 * else, which the backoff then paces (`Number` and `Date.parse` read `0x2`, `1e3` and `-5`,
 * the last as a date in 2001: no wait at all).
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (DELAY_SECONDS.test(text)) return Math.round(Number(text) * 1000);
  if (!HTTP_DATE.test(text)) return undefined;
  const date = Date.parse(NAMES_NO_ZONE.test(text) ? `${text} GMT` : text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A vendor's enum value (a finish or stop reason) as the gateway repeats it in a warning or
 * an error: a short word of letters, digits and `_.-`, as every vendor's enums are, or
 * `unrecognised`. A lying vendor's "reason" can be megabytes long or quote the key or the
 * prompt; none of it is repeated.
 */
export function vendorWord(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Not a name every object has (`toString`, `__proto__`): the readers look words up in tables.
  return /^[A-Za-z0-9_.-]{1,64}$/.test(value) && !(value in Object.prototype) ? value : 'unrecognised';
}
