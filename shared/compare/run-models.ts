import { setMaxListeners } from 'node:events';
import { schemaChecker } from '../contract/schema-checker.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { redactSecrets } from '../http/redact.js';
import { chargeCall } from '../pricing/charge.js';
import { UpstreamError } from '../providers/errors.js';
import { withRetry, type RetryPolicy } from '../providers/retry.js';
import type { Route, Router } from '../providers/router.js';
import type { ModelCall, ModelReply, Usage } from '../providers/types.js';
import { toModelCall } from './model-call.js';
import type { ModelResult } from './result.js';

export interface FanOutOptions {
  route: Router;
  /** Epoch ms by which every model call must have ended. */
  deadlineAt: number;
  retry?: RetryPolicy;
  /**
   * Given, every call is prepared at once (mapped and serialised; Bedrock's signed) but none
   * is sent before it resolves: the prompt service passes its reserve, so that the calls
   * are built while the store answers and nothing reaches a provider unreserved. Should it
   * reject, nothing is sent and every result fails. Latencies count from when it resolved.
   */
  ready?: Promise<unknown>;
  /**
   * Given, each model's call is streamed (the adapter's `stream`) and its text handed here
   * as the vendor sends it, by the model's position in `request.models`; `onResult` hears
   * each result as its model ends. The JSON answer passes neither and calls `send`.
   */
  onDelta?: (index: number, text: string) => void;
  onResult?: (index: number, result: ModelResult) => void;
  /**
   * The caller's own abort (an event-stream caller who disconnected). The calls end at
   * once; each is charged what it used (the usage the vendor reported so far, else the
   * missing-usage estimate from its input and the text received) and reported with the
   * status `cancelled`.
   */
  signal?: AbortSignal;
}

/**
 * Every model at once, on one abort signal that fires at the deadline (one timer per
 * request, not per model); a model that fails becomes a failed result and never fails
 * the others. Results keep request order.
 */
export async function runModels(request: PromptRequest, options: FanOutOptions): Promise<ModelResult[]> {
  const controller = new AbortController();
  // Each model's call listens on it: as many listeners as models, none of them a leak.
  setMaxListeners(0, controller.signal);
  const timer = setTimeout(() => controller.abort(), Math.max(0, options.deadlineAt - Date.now()));
  const cancel = () => controller.abort(options.signal?.reason);
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
    return await Promise.all(
      request.models.map(async (model, index) => {
        const result = await runModel(request, model, index, options, controller.signal, ready);
        options.onResult?.(index, result);
        return result;
      }),
    );
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', cancel);
  }
}

