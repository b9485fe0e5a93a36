import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import { accountRateLimit } from '../shared/config.js';
import { LIMITS } from '../shared/contract/limits.js';
import { GatewayError, GatewayTimeoutError, ServiceUnavailableError, UNAVAILABLE_RETRY_AFTER_SECONDS, UnauthorizedError } from '../shared/errors.js';
import type { Gateway } from '../shared/gateway.js';
import { answered, logAnswer } from '../shared/http/answered.js';
import { errorBody } from '../shared/http/error-body.js';
import { idempotencyKeyHeader, jsonBody, validateContract, type ApiEvent } from '../shared/http/middleware.js';
import { repeatedHeaders } from '../shared/http/single-headers.js';
import { acceptsEventStream, EVENT_STREAM_HEADERS, EventStream, type ApiResult } from '../shared/http/event-stream.js';
import { errorResponse, jsonResponse } from '../shared/http/response.js';
import { ServerTiming } from '../shared/http/server-timing.js';
import type { Log } from '../shared/log.js';
import type { PromptResponse, PromptService, Started, SubmitOptions } from '../shared/orchestrator/prompt-service.js';
import type { PromptRequest } from '../shared/contract/types.js';
import { microToCredits } from '../shared/pricing/micro-credits.js';

/** What the Lambda entry adds around the handler (Powertools); the local host adds nothing. */
export interface ApiHooks {
  middlewares?: middy.MiddlewareObj<ApiEvent, ApiResult>[];
  onResponse?: (response: PromptResponse) => void;
  /** The credits the settle charged the account, once it has (not where it failed, nor for a replay). */
  onCharged?: (credits: number) => void;
}

/**
 * What the local host adds to a handler's context: a signal that aborts once the caller's
 * connection closed before its answer was sent, so that an event-stream caller gone while its
 * reserve was in flight has no call sent. Lambda has none: before a streamed answer's 200 the
 * function cannot see its caller leave.
 */
export interface CallerGone {
  callerGone?: AbortSignal;
}

/**
 * POST /api/v1/prompt. The authorizer has run; the account comes from its context only.
 * `build` builds the gateway on first use (once per Lambda container).
 * This module imports no Powertools tracer: the X-Ray SDK hooks every promise of the
 * process that loads it, which the local host should not pay for.
 */
export function createApiHandler(build: () => Gateway, log: Log, hooks: ApiHooks = {}) {
  // Built by the first request that passes its body's checks; what knownOverLimit reads, where built.
  let built: Gateway | undefined;
  const gateway = () => (built ??= build());
  // Middy's early timeout answers just before Lambda's: as a fault logged, without the 500's "not charged".
  const timeoutEarlyResponse = () => {
    log.error('The api function ran out of time before answering');
    throw new GatewayTimeoutError();
  };
  return middy<ApiEvent, ApiResult>({ timeoutEarlyResponse })
    .use(hooks.middlewares ?? [])
    .use(answered({ log }))
    .use(errorBody({ log }))
    .use(repeatedHeaders())
    .use(httpHeaderNormalizer())
    .use(knownOverLimit(() => built))
    .use(jsonBody({ limitBytes: LIMITS.bodyBytes }))
    .use(validateContract())
    .use(idempotencyKeyHeader())
    .handler(async (event, lambda) => {
      const timing = new ServerTiming();
      const context = event.requestContext.authorizer ?? {};
      const accountId = context.accountId;
      if (typeof accountId !== 'string' || !event.promptRequest) throw new UnauthorizedError();
      const { prompts, config } = buildOrUnavailable(gateway, log, event.requestContext.requestId);
      const request = event.promptRequest;
      const options: SubmitOptions = {
        idempotencyKey: event.headers['idempotency-key'],
        account: cachedAccount(context),
        ...(typeof context.keyHash === 'string' ? { keyHash: context.keyHash } : {}),
        timing,
        receivedAt: receivedAt(event),
        requestId: event.requestContext.requestId,
      };
      if (acceptsEventStream(event.headers.accept)) {
        return answerWithEvents(prompts, accountId, request, options, config.sseKeepAliveMs, log, hooks, (lambda as CallerGone).callerGone);
      }
      const started = await prompts.start(accountId, request, options);
      const response = await started.answer;
      let answer: ApiResult;
      try {
        answer = jsonResponse(200, response, { 'server-timing': timing.header() });
      } catch (error) {
        // Outputs too large for one string: the answer is withdrawn (nothing is charged, as the
        // error body says), and what follows it, the release, still travels with the answer sent.
        started.withdraw();
        return { ...errorResponse(error, log, { requestId: event.requestContext.requestId }), finished: charged(started, log, hooks.onCharged) };
      }
      // A replay ran no model and charged nothing: it adds nothing to the metrics.
      if (!started.replayed) hooks.onResponse?.(response);
      // What follows the answer travels with it, for the sender to await once it is sent.
      return { ...answer, finished: charged(started, log, hooks.onCharged) };
    });
}

