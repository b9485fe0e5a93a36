import { setMaxListeners } from 'node:events';
import { schemaChecker } from '../contract/schema-checker.js';
import { KnownSecretsFilter, redactKnown, redactSecrets } from '../http/redact.js';
import { chargeCall, withFinishReason } from '../pricing/charge.js';
import { UpstreamError } from '../providers/errors.js';
import { withRetry, type RetryPolicy } from '../providers/retry.js';
import type { Router } from '../providers/router.js';
import type { ModelReply, Usage } from '../providers/types.js';
import { maxTokensCutWarning, type PlannedCall } from './model-call.js';
import { CUT_OUTPUT_CHECK, OutputBudget, outputCutWarning, type OutputShare } from './output-budget.js';
import type { ModelResult } from './result.js';
import { nextTurn, preparingInTurns } from './turns.js';
import { isBlank } from '../text/characters.js';

export interface FanOutOptions {
  route: Router;
  /**
   * The account whose request it is: its outputs are checked with its own compiled schema
   * (SchemaChecker.check), and the vendors that take an end user's identifier are sent it
   * (ModelCall.endUser).
   */
  accountId?: string;
  /** Epoch ms by which every model call must have ended. */
  deadlineAt: number;
  retry?: RetryPolicy;
  /**
   * Given, every call is prepared (its vendor request mapped and serialised, by its
   * adapter's `prepare`) on the next turn of the event loop, once what the caller has just
   * sent has left, but none is sent before it resolves: the prompt service passes its
   * reserve, so that the calls are built while the store answers and nothing reaches a
   * provider unreserved. Should it reject, nothing is sent and every result fails.
   * Latencies count from when it resolved. This is the one place that waits for it.
   */
  ready?: Promise<unknown>;
  /**
   * With `ready`: the calls are prepared only once it resolves, not while it is awaited. For a
   * large request, whose bodies take long to serialise: a refused reserve then costs none of it.
   */
  prepareOnceReady?: boolean;
  /**
   * Given, each model's call is streamed (prepared with an `onDelta`) and its text handed
   * here as the vendor sends it, by the call's position; `onResult` hears each result as
   * its model ends. The JSON answer passes neither.
   */
  onDelta?: (index: number, text: string) => void;
  onResult?: (index: number, result: ModelResult) => void;
  /**
   * The caller's own abort (an event-stream caller who disconnected). Nothing more is
   * forwarded and no attempt goes out (or is retried) after it; a call at its vendor keeps
   * reading its stream for DISCONNECT_GRACE_MS (never past the deadline), so that one about to
   * end is charged its vendor's final usage (a completed result), and is then stopped: charged
   * what it used (the usage the vendor reported so far, else the missing-usage estimate from
   * its input and the text received) and reported with the status `cancelled`.
   */
  signal?: AbortSignal;
  /** The most output text the request's models hold together, in UTF-8 bytes (MAX_REQUEST_OUTPUT_BYTES unless a test says otherwise). */
  outputLimitBytes?: number;
  /** How long calls at their vendors go on once the caller has left (DISCONNECT_GRACE_MS unless a test says otherwise). */
  disconnectGraceMs?: number;
  /**
   * The turns (preparingInTurns) to prepare the calls in, shared with other work that builds
   * calls: a judge task passes its own, so that its calls, each a runModels of one, and the
   * material they show are prepared one after another in turns, not each in a run of its own.
   */
  turn?: () => Promise<void>;
}

/**
 * How long a call at its vendor keeps reading its stream once its event-stream caller has
 * disconnected, forwarding nothing: a vendor that reports usage only in its final event
 * (OpenAI Responses, xAI) would otherwise leave a call stopped just before its end charged its
 * text alone, none of its hidden reasoning. Never past the request's deadline.
 */
export const DISCONNECT_GRACE_MS = 2_000;

/**
 * Every planned call at once, on one abort signal that fires at the deadline (one timer per
 * request, not per model); a model that fails becomes a failed result and never fails
 * the others. Results keep the calls' order.
 */
