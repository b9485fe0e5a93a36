import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { pipeAnswer, type ApiResult } from '../shared/http/event-stream.js';
import { errorResponse } from '../shared/http/response.js';
import type { Log } from '../shared/log.js';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<ApiResult>;

/** The response-streaming part of the `awslambda` global that Lambda's Node.js runtime provides. */
export interface LambdaStreamingRuntime {
  streamifyResponse(handler: (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => Promise<void>): unknown;
  HttpResponseStream: {
    /** Writes the metadata (status, headers) and the delimiter API Gateway expects before the body. */
    from(responseStream: Writable, metadata: { statusCode: number; headers?: Record<string, string>; multiValueHeaders?: Record<string, string[]> }): Writable;
  };
}

/**
 * The `api` function's entry: the answer goes out, then the invocation finishes what
 * follows it (the result's `finished`: settle, ledger, prompt log) before it ends. In AWS that is Lambda response streaming behind API Gateway's STREAM transfer
 * mode: the stream ends, and API Gateway with it answers the client, as soon as the
 * answer is written. Outside that runtime (tests, the cold-start bench) the answer is
 * returned, buffered, once that work is done (bufferAnswers).
 */
export function streamAnswers(handler: ApiHandler, log: Log, runtime: LambdaStreamingRuntime | undefined = streamingRuntime()) {
  if (!runtime) return bufferAnswers(handler, log);
  const answer = answering(handler, log);
  return runtime.streamifyResponse(async (event, responseStream, context) => {
    const result = await answer(event, context);
    try {
      const stream = runtime.HttpResponseStream.from(responseStream, {
        statusCode: result.statusCode,
        headers: mapValues(result.headers ?? {}, String),
        ...(result.multiValueHeaders ? { multiValueHeaders: mapValues(result.multiValueHeaders, (values) => values.map(String)) } : {}),
      });
      // A stream still open FINISH_MARGIN_MS before the function's timeout (a reader that stalls,
      // during the events or on the last bytes once the answer has ended: pipeAnswer waits a minute
      // for one; the run itself ends at the deadline, before) is cut then, so that the invocation
      // ends on its own, what follows the answer written.
      const left = context.getRemainingTimeInMillis?.();
      let cut = false;
      // An answer ready later than that (a fault: the deadline is 4 s before the timeout) is not cut: it has its flush's chance.
      const cutoff =
        left === undefined || left <= FINISH_MARGIN_MS
          ? undefined
          : setTimeout(() => {
              cut = true;
              stream.destroy();
            }, left - FINISH_MARGIN_MS);
      // The stream's last bytes flushed; a failure other than the cut's is the invocation's.
      const flushed = () =>
        finished(stream).catch((error: unknown) => {
          if (!cut) throw error;
        });
      try {
        if (result.eventStream) {
          // Events as they come; a caller who goes cancels the run, which still ends the stream.
          await pipeAnswer(result.eventStream, stream);
          if (!stream.destroyed) await flushed();
        } else {
          // `write`, not `end(body)`: the runtime puts the metadata and its delimiter ahead of
          // the first `write` only; a body given to `end` would go out without them (a 502).
          stream.write(result.body);
          stream.end();
          await flushed();
        }
      } finally {
        clearTimeout(cutoff);
      }
    } finally {
      // Even when the stream failed: the answer's charge and records are still written
      // (for an event stream, once its run has ended).
      await result.eventStream?.ended;
      await result.finished;
    }
  });
}

/**
 * How long before the function's timeout an event stream whose reader stalls is cut: time for
 * what follows the answer (the settle and its ledger entry, the prompt log) once the run has
 * ended, which it has by then (the request's deadline is 4 s before the timeout).
 */
export const FINISH_MARGIN_MS = 2_000;

/** The keys of a Lambda proxy-integration answer; sam-local refuses an answer with any other key. */
export const PROXY_RESULT_KEYS = ['statusCode', 'headers', 'multiValueHeaders', 'body', 'isBase64Encoded'] as const;

/**
 * The buffered entry (`cdk synth -c gateway:responseStreaming=false`, for LocalStack and
 * sam-local, which cannot stream): the invocation returns the API Gateway proxy
 * integration answer (`statusCode`, `headers`, `body`, `isBase64Encoded`) only once
 * what follows it (settle, ledger, prompt log, idempotency record) is written, even where
 * the runtime could stream.
 */
export function bufferAnswers(handler: ApiHandler, log: Log) {
  const answer = answering(handler, log);
  return async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const result = await answer(event, context);
    // An event stream comes whole, as one body, once its last event is sent.
    let body = result.body;
    if (result.eventStream) for await (const chunk of result.eventStream) body += chunk;
    await result.finished;
    return {
      statusCode: result.statusCode,
      headers: mapValues(result.headers ?? {}, String),
      ...(result.multiValueHeaders ? { multiValueHeaders: mapValues(result.multiValueHeaders, (values) => values.map(String)) } : {}),
      body,
      isBase64Encoded: result.isBase64Encoded ?? false,
    };
  };
}

/** The handler's answer; what it throws becomes the error body (a 500 that names no cause), with the request's ID as every answer has it. */
function answering(handler: ApiHandler, log: Log) {
  return (event: APIGatewayProxyEvent, context: Context): Promise<ApiResult> =>
    handler(event, context).catch((error: unknown) => {
      const requestId = event.requestContext?.requestId ?? context.awsRequestId;
      const answer = errorResponse(error, log, { requestId });
      return { ...answer, headers: { ...answer.headers, 'x-request-id': requestId } };
    });
}

/** Lambda's runtime when it streams; other code (Powertools' invoke store) may define an `awslambda` global without it. */
function streamingRuntime(): LambdaStreamingRuntime | undefined {
  const runtime = (globalThis as { awslambda?: Partial<LambdaStreamingRuntime> }).awslambda;
  return typeof runtime?.streamifyResponse === 'function' && runtime.HttpResponseStream ? (runtime as LambdaStreamingRuntime) : undefined;
}

function mapValues<T, U>(record: Record<string, T>, map: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}
