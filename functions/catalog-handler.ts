import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { modelListing } from '../shared/catalog/listing.js';
import { openApiDocument } from '../shared/contract/openapi.js';
import { NotFoundError } from '../shared/errors.js';
import { errorBody } from '../shared/http/error-body.js';
import { lazy } from '../shared/lazy.js';
import type { Log } from '../shared/log.js';

/** The read-only routes, each answering one document that does not change while the code runs. */
export const CATALOG_PATHS = {
  models: '/api/v1/models',
  openapi: '/api/v1/openapi.json',
} as const;

const documents: Record<string, () => string> = {
  [CATALOG_PATHS.models]: lazy(() => JSON.stringify(modelListing())),
  [CATALOG_PATHS.openapi]: lazy(() => JSON.stringify(openApiDocument())),
};

/**
 * GET /api/v1/models (every model ID with its capabilities, tuning ranges and dated prices)
 * and GET /api/v1/openapi.json (the contract as OpenAPI 3.1). The authorizer has run: the
 * same key as the prompt route. Each document is serialised once per container.
 */
export function createCatalogHandler(log: Log) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(errorBody({ log }))
    .handler(async (event) => {
      const path = (event.resource || event.path).replace(/\/+$/, '');
      const document = documents[path];
      if (!document) throw new NotFoundError(path);
      return { statusCode: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }, body: document() };
    });
}
