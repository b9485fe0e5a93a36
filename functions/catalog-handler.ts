import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { modelListingJson } from '../shared/catalog/listing.js';
import { openApiDocument } from '../shared/contract/openapi.js';
import { NotFoundError } from '../shared/errors.js';
import { answered } from '../shared/http/answered.js';
import { errorBody } from '../shared/http/error-body.js';
import { repeatedHeaders } from '../shared/http/single-headers.js';
import { lazy } from '../shared/lazy.js';
import type { Log } from '../shared/log.js';
import { withoutTrailingSlashes } from '../shared/text/trailing-slashes.js';

/** The read-only routes, each answering one document that does not change while the code runs. */
export const CATALOG_PATHS = {
  models: '/api/v1/models',
  openapi: '/api/v1/openapi.json',
} as const;

/** The comparison page's routes: public (no key), the same for everyone. `''` is `GET /`. */
export const PAGE_PATHS = { html: '', script: '/page.js', markdown: '/page-markdown.js', css: '/page.css' } as const;

/**
 * The page as served: the HTML (`{{base}}` marks where its script and style sheet live), its
 * bundled script, the script of its Markdown thread (a worker the page starts) and its style sheet.
 */
export interface PageAssets {
  html: string;
  script: string;
  markdown: string;
  css: string;
}

/** The page's files beside the catalog function's bundle (infra/stack/bundle.ts writes them). */
export const PAGE_FILES: Readonly<Record<keyof PageAssets, string>> = { html: 'index.html', script: 'page.js', markdown: 'page-markdown.js', css: 'page.css' };

/**
 * Nothing runs but the page's own scripts, nothing is fetched but from this origin (the
 * API), no plugin, frame, form target or <base>; every HTML sink takes only what the
 * 'dompurify' Trusted Types policy returns, and a worker only the Markdown thread's script
 * ('markdown-thread', main.ts).
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types dompurify markdown-thread',
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-cache',
};

const PAGE_TYPES: Readonly<Record<keyof PageAssets, string>> = {
  html: 'text/html; charset=utf-8',
  script: 'text/javascript; charset=utf-8',
  markdown: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * The folder the page is served from, as the browser sees it: the stage (or custom domain
 * base path) API Gateway put before `/`, always with a trailing slash, so that the page's
 * script and its API calls resolve under it whether or not the caller typed that slash.
 */
function pageBase(event: APIGatewayProxyEvent): string {
  // Slashes in a row are one: the page asked for at `//` had named its script `//page.js`, a URL of another host.
  const path = (event.requestContext?.path || '/').replace(/\/{2,}/g, '/');
  return (path.endsWith('/') ? path : `${path}/`).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

function pageResponse(page: PageAssets, part: keyof PageAssets, event: APIGatewayProxyEvent): APIGatewayProxyResult {
  const body = part === 'html' ? page.html.replaceAll('{{base}}', pageBase(event)) : page[part];
  return { statusCode: 200, headers: { 'content-type': PAGE_TYPES[part], ...PAGE_HEADERS }, body };
}

const documents: Record<string, () => string> = {
  [CATALOG_PATHS.models]: () => modelListingJson(),
  [CATALOG_PATHS.openapi]: lazy(() => JSON.stringify(openApiDocument())),
};

const PAGE_PARTS = new Map<string, keyof PageAssets>(Object.entries(PAGE_PATHS).map(([part, path]) => [path, part as keyof PageAssets]));

/**
 * GET /api/v1/models (every model ID with its capabilities, tuning ranges and dated prices)
 * and GET /api/v1/openapi.json (the contract as OpenAPI 3.1), after the authorizer: the
 * same key as the prompt route. Each document is serialised once per container (the models'
 * again when a model's retirement takes effect). And the
 * comparison page (GET /, /page.js, /page-markdown.js, /page.css; no key) from `page`, read on first use.
 */
export function createCatalogHandler(log: Log, page?: () => PageAssets) {
  return (
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      // HEAD, which each GET route takes: the GET's answer, a refusal's too, without its body (outermost: it sees the last word).
      .use({ after: withoutBodyForHead, onError: withoutBodyForHead })
      .use(answered({ log }))
      .use(errorBody({ log }))
      // A repeated Authorization is refused (401) as on the prompt route, not read as its first value.
      .use(repeatedHeaders())
      .handler(async (event) => {
        const path = withoutTrailingSlashes(event.resource || event.path);
        const part = PAGE_PARTS.get(path);
        if (part && page) return pageResponse(page(), part, event);
        const document = documents[path];
        if (!document) throw new NotFoundError(path);
        return { statusCode: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }, body: document() };
      })
  );
}

function withoutBodyForHead(request: { event: APIGatewayProxyEvent; response: APIGatewayProxyResult | null | undefined }): void {
  if (request.event.httpMethod === 'HEAD' && request.response) request.response = { ...request.response, body: '' };
}