export async function runModels(calls: readonly PlannedCall[], options: FanOutOptions): Promise<ModelResult[]> {
  const controller = new AbortController();
  // Each model's call listens on it: as many listeners as models, none of them a leak.
  setMaxListeners(0, controller.signal);
  const timer = setTimeout(() => controller.abort(), Math.max(0, options.deadlineAt - Date.now()));
  // The caller gone: no call sends or retries an attempt, nor forwards text, from now; those at
  // their vendor are stopped once the grace has passed (or the deadline has).
  const gone = new AbortController();
  setMaxListeners(0, gone.signal);
  let grace: NodeJS.Timeout | undefined;
  const cancel = () => {
    gone.abort(options.signal?.reason);
    grace = setTimeout(() => controller.abort(options.signal?.reason), Math.max(0, Math.min(options.disconnectGraceMs ?? DISCONNECT_GRACE_MS, options.deadlineAt - Date.now())));
  };
  if (options.signal?.aborted) cancel();
  else options.signal?.addEventListener('abort', cancel, { once: true });
  const ready = options.ready?.then(
    () => undefined,
    (reason: unknown) => {
      // Aborted before any call hears of it: each ends unsent, and none waits to retry.
      controller.abort(reason);
      throw reason;
    },
  );
  // The caller handles the rejection; here each call ends on it.
  ready?.catch(() => undefined);
  try {
    if (ready) await nextTurn();
    const turn = options.turn ?? preparingInTurns();
    const budget = new OutputBudget(options.outputLimitBytes, calls.length);
    const shared = { signal: controller.signal, gone: gone.signal, turn };
    return await Promise.all(
      calls.map(async (planned, index) => {
        const share = budget.share();
        let result: ModelResult;
        try {
          result = await runModel(planned, index, options, shared, share, ready);
        } finally {
          share.end();
        }
        options.onResult?.(index, result);
        return result;
      }),
    );
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
    options.signal?.removeEventListener('abort', cancel);
  }
}

/**
 * What the calls of one request share: the signal that stops them all (the deadline, the
 * caller's abort once its grace has passed), the one that says the caller is gone, and their
 * turns to prepare. Each has its share of the request's output budget besides.
 */
interface RequestCalls {
  signal: AbortSignal;
  gone: AbortSignal;
  turn: () => Promise<void>;
}

/**
 * One model's call. A streamed call also stops on its own, where its share of the output budget
 * runs out in its text: it is given a controller of its own, which the request's signal stops too.
 */
async function runModel(planned: PlannedCall, index: number, options: FanOutOptions, shared: RequestCalls, budget: OutputShare, ready?: Promise<void>): Promise<ModelResult> {
  if (!options.onDelta) return callModel(planned, index, options, shared, budget, undefined, ready);
  const own = new AbortController();
  const stop = () => own.abort(shared.signal.reason);
  if (shared.signal.aborted) stop();
  else shared.signal.addEventListener('abort', stop, { once: true });
  try {
    return await callModel(planned, index, options, shared, budget, own, ready);
  } finally {
    // Not heard once the call has ended (a listener of the request's signal lives as long as the request).
    shared.signal.removeEventListener('abort', stop);
  }
}

