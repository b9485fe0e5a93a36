import { readFileSync } from 'node:fs';
import { createCatalogHandler, PAGE_FILES, type PageAssets } from './catalog-handler.js';
import { logger } from './logger.js';
import { lazy } from '../shared/lazy.js';

/** The page's files, written beside this bundle by the stack's bundling (infra/stack/bundle.ts). */
const page = lazy(
  () => Object.fromEntries(Object.entries(PAGE_FILES).map(([part, file]) => [part, readFileSync(new URL(file, import.meta.url), 'utf8')])) as unknown as PageAssets,
);

/**
 * GET /api/v1/models and GET /api/v1/openapi.json, behind the same authorizer as the prompt
 * route; GET /, /page.js and /page.css (the comparison page), without it.
 */
export const handler = createCatalogHandler(logger, page);
