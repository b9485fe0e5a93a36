import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { RateLimitedError } from '../../shared/errors.js';
import { StoreUnavailableError } from '../../shared/storage/errors.js';
import { answered } from '../../shared/http/answered.js';
import { errorBody } from '../../shared/http/error-body.js';
import { bufferAnswers } from '../../functions/stream-answer.js';
import type { Log } from '../../shared/log.js';
import { logRefusedKeys } from '../../shared/orchestrator/prompt-service.js';
import type { ModelResult } from '../../shared/compare/result.js';

type Line = [level: string, message: string, fields: Record<string, unknown>];
function levelLog(): Log & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    info: (message, fields = {}) => void lines.push(['info', message, fields]),
    warn: (message, fields = {}) => void lines.push(['warn', message, fields]),
    error: (message, fields = {}) => void lines.push(['error', message, fields]),
  };
}

/** API Gateway's request ID and Lambda's invocation ID differ in AWS: every line and the header name the first. */
const event = { requestContext: { requestId: 'apigw-1', authorizer: { accountId: 'acct_1' } }, headers: {} } as unknown as APIGatewayProxyEvent;
const context = { awsRequestId: 'lambda-1' } as Context;

function handlerThrowing(error: unknown, log: Log) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(answered({ log }))
    .use(errorBody({ log }))
    .handler(async () => {
      if (error) throw error;
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
    });
}

describe('Middleware: answered', () => {
  it("stamps API Gateway's request ID on an answer and logs nothing for it", async () => {
    const log = levelLog();
    const answer = await handlerThrowing(undefined, log)(event, context);
    expect(answer.headers).toEqual({ 'content-type': 'application/json', 'x-request-id': 'apigw-1' });
    expect(log.lines).toEqual([]);
  });

  it('logs a refusal at info with its status, code and account, by the request ID its answer carries', async () => {
    const log = levelLog();
    const answer = await handlerThrowing(new RateLimitedError(60, 30), log)(event, context);
    expect(answer.statusCode).toBe(429);
    expect(answer.headers?.['x-request-id']).toBe('apigw-1');
    expect(log.lines).toEqual([['info', 'Request refused', { requestId: 'apigw-1', accountId: 'acct_1', status: 429, errorCode: 'rate_limited' }]]);
  });

  it.each([
    [1, 'Rate limit of 1 request per minute exceeded; retry after 60 s'],
    [30, 'Rate limit of 30 requests per minute exceeded; retry after 60 s'],
  ])('says the limit of %i in its 429', async (limit, message) => {
    const answer = await handlerThrowing(new RateLimitedError(60, limit), levelLog())(event, context);
    expect(JSON.parse(answer.body).error.message).toBe(message);
  });

  it('logs a store that cannot be reached by the code its answer gives (503 service_unavailable)', async () => {
    const log = levelLog();
    const answer = await handlerThrowing(new StoreUnavailableError('accounts.reserve', Object.assign(new Error('slow'), { name: 'TimeoutError' })), log)(event, context);
    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body).error.code).toBe('service_unavailable');
    expect(log.lines.at(-1)).toEqual(['warn', 'Request failed', { requestId: 'apigw-1', accountId: 'acct_1', status: 503, errorCode: 'service_unavailable' }]);
  });

  it("names a fault by the same request ID in both its lines, not Lambda's invocation ID", async () => {
    const log = levelLog();
    const answer = await handlerThrowing(new TypeError('x is not a function'), log)(event, context);
    expect(answer.statusCode).toBe(500);
    expect(log.lines).toEqual([
      ['error', 'Unhandled error', { requestId: 'apigw-1', errorName: 'TypeError' }],
      ['warn', 'Request failed', { requestId: 'apigw-1', accountId: 'acct_1', status: 500, errorCode: 'internal_error' }],
    ]);
  });
});

describe('Function: bufferAnswers, a handler that throws outside its middlewares', () => {
  it("answers the 500 with API Gateway's request ID in its header and its log line", async () => {
    const log = levelLog();
    const handler = bufferAnswers(async () => {
      throw new TypeError('x is not a function');
    }, log);
    const answer = await handler(event, context);
    expect(answer.statusCode).toBe(500);
    expect(answer.headers?.['x-request-id']).toBe('apigw-1');
    expect(log.lines).toEqual([['error', 'Unhandled error', { requestId: 'apigw-1', errorName: 'TypeError' }]]);
  });
});