async function callModel(
  planned: PlannedCall,
  index: number,
  options: FanOutOptions,
  shared: RequestCalls,
  budget: OutputShare,
  own: AbortController | undefined,
  ready?: Promise<void>,
): Promise<ModelResult> {
  const { model, call, warnings } = planned;
  const { turn } = shared;
  let started = performance.now();
  /** When the attempt that answered began: what a time-of-day vendor bills by. */
  let attemptStartedAt = Date.now();
  let apiKey: string | undefined;
  /** The text streamed so far: what a cancelled call is charged for when its vendor reported no usage. */
  let streamed = '';
  /**
   * Whether an attempt is out at the vendor: a call stopped while none is (before its first
   * went out, or while it waits to retry one the vendor refused) has used nothing.
   */
  let atVendor = false;
  /** Whether some of its text went out to the caller (an event stream's deltas). */
  let delivered = false;
  /** Whether the request's output budget ran out in this call's text: a streamed call is stopped there, a whole answer cut. */
  let cut = false;
  const onDelta = options.onDelta;
  const signal = own?.signal ?? shared.signal;
  try {
    const route = options.route(model.entry);
    // A process's first calls wait for their adapter's code here, so that they too are prepared in turns.
    await route.adapter.loading?.();
    if (ready && options.prepareOnceReady) {
      await ready;
      // The caller gone meanwhile: its calls are not worth preparing.
      if (shared.gone.aborted) throw new UpstreamError('cancelled', 'The caller disconnected before the call was prepared');
    }
    // Prepared in turns (preparingInTurns), once ready or not.
    await turn();
    apiKey = route.endpoint.apiKey;
    // A vendor that echoes the key it was sent hands it to no caller, streamed (the deltas
    // pass through this filter) or not (the output is redacted below).
    let secrets = new KnownSecretsFilter([apiKey]);
    const deliver = (text: string) => {
      if (text.length === 0) return;
      delivered = true;
      // Read in the grace after its caller left: charged, never forwarded.
      if (!shared.gone.aborted) onDelta?.(index, text);
    };
    /** A streamed call's text as it comes: what fits in the output budget goes out; where it runs out, the call is stopped. */
    const receive = (text: string) => {
      if (text.length === 0 || cut) return;
      const kept = budget.take(text);
      streamed += kept;
      deliver(secrets.push(kept));
      if (kept.length < text.length) {
        cut = true;
        own?.abort(new Error("The request's output budget ran out"));
      }
    };
    const prepared = route.adapter.prepare(options.accountId === undefined ? call : { ...call, endUser: options.accountId }, route.endpoint, onDelta && receive);
    if (ready) {
      await ready;
      // Timed (and billed by the time of day) from when the call may go out.
      started = performance.now();
    }
    let reply: ModelReply;
    try {
      ({ value: reply } = await withRetry(
        async (attempt) => {
          attemptStartedAt = Date.now();
          if (attempt > 1) {
            // A retried attempt follows one that delivered nothing: what that one held back is dropped with it.
            secrets = new KnownSecretsFilter([apiKey]);
            streamed = '';
          }
          // The caller gone (before the first attempt or the retry of one), none goes out.
          if (shared.gone.aborted) throw new UpstreamError('cancelled', 'The caller disconnected before the attempt went out');
          // Nor past the deadline, whose timer may not have fired yet (a call that waited its turn, prepared late): unsent, free.
          if (Date.now() >= options.deadlineAt) throw new UpstreamError('timeout', 'The request deadline passed before the call went out', { unbilled: true });
          atVendor = !signal.aborted;
          try {
            return await prepared.send(signal);
          } catch (error) {
            // Failed by itself (refused, timed out), not stopped: none is out while the retry waits.
            if (!signal.aborted) atVendor = false;
            // A streamed attempt that failed after some of its text went out is not retried: the
            // caller has that text already, and a second attempt would send different text after it.
            if (delivered && error instanceof UpstreamError && error.retryable) throw new UpstreamError(error.code, error.message, { ...error.details, retryable: false });
            throw error;
          }
        },
        {
          policy: options.retry,
          deadlineAt: options.deadlineAt,
          // A wait to retry ends when the caller leaves, not a grace later.
          signals: [signal, shared.gone],
        },
      ));
    } catch (error) {
      // Stopped by the request (its caller gone, its deadline) as well: stopped, not cut.
      if (!(cut && !shared.signal.aborted && !shared.gone.aborted && error instanceof UpstreamError)) throw error;
      // Stopped where the output budget ran out: what went out is its output, and it is charged
      // what its vendor had billed by then (the usage reported so far, else the estimate from
      // its input and all the text received).
      reply = { output: receivedText(error, streamed), usage: error.details.partial?.usage, hints: error.details.partial?.hints, warnings: [...(prepared.warnings ?? [])] };
    }
    let output: string;
    if (onDelta) {
      // A reply whose text came only with its end (a Responses refusal, a vendor that streamed
      // no delta) is its one delta: a stream's deltas, joined, are the result's output.
      if (streamed === '' && !cut) receive(reply.output);
      if (cut) {
        // What the filter holds back at the cut could be the start of the key: it never goes out,
        // and the output is what did (the redacted text less what was held).
        const held = secrets.end();
        const sent = redactKnown(streamed, [apiKey]);
        output = sent.slice(0, sent.length - held.length);
      } else {
        deliver(secrets.end());
        output = redactKnown(reply.output, [apiKey]);
      }
    } else {
      // Redacted before it is cut, so that no cut leaves the start of a key.
      const whole = redactKnown(reply.output, [apiKey]);
      output = budget.take(whole);
      cut = output.length < whole.length;
    }
    const latencyMs = Math.round(performance.now() - started);
    // Charged for all the text the vendor sent, cut or not: the vendor bills it.
    // Its warning says why the cost is unavailable, where it is (the adapters say nothing of it: both had, one after the other).
    const charge = chargeCall(call, reply.usage, reply.output, attemptStartedAt, withFinishReason(reply.hints, reply.finishReason), reply.usageMissing);
    const blank = isBlank(reply.output);
    const allWarnings = [
      ...warnings,
      // The adapter's warnings repeat the vendor's words (a finish reason): redacted as its error messages are.
      ...reply.warnings.map((warning) => redactSecrets(warning, [apiKey])),
      ...(reply.cutAtMaxTokens ? [maxTokensCutWarning(call, blank)] : []),
      // An answer of no text (or whitespace only) that ended as answers end, whatever its protocol and whole or streamed: charged its usage, and said.
      ...(blank && !reply.cutAtMaxTokens ? ['The model answered without text'] : []),
      ...(charge.warning ? [charge.warning] : []),
      ...(cut ? [outputCutWarning(budget.limitBytes)] : []),
    ];
    // A call only a whole answer serves (a judge's): one cut short fails, charged what it used.
    const failed = planned.cutShortFails && (reply.cutAtMaxTokens || reply.cutShort || cut) ? { status: 'failed' as const, output: '', error: planned.cutShortFails } : undefined;
    return {
      modelId: model.requestedId,
      status: 'completed',
      output,
      ...(charge.kind === 'observed'
        ? {
            tokensIn: charge.usage.inputTokens,
            tokensOut: charge.usage.outputTokens,
            latencyMs,
            providerCost: charge.providerCost,
            usage: tokenClasses(charge.usage),
          }
        : { tokensIn: 0, tokensOut: 0, latencyMs, providerCost: null, estimatedCost: charge.estimatedCost }),
      ...(planned.outputSchema !== undefined
        ? { structuredOutput: cut ? CUT_OUTPUT_CHECK : await schemaChecker().check(output, planned.outputSchema, options.accountId, options.deadlineAt) }
        : {}),
      ...(allWarnings.length > 0 ? { warnings: allWarnings } : {}),
      ...failed,
    };
  } catch (error) {
    const latencyMs = Math.round(performance.now() - started);
    if (options.signal?.aborted && error instanceof UpstreamError) {
      // None at the vendor (or one whose request never reached it), and none that ended by itself in the grace having used something (its text, a blocked answer's usage).
      if ((!atVendor || error.details.unbilled) && !delivered && error.details.billed === undefined) {
        return unchargedResult(planned, latencyMs, 'cancelled', {
          code: 'cancelled',
          message: 'The caller disconnected: the call was stopped while no attempt of it was at the vendor, and charged nothing',
        });
      }
      return stoppedResult(
        planned,
        error,
        streamed,
        attemptStartedAt,
        latencyMs,
        { status: 'cancelled', error: { code: 'cancelled', message: 'The caller disconnected: the call was stopped and charged what it had used' } },
        CANCELLED_NO_USAGE,
      );
    }
    // Its stream broke off (the deadline, a vendor's error event) after its text went out: the
    // caller has that text, which its vendor bills; or its vendor withheld an answer it generated
    // and billed (a safety block): failed, and charged what it had used.
    if (error instanceof UpstreamError && (delivered || error.details.billed !== undefined)) {
      const noUsage = shared.signal.aborted ? DEADLINE_NO_USAGE : undefined;
      return stoppedResult(planned, error, streamed, attemptStartedAt, latencyMs, { status: 'failed', error: toResultError(error, apiKey) }, noUsage);
    }
    // Stopped by the deadline while an attempt was at its vendor, which bills at least the input it
    // read (and, for a whole answer, often the output it went on to write): failed, and charged what
    // it had used, so that no call is free by outrunning the deadline. Not one whose request never
    // reached the vendor (its connection or TLS handshake not made, its body not handed over).
    if (error instanceof UpstreamError && atVendor && shared.signal.aborted && !error.details.unbilled) {
      return stoppedResult(planned, error, streamed, attemptStartedAt, latencyMs, { status: 'failed', error: toResultError(error, apiKey) }, DEADLINE_NO_USAGE);
    }
    return unchargedResult(planned, latencyMs, 'failed', toResultError(error, apiKey));
  }
}

