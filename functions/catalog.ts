import { createCatalogHandler } from './catalog-handler.js';
import { logger } from './logger.js';

/** GET /api/v1/models and GET /api/v1/openapi.json, behind the same authorizer as the prompt route. */
export const handler = createCatalogHandler(logger);
