import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunction } from '../../infra/stack/bundle.js';

/** The catalog function bundled exactly as the stack bundles it, its page files beside it. */
let dir: string;
let handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-catalog-'));
  bundleFunction('catalog', dir);
  ({ handler } = await import(pathToFileURL(join(dir, 'index.mjs')).href));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What API Gateway hands the function for GET `resource` on stage `prod` (requestContext.path as the caller typed it). */
function get(resource: string, typed: string): Promise<APIGatewayProxyResult> {
  const event = { httpMethod: 'GET', resource, path: resource, headers: {}, requestContext: { path: typed, stage: 'prod' } };
  return handler(event as unknown as APIGatewayProxyEvent, {} as Context);
}

describe('Bundle: catalog function with the comparison page', () => {
  it('carries the page, its scripts and its style sheet beside index.mjs', () => {
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['index.mjs', 'index.html', 'page.js', 'page-markdown.js', 'page.css']));
  });

  it.each(['/prod/', '/prod'])('serves GET / (typed as %s) with its script and style sheet under the stage path, and the CSP', async (typed) => {
    const answer = await get('/', typed);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers?.['content-security-policy']).toContain("default-src 'none'");
    expect(answer.body).toContain('<script src="/prod/page.js" defer></script>');
    expect(answer.body).toContain('<link rel="stylesheet" href="/prod/page.css">');
  });

  it('serves the bundled script with DOMPurify in it, and its Markdown thread with marked (each without the other)', async () => {
    const answer = await get('/page.js', '/prod/page.js');
    expect(answer.headers?.['content-type']).toBe('text/javascript; charset=utf-8');
    expect(answer.body).toContain('dompurify');
    expect(answer.body).not.toContain('marked');
    const thread = await get('/page-markdown.js', '/prod/page-markdown.js');
    expect(thread.headers?.['content-type']).toBe('text/javascript; charset=utf-8');
    expect(thread.headers?.['content-security-policy']).toContain("require-trusted-types-for 'script'");
    expect(thread.body).toContain('marked');
    expect(thread.body).not.toContain('dompurify');
  });

  it('escapes a base path into the HTML instead of letting it write markup', async () => {
    const answer = await get('/', '/a"><script>x</script>');
    expect(answer.body).not.toContain('<script>x');
    expect(answer.body).toContain('/a&quot;&gt;&lt;script&gt;x&lt;/script&gt;/page.js');
  });
});
