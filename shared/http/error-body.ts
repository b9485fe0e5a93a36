import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Log } from '../log.js';
import { errorResponse } from './response.js';

/** Maps every thrown error to the error body; placed first so it sees errors of all others. */
export function errorBody<E extends APIGatewayProxyEvent>(options: { log: Log }): middy.MiddlewareObj<E, APIGatewayProxyResult> {
  return {
    onError: (request) => {
      // API Gateway's ID of the request (the answer's x-request-id, the access log's), as every line of an answer names it; Powertools adds Lambda's own.
      request.response = errorResponse(request.error, options.log, { requestId: request.event.requestContext?.requestId ?? request.context.awsRequestId });
    },
  };
}