/**
 * What follows an answer, with the charge its settle made recorded once it is known: what the
 * answer said (`creditsUsed`) but where the settle found otherwise (a cost past the hold, a
 * request the reconciler had released, an idempotency record not completed), which the metric
 * had overstated. Never rejects.
 */
function charged(started: Started, log: Log, onCharged: ApiHooks['onCharged']): Promise<void> {
  // A replay's and an unsettled request's resolve with no charge.
  return started.finished.then((micro) => {
    if (micro === undefined || !onCharged) return;
    try {
      onCharged(microToCredits(micro));
    } catch (error) {
      log.error('Recording the charge failed', { errorName: (error as Error).name });
    }
  });
}

/** The longest a request is taken to have waited before its handler (a cold start, the authorizer): a time older than this is a clock off. */
const MAX_WAIT_BEFORE_HANDLER_MS = 10_000;

/**
 * When API Gateway received the request, where it says so: the request's deadline counts
 * from there, a little before its integration timeout starts (the authorizer runs in
 * between), so that a cold start's wait comes out of the deadline instead of running past
 * the timeout. Never later than now, nor more than MAX_WAIT_BEFORE_HANDLER_MS before it (a
 * clock off).
 */
export function receivedAt(event: ApiEvent, now = Date.now()): number {
  const at = (event.requestContext as { requestTimeEpoch?: unknown }).requestTimeEpoch;
  return typeof at === 'number' && Number.isFinite(at) ? Math.min(now, Math.max(at, now - MAX_WAIT_BEFORE_HANDLER_MS)) : now;
}

/**
 * The event-stream answer (docs/streaming-api.md). Every refusal is thrown by `start`,
 * before the 200: only once the reservation holds does the stream begin, its deltas and
 * results written as the models stream and end.
 */
async function answerWithEvents(
  prompts: PromptService,
  accountId: string,
  request: PromptRequest,
  options: SubmitOptions,
  keepAliveMs: number,
  log: Log,
  { onResponse, onCharged }: ApiHooks,
  callerGone?: AbortSignal,
): Promise<ApiResult> {
  const stream = new EventStream(keepAliveMs);
  // Gone before the 200 (the local host says so): as gone as after it, no call is sent from now.
  const leave = () => stream.cancel(callerGone?.reason ?? new Error('The caller disconnected'));
  if (callerGone?.aborted) leave();
  else callerGone?.addEventListener('abort', leave, { once: true });
  const live = new Set<number>();
  const started = await prompts.start(accountId, request, {
    ...options,
    signal: stream.signal,
    onDelta: (index, text) => stream.sendJson('delta', { index, modelId: request.models[index]?.requestedId, text }),
    onResult: (index, result) => {
      live.add(index);
      stream.sendJson('result', { index, result });
    },
  });
  // A replay ran no model and charged nothing: it adds nothing to the metrics.
  streamAnswer(stream, started, live, log, options.requestId, started.replayed ? undefined : onResponse);
  return {
    statusCode: 200,
    headers: { ...EVENT_STREAM_HEADERS, 'server-timing': options.timing!.header() },
    body: '',
    eventStream: stream,
    finished: charged(started, log, onCharged),
  };
}

