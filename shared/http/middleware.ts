import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { checkPromptRequest } from '../contract/validate.js';
import type { PromptRequest } from '../contract/types.js';
import { MalformedJsonError, PayloadTooLargeError, UnauthorizedError, UnsupportedMediaTypeError } from '../errors.js';
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

/**
 * One credential per request: a repeated `Authorization` header (in any letter case) is a
 * 401, whichever of its values the authorizer was given. Placed before the header
 * normalizer, which would keep only one of them.
 */
export function singleAuthorization(): Middleware {
  return {
    before: ({ event }) => {
      let values = 0;
      for (const [name, list] of Object.entries(event.multiValueHeaders ?? {})) {
        if (name.toLowerCase() === 'authorization') values += list?.length ?? 0;
      }
      if (values > 1) throw new UnauthorizedError('Send exactly one Authorization header: Authorization: Bearer <API_KEY>');
    },
  };
}

export function validateContract(): Middleware {
  return {
    before: async ({ event }) => {
      // A response_schema is compiled on the schema thread (ajv loads there, on the first one).
      event.promptRequest = await checkPromptRequest(event.json);
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
