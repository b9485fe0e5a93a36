import type { APIGatewayProxyResult } from 'aws-lambda';
import { GatewayError, ServiceUnavailableError } from '../errors.js';
import { StoreUnavailableError } from '../storage/errors.js';
import type { Log } from '../log.js';
import { jsonText } from '../text/json-text.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...JSON_HEADERS, ...headers }, body: jsonText(body) };
}

/** The code of the error body errorResponse answers `error` with. */
export function errorCode(error: unknown): string {
  if (error instanceof StoreUnavailableError) return 'service_unavailable';
  return error instanceof GatewayError ? error.code : 'internal_error';
}

/**
 * The one error body: {"error": {"code", "message", "details"?}} plus a GatewayError's
 * extras at the top level. Anything that is not a GatewayError is a 500 whose message
 * says nothing of the cause (it is logged, without content, instead).
 */
export function errorResponse(error: unknown, log?: Log, context: Record<string, unknown> = {}): APIGatewayProxyResult {
  if (error instanceof StoreUnavailableError) {
    log?.warn('Store unavailable', { ...context, operation: error.operation, throttled: error.throttled, errorName: (error.cause as Error)?.name });
    return errorResponse(new ServiceUnavailableError('The gateway is busy; retry shortly. Nothing was charged', 1));
  }
  if (error instanceof GatewayError) {
    const details = 'details' in error ? (error as { details: unknown }).details : undefined;
    return jsonResponse(error.status, { error: { code: error.code, message: error.message, ...(details ? { details } : {}) }, ...error.extras() }, error.headers());
  }
  // Named only (and its code, when it has one): a message may quote the request, which redaction by key patterns does not catch.
  const code = (error as { code?: unknown })?.code;
  log?.error('Unhandled error', { ...context, errorName: (error as Error)?.name, ...(typeof code === 'string' || typeof code === 'number' ? { errorCode: code } : {}) });
  return jsonResponse(500, { error: { code: 'internal_error', message: 'The gateway failed; the request was not charged' } });
}
