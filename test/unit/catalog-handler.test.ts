import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createCatalogHandler } from '../../functions/catalog-handler.js';
import { recordingLog } from '../support/log.js';

/** The event API Gateway hands the catalog function (REST, payload v1) for `method` on `resource`. */
function event(method: string, resource: string): APIGatewayProxyEvent {
  return { httpMethod: method, resource, path: resource, headers: {}, requestContext: { requestId: 'apigw-1', path: `/prod${resource}` } } as unknown as APIGatewayProxyEvent;
}

const context = { awsRequestId: 'lambda-1' } as Context;
const page = () => ({ html: '<html>{{base}}</html>', script: 'void 0;', markdown: 'void 1;', css: 'body{}' });

describe('Function: createCatalogHandler', () => {
  it.each([
    ['/api/v1/models', 'application/json; charset=utf-8'],
    ['/api/v1/openapi.json', 'application/json; charset=utf-8'],
    ['/', 'text/html; charset=utf-8'],
    ['/page.js', 'text/javascript; charset=utf-8'],
    ['/page-markdown.js', 'text/javascript; charset=utf-8'],
  ])('answers HEAD %s as GET, without the body (API Gateway hands HEAD to the function as it is)', async (resource, type) => {
    const handler = createCatalogHandler(recordingLog(), page);
    const get = await handler(event('GET', resource), context);
    const head = await handler(event('HEAD', resource), context);
    expect(get.body.length).toBeGreaterThan(0);
    expect(head).toEqual({ ...get, body: '' });
    expect(head.headers?.['content-type']).toBe(type);
  });

  it('answers a HEAD it refuses with the refusal, without its body', async () => {
    const handler = createCatalogHandler(recordingLog(), page);
    const get = await handler(event('GET', '/api/v1/nope'), context);
    const head = await handler(event('HEAD', '/api/v1/nope'), context);
    expect(get.statusCode).toBe(404);
    expect(JSON.parse(get.body).error.code).toBe('not_found');
    expect(head).toEqual({ ...get, body: '' });
  });
});