/**
 * The events that follow the 200: the results not yet sent (all of them for judged
 * requests and replays), the evaluations, the ranking, then `done` with the JSON answer's
 * very body; or, should the run fail, `error` with the error body. Then the end.
 */
function streamAnswer(
  stream: EventStream,
  started: Started,
  live: ReadonlySet<number>,
  log: Log,
  requestId: string | undefined,
  onResponse?: (response: PromptResponse) => void,
): void {
  // A run that fails after the 200 is answered in an `error` event, and logged as a failed answer is.
  const failed = (error: unknown) => {
    const answer = errorResponse(error, log, { requestId });
    logAnswer(log, error, answer.statusCode, requestId, { streamed: true });
    return answer.body;
  };
  started.answer.then(
    (response) => {
      let done: string;
      try {
        response.results.forEach((result, index) => {
          if (!live.has(index)) stream.sendJson('result', { index, result });
        });
        for (const evaluation of response.evaluations) stream.sendJson('evaluation', { evaluation });
        if (response.ranking) stream.sendJson('ranking', { ranking: response.ranking, judgeStatistics: response.judgeStatistics });
        done = jsonResponse(200, response).body;
      } catch (error) {
        // Outputs too large for one string: withdrawn, so nothing is charged, as the error event says.
        started.withdraw();
        stream.send('error', failed(error));
        stream.end();
        return;
      }
      try {
        onResponse?.(response);
      } catch (error) {
        log.error('Recording the response failed', { promptLogId: response.promptLogId, errorName: (error as Error).name });
      }
      stream.send('done', done);
      stream.end();
    },
    (error: unknown) => {
      stream.send('error', failed(error));
      stream.end();
    },
  );
}

/**
 * The account settings the authorizer put in its context. API Gateway hands context
 * values to the integration as strings; an older authorizer may not have sent them.
 */
function cachedAccount(context: Record<string, unknown>): { zeroDataRetention: boolean; rateLimitRpm?: number } | undefined {
  const { zeroDataRetention, rateLimitRpm } = context;
  if (zeroDataRetention === undefined || rateLimitRpm === undefined) return undefined;
  const rpm = Number(rateLimitRpm);
  return { zeroDataRetention: zeroDataRetention === true || zeroDataRetention === 'true', ...(rpm > 0 ? { rateLimitRpm: rpm } : {}) };
}

/**
 * An account this process found past its rate limit this minute is refused (429) before its
 * request's body is read: a tenant sending megabytes past its limit would otherwise have each
 * parsed and checked, on the thread every tenant's requests share locally (in AWS, each in
 * a function invocation billed to the operator). Only once a request has built the gateway
 * (a process that has found nothing yet knows nothing), and with the account's limit in the
 * authorizer's context (what the reserve would count against); otherwise the reserve refuses.
 */
function knownOverLimit(built: () => Gateway | undefined): middy.MiddlewareObj<ApiEvent, ApiResult> {
  return {
    before: (request) => {
      const gateway = built();
      const context = request.event.requestContext.authorizer ?? {};
      const account = cachedAccount(context);
      if (!gateway || typeof context.accountId !== 'string' || !account) return;
      gateway.credits.refuseKnownOverLimit(context.accountId, accountRateLimit(account, gateway.config));
    },
  };
}

/** A gateway that cannot be built (configuration invalid) is a 503 that names no cause; the next invocation builds again. */
function buildOrUnavailable(gateway: () => Gateway, log: Log, requestId: string): Gateway {
  try {
    return gateway();
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    // Named only: a message may quote configuration (a key pasted into a URL's setting, say).
    log.error('Gateway not available', { requestId, errorName: (error as Error)?.name });
    throw new ServiceUnavailableError('The gateway could not load its configuration; retry shortly. Nothing was charged', UNAVAILABLE_RETRY_AFTER_SECONDS, { cause: error });
  }
}
