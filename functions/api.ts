import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { loadConfig } from '../shared/config.js';
import { LIMITS } from '../shared/contract/limits.js';
import { UnauthorizedError } from '../shared/errors.js';
import { createGateway, type Gateway } from '../shared/gateway.js';
import { errorBody, jsonBody, validateContract, type ApiEvent } from '../shared/http/middleware.js';
import { jsonResponse } from '../shared/http/response.js';
import type { Log } from '../shared/log.js';
import { lazy } from './lazy.js';
import { logger } from './logger.js';

/** POST /api/v1/prompt. The authorizer has run; the account comes from its context only. */
export function createApiHandler(gateway: () => Gateway, log: Log) {
  return middy<ApiEvent, APIGatewayProxyResult>()
    .use(errorBody({ log }))
    .use(httpHeaderNormalizer())
    .use(jsonBody({ limitBytes: LIMITS.bodyBytes }))
    .use(validateContract())
    .handler(async (event) => {
      const accountId = event.requestContext.authorizer?.accountId;
      if (typeof accountId !== 'string' || !event.promptRequest) throw new UnauthorizedError();
      const idempotencyKey = event.headers['idempotency-key'];
      const response = await gateway().prompts.submit(accountId, event.promptRequest, { idempotencyKey });
      return jsonResponse(200, response);
    });
}

export const handler = createApiHandler(
  lazy(() => createGateway(loadConfig(), { log: logger })),
  logger,
);