describe('Function: logRefusedKeys', () => {
  const request = validatePromptRequest({
    prompt: 'Hi',
    models: ['fam_c-5.4', 'fam_g-small', 'fam_b-3.1-pro', 'fam_k-8b'],
    model_tuning: { 'fam_b-3.1-pro': { cachedContent: 'cachedContents/theirs' } },
  });
  const google = validatePromptRequest({ prompt: 'Hi', models: ['fam_b-3.5-flash', 'fam_b-3.1-flash-lite'] });
  const failed = (modelId: string, error: ModelResult['error']): ModelResult => ({
    modelId,
    status: 'failed',
    output: '',
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 1,
    providerCost: 0,
    error,
  });

  it("logs an error for a vendor that refused the gateway's key or does not serve a catalog model, a warning for one without a key, and nothing for a caller's own failures", () => {
    const log = levelLog();
    const results = [
      failed('fam_c-5.4', { code: 'upstream_error', message: 'bad key', upstreamStatus: 401 }),
      failed('fam_g-small', { code: 'provider_not_configured', message: 'no key' }),
      // A cachedContent the caller named: its 403 may be the caller's doing.
      failed('fam_b-3.1-pro', { code: 'upstream_error', message: 'forbidden', upstreamStatus: 403 }),
      failed('fam_k-8b', { code: 'upstream_error', message: 'bad request', upstreamStatus: 400 }),
      // A model its vendor no longer serves, though the catalog still names it.
      failed('fam_a-opus-4-6', { code: 'upstream_error', message: 'model: claude-opus-4-6', upstreamStatus: 404 }),
      failed('fam_i-gpt-oss-20b', { code: 'upstream_error', message: 'The model `openai/gpt-oss-20b` has been decommissioned and is no longer supported.', upstreamStatus: 400 }),
    ];
    const order = { answerA: 'a', answerB: 'b', status: 'failed' as const, verdict: null, winner: null, tokensIn: 0, tokensOut: 0, latencyMs: 1, providerCost: 0 };
    const evaluations = [
      {
        judgeModelId: 'fam_c-5.4',
        modelA: 'a',
        modelB: 'b',
        orders: [
          { ...order, error: { code: 'upstream_error', message: 'bad key', upstreamStatus: 401 } },
          { ...order, error: { code: 'upstream_error', message: 'bad key', upstreamStatus: 403 } },
        ],
      },
    ] as never[];
    logRefusedKeys(log, request, results, evaluations, { requestId: 'r1', promptLogId: 'pl_1' });
    expect(log.lines).toEqual([
      ['error', "A vendor refused the gateway's key", { requestId: 'r1', promptLogId: 'pl_1', modelId: 'fam_c-5.4', errorCode: 'upstream_error', upstreamStatus: 401 }],
      ['warn', 'No key is configured for the vendor of a requested model', { requestId: 'r1', promptLogId: 'pl_1', modelId: 'fam_g-small', errorCode: 'provider_not_configured' }],
      ['error', 'A vendor does not serve a catalog model', { requestId: 'r1', promptLogId: 'pl_1', modelId: 'fam_a-opus-4-6', errorCode: 'upstream_error', upstreamStatus: 404 }],
      [
        'error',
        'A vendor does not serve a catalog model',
        { requestId: 'r1', promptLogId: 'pl_1', modelId: 'fam_i-gpt-oss-20b', errorCode: 'upstream_error', upstreamStatus: 400 },
      ],
    ]);
    // The caller's cachedContent not found: its 404 is the caller's.
    const cached = levelLog();
    logRefusedKeys(
      cached,
      request,
      [
        failed('fam_c-5.4', undefined as never),
        failed('fam_g-small', undefined as never),
        failed('fam_b-3.1-pro', { code: 'upstream_error', message: 'not found', upstreamStatus: 404 }),
      ],
      [],
      { promptLogId: 'pl_3' },
    );
    expect(cached.lines).toEqual([]);
  });

  it("logs Google's 400 for a key it does not take as a refused key, not its other 400s", () => {
    const log = levelLog();
    const results = [
      failed('fam_b-3.5-flash', { code: 'upstream_error', message: 'INVALID_ARGUMENT: API key not valid. Please pass a valid API key.', upstreamStatus: 400 }),
      failed('fam_b-3.1-flash-lite', { code: 'upstream_error', message: 'INVALID_ARGUMENT: Request contains an invalid argument.', upstreamStatus: 400 }),
    ];
    logRefusedKeys(log, google, results, [], { promptLogId: 'pl_2' });
    expect(log.lines).toEqual([
      ['error', "A vendor refused the gateway's key", { promptLogId: 'pl_2', modelId: 'fam_b-3.5-flash', errorCode: 'upstream_error', upstreamStatus: 400 }],
    ]);
  });
});