async function runModel(request: PromptRequest, model: RequestedModel, index: number, options: FanOutOptions, signal: AbortSignal, ready?: Promise<void>): Promise<ModelResult> {
  let started = performance.now();
  /** When the attempt that answered began: what a time-of-day vendor bills by. */
  let attemptStartedAt = Date.now();
  // Timed (and billed by the time of day) from when the call may go out, before the call itself hears.
  ready?.then(
    () => {
      started = performance.now();
      attemptStartedAt = Date.now();
    },
    () => undefined,
  );
  const { call, warnings } = toModelCall(request, model);
  let apiKey: string | undefined;
  /** The text streamed so far: what a cancelled call is charged for when its vendor reported no usage. */
  let streamed = '';
  try {
    const route = options.route(model.entry);
    apiKey = route.endpoint.apiKey;
    const { value: reply } = await withRetry(
      () => {
        attemptStartedAt = Date.now();
        if (!options.onDelta) return route.adapter.send(call, route.endpoint, signal, ready);
        const onDelta = options.onDelta;
        return streamAttempt(route, call, signal, ready, (text) => {
          streamed += text;
          onDelta(index, text);
        });
      },
      {
        policy: options.retry,
        deadlineAt: options.deadlineAt,
        signal,
      },
    );
    const latencyMs = Math.round(performance.now() - started);
    const charge = chargeCall(call, reply.usage, reply.output, attemptStartedAt);
    const allWarnings = [...warnings, ...reply.warnings, ...(charge.kind === 'estimated' ? [charge.warning] : [])];
    return {
      modelId: model.requestedId,
      status: 'completed',
      output: reply.output,
      ...(charge.kind === 'observed'
        ? { tokensIn: charge.usage.inputTokens, tokensOut: charge.usage.outputTokens, latencyMs, providerCost: charge.providerCost, usage: tokenClasses(charge.usage) }
        : { tokensIn: 0, tokensOut: 0, latencyMs, providerCost: null, estimatedCost: charge.estimatedCost }),
      ...(request.outputSchema !== undefined ? { structuredOutput: await schemaChecker().check(reply.output, request.outputSchema) } : {}),
      ...(allWarnings.length > 0 ? { warnings: allWarnings } : {}),
    };
  } catch (error) {
    if (options.signal?.aborted && error instanceof UpstreamError) {
      return cancelledResult(model, call, error, streamed, attemptStartedAt, Math.round(performance.now() - started), warnings);
    }
    return {
      modelId: model.requestedId,
      status: 'failed',
      output: '',
      tokensIn: 0,
      tokensOut: 0,
      latencyMs: Math.round(performance.now() - started),
      providerCost: 0,
      error: toResultError(error, apiKey),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }
}

/**
 * One streamed attempt, through the adapter's `stream`. An attempt that fails after some of its
 * text went out is not retried: the caller has that text already, and a second attempt
 * would send different text after it.
 */
async function streamAttempt(route: Route, call: ModelCall, signal: AbortSignal, ready: Promise<void> | undefined, onDelta: (text: string) => void): Promise<ModelReply> {
  let sent = false;
  const deliver = (text: string) => {
    if (text.length === 0) return;
    sent = true;
    onDelta(text);
  };
  try {
    return await route.adapter.stream(call, route.endpoint, signal, deliver, ready);
  } catch (error) {
    if (sent && error instanceof UpstreamError && error.retryable) throw new UpstreamError(error.code, error.message, { ...error.details, retryable: false });
    throw error;
  }
}

/**
 * A call stopped because its caller disconnected: cancelled (no output is answered), and
 * charged what it used, as the vendor bills it: the usage it reported before the stop, or
 * where none arrived, the missing-usage estimate from its input and the text received.
 */
function cancelledResult(
  model: RequestedModel,
  call: ModelCall,
  error: UpstreamError,
  streamed: string,
  attemptStartedAt: number,
  latencyMs: number,
  warnings: string[],
): ModelResult {
  const partial = error.details.partial;
  const received = partial && partial.output.length > streamed.length ? partial.output : streamed;
  const charge = chargeCall(call, partial?.usage, received, attemptStartedAt);
  const allWarnings = [...warnings, ...(charge.kind === 'estimated' ? [charge.warning] : [])];
  return {
    modelId: model.requestedId,
    status: 'cancelled',
    output: '',
    ...(charge.kind === 'observed'
      ? { tokensIn: charge.usage.inputTokens, tokensOut: charge.usage.outputTokens, latencyMs, providerCost: charge.providerCost }
      : { tokensIn: 0, tokensOut: 0, latencyMs, providerCost: null, estimatedCost: charge.estimatedCost }),
    error: { code: 'cancelled', message: 'The caller disconnected: the call was stopped and charged what it had used' },
    ...(allWarnings.length > 0 ? { warnings: allWarnings } : {}),
  };
}

/** The token classes beside tokensIn/tokensOut, for callers who price or audit them. */
function tokenClasses(usage: Usage): NonNullable<ModelResult['usage']> {
  return {
    cachedTokensIn: usage.cachedInputTokens,
    cacheWriteTokensIn: usage.cacheWriteTokens,
    reasoningTokensOut: usage.reasoningTokens,
  };
}

/** The failure as the answer reports it; vendors quote the key they were sent, so keys are redacted from the message. */
function toResultError(error: unknown, apiKey: string | undefined): NonNullable<ModelResult['error']> {
  if (error instanceof UpstreamError) {
    const { upstreamStatus } = error.details;
    return { code: error.code, message: redactSecrets(error.message, [apiKey]), ...(upstreamStatus !== undefined ? { upstreamStatus } : {}) };
  }
  // An adapter bug must not leak internals (or content) into the answer.
  return { code: 'internal_error', message: 'The gateway failed to call this model' };
}
