import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Log } from '../log.js';
import { errorCode } from './response.js';

/**
 * Every answer of a handler: its `x-request-id`, API Gateway's ID of the request (the one its
 * access log records, and what a caller quotes), and for a refusal one log line naming the
 * request, its account, the status and the error code: nothing of the body. A prompt that ran
 * is logged by the prompt service once its charge is written (`Prompt completed`, with the
 * same `requestId`); a fault also has the line that names it (`Unhandled error`, `Store
 * unavailable`). Placed before `errorBody`, so that it sees the error body that one sets.
 */
/**
 * The one line of an answer that refused (4xx: `Request refused`) or failed (5xx: `Request
 * failed`), by its request's ID: its status and error code, nothing of the body; `fields` adds
 * what the caller knows (the account, that it was streamed).
 */
export function logAnswer(log: Log, error: unknown, status: number, requestId: string | undefined, fields: Record<string, unknown> = {}): void {
  const line = { requestId, ...fields, status, errorCode: errorCode(error) };
  if (status < 500) log.info('Request refused', line);
  else log.warn('Request failed', line);
}

export function answered<E extends APIGatewayProxyEvent>(options: { log: Log }): middy.MiddlewareObj<E, APIGatewayProxyResult> {
  const stamp = (request: middy.Request<E, APIGatewayProxyResult>) => {
    const requestId = request.event.requestContext?.requestId;
    if (request.response && typeof requestId === 'string') request.response.headers = { ...request.response.headers, 'x-request-id': requestId };
    return requestId;
  };
  return {
    after: (request) => {
      stamp(request);
    },
    onError: (request) => {
      const requestId = stamp(request);
      const status = request.response?.statusCode;
      if (status === undefined) return;
      const accountId = request.event.requestContext?.authorizer?.accountId;
      logAnswer(options.log, request.error, status, requestId, typeof accountId === 'string' ? { accountId } : {});
    },
  };
}