/**
 * A call stopped at the vendor (its caller disconnected: cancelled; the deadline: failed),
 * broken off after its text went out, or whose answer its vendor withheld after generating it
 * (failed): no output is answered (a streaming caller had its text as deltas), and it is
 * charged what it used, as the vendor bills it: the usage it reported (for a withheld answer,
 * the usage of that answer), or where none arrived, the missing-usage estimate from its input
 * and the text received (`noUsage` says why there was none, in the estimate's warning).
 */
function stoppedResult(
  { model, call, warnings }: PlannedCall,
  error: UpstreamError,
  streamed: string,
  attemptStartedAt: number,
  latencyMs: number,
  outcome: Pick<ModelResult, 'status' | 'error'>,
  noUsage?: string,
): ModelResult {
  const { billed, partial } = error.details;
  const { usage, hints } = billed ?? { usage: partial?.usage, hints: partial?.hints };
  const charge = chargeCall(call, usage, receivedText(error, streamed), attemptStartedAt, hints, noUsage);
  const allWarnings = [...warnings, ...(charge.warning ? [charge.warning] : [])];
  return {
    modelId: model.requestedId,
    status: outcome.status,
    output: '',
    ...(charge.kind === 'observed'
      ? { tokensIn: charge.usage.inputTokens, tokensOut: charge.usage.outputTokens, latencyMs, providerCost: charge.providerCost }
      : { tokensIn: 0, tokensOut: 0, latencyMs, providerCost: null, estimatedCost: charge.estimatedCost }),
    ...(charge.kind === 'observed' ? { usage: tokenClasses(charge.usage) } : {}),
    error: outcome.error,
    ...(allWarnings.length > 0 ? { warnings: allWarnings } : {}),
  };
}

