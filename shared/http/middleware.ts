import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { validatePromptRequest } from '../contract/validate.js';
import type { PromptRequest } from '../contract/types.js';
import { MalformedJsonError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import type { Log } from '../log.js';
import { errorResponse } from './response.js';

export type ApiEvent = APIGatewayProxyEvent & { json?: unknown; promptRequest?: PromptRequest };
type Middleware = middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult>;

/**
 * JSON bodies only. `application/x-www-form-urlencoded` is accepted too because it is
 * what `curl -d` sends by default; the body must still be JSON.
 */
const ACCEPTED_TYPES = /^(application\/json|application\/[a-z0-9.+-]+\+json|application\/x-www-form-urlencoded)\s*(;.*)?$/i;

export function jsonBody(options: { limitBytes: number }): Middleware {
  return {
    before: ({ event }) => {
      const raw = event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : (event.body ?? '');
      if (Buffer.byteLength(raw, 'utf8') > options.limitBytes) throw new PayloadTooLargeError(options.limitBytes);
      const contentType = event.headers['content-type'];
      if (contentType !== undefined && !ACCEPTED_TYPES.test(contentType)) throw new UnsupportedMediaTypeError(contentType);
      try {
        event.json = JSON.parse(raw);
      } catch (error) {
        throw new MalformedJsonError(error);
      }
    },
  };
}

export function validateContract(): Middleware {
  return {
    before: ({ event }) => {
      event.promptRequest = validatePromptRequest(event.json);
    },
  };
}

/** Maps every thrown error to the error body; placed first so it sees errors of all others. */
export function errorBody(options: { log: Log }): Middleware {
  return {
    onError: (request) => {
      request.response = errorResponse(request.error, options.log, { requestId: request.context.awsRequestId });
    },
  };
}
