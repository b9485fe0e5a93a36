import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type middy from '@middy/core';
import type { ApiHooks } from './api-handler.js';
import { resolveModel } from '../shared/catalog/index.js';
import { failedOnVendorSide } from '../shared/compare/result.js';
import type { PromptResponse } from '../shared/orchestrator/prompt-service.js';
import type { CallHook } from '../shared/storage/dynamodb.js';
import { logger, SERVICE_NAME } from './logger.js';

/**
 * Powertools metrics (CloudWatch EMF on stdout; the namespace comes from
 * POWERTOOLS_METRICS_NAMESPACE, which the stack sets) and tracer (X-Ray; off outside
 * Lambda). Metric values and dimensions are numbers, model IDs and statuses only: never
 * a prompt, an output, a key or a header.
 */
export const metrics = new Metrics({ serviceName: SERVICE_NAME });
export const tracer = new Tracer({ serviceName: SERVICE_NAME });

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
}

export const observability: Observability = { logger, metrics, tracer };

/**
 * Store calls as X-Ray subsegments named after the operation (`DynamoDB.UpdateItem`), on
 * the invocation's segment; what `captureAWSv3Client` did for the SDK client.
 */
export function traceCalls(target: Tracer): CallHook {
  return async (name, call) => {
    const parent = target.isTracingEnabled() ? target.getSegment() : undefined;
    if (!parent) return call();
    const subsegment = parent.addNewSubsegment(name);
    subsegment.namespace = 'aws';
    try {
      return await call();
    } catch (error) {
      // Named only: a DynamoDB error's message may quote the item or the key it was about.
      const named = new Error('');
      named.name = (error as Error)?.name ?? 'Error';
      named.stack = '';
      subsegment.addError(named);
      throw error;
    } finally {
      subsegment.close();
    }
  };
}

/** Metric names, as they appear in CloudWatch. */
export const METRIC = {
  /** Per model (dimensions service, modelId, status): wall time of the model call, retries included. */
  modelLatency: 'ModelLatency',
  modelTokensIn: 'ModelTokensIn',
  modelTokensOut: 'ModelTokensOut',
  /** USD from catalog prices; absent when the vendor's usage was missing (providerCost null). */
  modelCost: 'ModelCost',
  /** 1 for a failed result, 0 for a completed one: its average is the failure rate. */
  modelFailures: 'ModelFailures',
  /** Per request (dimension service): credits charged to the account, once its settle has run (not where it failed: the reconciler decides then). */
  creditsCharged: 'CreditsCharged',
  /** Per request (dimension service): its vendor calls (models and judge calls), and those that failed on the vendor's side (failedOnVendorSide), which the VendorFailures alarm reads. */
  vendorCalls: 'VendorCalls',
  vendorFailures: 'VendorFailures',
  /** Per invocation (dimension service): every answer, and those that were 4xx or 5xx. */
  requests: 'Requests',
  clientErrors: 'ClientErrors',
  serverErrors: 'ServerErrors',
} as const;

/**
 * Per-model metrics from a prompt's response, one EMF document per model (its dimensions
 * differ), then its vendor calls and failures in one of their own, each published at once: an event-stream
 * answer is recorded once its run ends, after `logMetrics` has flushed the invocation's
 * buffer, and what it left there would go out with the container's next invocation, or
 * never. The dimension is the canonical model ID, so a model asked for by its vendor
 * spelling counts as the same model.
 */
export function recordPromptMetrics(target: Metrics, response: PromptResponse): void {
  for (const result of response.results) {
    // Dimensions apply to everything in the buffer, so each model's metrics are published
    // on their own (the buffer holds nothing else at this point of the invocation, nor once
    // it has been flushed).
    target.addDimension('modelId', resolveModel(result.modelId)?.id ?? result.modelId);
    target.addDimension('status', result.status);
    target.addMetric(METRIC.modelLatency, MetricUnit.Milliseconds, result.latencyMs);
    target.addMetric(METRIC.modelTokensIn, MetricUnit.Count, result.tokensIn);
    target.addMetric(METRIC.modelTokensOut, MetricUnit.Count, result.tokensOut);
    target.addMetric(METRIC.modelFailures, MetricUnit.Count, result.status === 'failed' ? 1 : 0);
    if (result.providerCost !== null) target.addMetric(METRIC.modelCost, MetricUnit.NoUnit, result.providerCost);
    target.publishStoredMetrics();
  }
  // Every vendor call of the request, its judges' too: an outage pages the operator, though every answer is a 200.
  const calls = [...response.results.map((result) => result.error), ...response.evaluations.flatMap((evaluation) => evaluation.orders.map((order) => order.error))];
  target.addMetric(METRIC.vendorCalls, MetricUnit.Count, calls.length);
  target.addMetric(METRIC.vendorFailures, MetricUnit.Count, calls.filter(failedOnVendorSide).length);
  target.publishStoredMetrics();
}

// biome-ignore lint/suspicious/noExplicitAny: wraps the middlewares of every handler, whatever their event and result
type AnyMiddleware = middy.MiddlewareObj<any, any>;

/**
 * Counts every answer by class, after the error handler has turned a thrown error into
 * its response; it also means an invocation always has a metric to flush.
 */
function requestMetrics(target: Metrics): AnyMiddleware {
  const count = (request: middy.Request<unknown, { statusCode?: number } | undefined>) => {
    const status = request.response?.statusCode ?? 500;
    target.addMetric(METRIC.requests, MetricUnit.Count, 1);
    target.addMetric(METRIC.clientErrors, MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0);
    target.addMetric(METRIC.serverErrors, MetricUnit.Count, status >= 500 ? 1 : 0);
  };
  return { after: count, onError: count };
}

/**
 * The Powertools middlewares, outermost first, to be used before the error handler so
 * that their `after`/`onError` run once the response exists: the logger adds the request
 * ID to every line (the event is never logged: POWERTOOLS_LOGGER_LOG_EVENT=false), the
 * tracer wraps the handler in a subsegment (its result is never recorded:
 * POWERTOOLS_TRACER_CAPTURE_RESPONSE=false), and `logMetrics` flushes the buffer once
 * per invocation, on success and on error.
 */
export function observabilityMiddlewares(o: Observability): AnyMiddleware[] {
  return [
    injectLambdaContext(o.logger, { resetKeys: true }),
    captureLambdaHandler(o.tracer, { captureResponse: false }),
    logMetrics(o.metrics, { captureColdStartMetric: true }),
    requestMetrics(o.metrics),
  ] as AnyMiddleware[];
}

/**
 * The credits a request's settle charged its account, in an EMF document of its own published
 * at once (it comes after the answer, once the invocation's buffer has been flushed). What the
 * answer said had been published instead: more than was charged where the settle found
 * otherwise.
 */
export function recordCharge(target: Metrics, credits: number): void {
  target.addMetric(METRIC.creditsCharged, MetricUnit.NoUnit, credits);
  target.publishStoredMetrics();
}

/** The api handler's Powertools hooks: logger context, tracer and metrics middlewares, the prompt metrics and the charge. */
export function apiHooks(observe: Observability): ApiHooks {
  return {
    middlewares: observabilityMiddlewares(observe),
    onResponse: (response) => recordPromptMetrics(observe.metrics, response),
    onCharged: (credits) => recordCharge(observe.metrics, credits),
  };
}