/** Why a call its caller's disconnect stopped is charged an estimate: its vendor had reported no usage by then. */
const CANCELLED_NO_USAGE = 'the caller disconnected and the call was stopped before its vendor reported usage';

/** Why a call the deadline stopped is charged an estimate: its vendor had reported no usage by then. */
const DEADLINE_NO_USAGE = "the request's deadline stopped the call before its vendor reported usage";

/** All the text a stopped stream received: its adapter's partial output, or what it streamed where that is longer. */
function receivedText(error: UpstreamError, streamed: string): string {
  const partial = error.details.partial;
  return partial && partial.output.length > streamed.length ? partial.output : streamed;
}

/** A call that ended without output and is charged nothing: failed, or cancelled while no attempt of it was at the vendor. */
function unchargedResult({ model, warnings }: PlannedCall, latencyMs: number, status: 'failed' | 'cancelled', error: NonNullable<ModelResult['error']>): ModelResult {
  return {
    modelId: model.requestedId,
    status,
    output: '',
    tokensIn: 0,
    tokensOut: 0,
    latencyMs,
    providerCost: 0,
    error,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/**
 * The token classes beside tokensIn/tokensOut, for callers who price or audit them; no
 * reasoning count where the vendor's usage reports none apart (Usage's reasoningTokens).
 */
function tokenClasses(usage: Usage): NonNullable<ModelResult['usage']> {
  return {
    cachedTokensIn: usage.cachedInputTokens,
    cacheWriteTokensIn: usage.cacheWriteTokens,
    ...(usage.reasoningTokens === undefined ? {} : { reasoningTokensOut: usage.reasoningTokens }),
  };
}

/**
 * What a vendor says of the gateway's own account with it, in the words every tenant reads
 * instead of the vendor's: those name the operator's organisation or project and, for a
 * limit, how much of it every tenant together has used ("Limit 30000, Used 29412").
 */
const OPERATOR_ACCOUNT_MESSAGES = {
  keyRefused: "The provider refused the gateway's key for this model: the gateway's operator must replace it",
  noCredit: "The gateway's account with this provider cannot pay for the call: the gateway's operator must top it up",
  limited: "The provider is limiting the gateway's calls to this model just now; retry later",
} as const;

/** The gateway's words for what a vendor said of its account (by the error's code, else its status), if it said that. */
function operatorAccountMessage({ code, details: { upstreamStatus, creditSpent } }: UpstreamError): string | undefined {
  if (creditSpent) return OPERATOR_ACCOUNT_MESSAGES.noCredit;
  // A rate limit, before the stream or inside it; not every 429 (Bedrock's ModelNotReadyException: the model is loading).
  if (code === 'upstream_rate_limited') return OPERATOR_ACCOUNT_MESSAGES.limited;
  if (upstreamStatus === 401) return OPERATOR_ACCOUNT_MESSAGES.keyRefused;
  return upstreamStatus === 402 ? OPERATOR_ACCOUNT_MESSAGES.noCredit : undefined;
}

/**
 * The failure as the answer reports it. Vendors quote the key they were sent and name the
 * operator's accounts with them: both are redacted from the message, and a message about the
 * gateway's own account (its key refused, its credit spent, its limits reached) is the
 * gateway's, not the vendor's.
 */
function toResultError(error: unknown, apiKey: string | undefined): NonNullable<ModelResult['error']> {
  if (error instanceof UpstreamError) {
    const { upstreamStatus } = error.details;
    return { code: error.code, message: operatorAccountMessage(error) ?? redactSecrets(error.message, [apiKey]), ...(upstreamStatus !== undefined ? { upstreamStatus } : {}) };
  }
  // An adapter bug must not leak internals (or content) into the answer.
  return { code: 'internal_error', message: 'The gateway failed to call this model' };
}
