import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHandler, receivedAt } from '../../functions/api-handler.js';
import { bufferAnswers, PROXY_RESULT_KEYS } from '../../functions/stream-answer.js';
import type { LocalHost } from '../../infra/local/host.js';
import { lambdaContext } from '../../infra/local/lambda-events.js';
import { silentLog } from '../../shared/log.js';
import { body } from '../support/fixtures.js';
import { startTestHost } from '../support/local.js';

/**
 * The `api` function's buffered entry (`-c gateway:responseStreaming=false`, for LocalStack
 * and sam-local) over the real gateway: embedded store, provider simulator. Its answer is
 * what those emulators parse as a Lambda proxy integration answer, and it comes only once
 * the request's credits are settled and its records written.
 */

let host: LocalHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(async () => {
  await host?.close();
});

function proxyEvent(accountId: string, payload: unknown): APIGatewayProxyEvent {
  return {
    resource: '/api/v1/prompt',
    path: '/api/v1/prompt',
    httpMethod: 'POST',
    headers: { Authorization: 'Bearer unused-the-authorizer-has-run', 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: JSON.stringify(payload),
    isBase64Encoded: false,
    requestContext: { authorizer: { accountId }, requestId: 'req-buffered', path: '/api/v1/prompt' } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

describe('Function: bufferAnswers (the api entry without response streaming)', () => {
  it('answers the proxy-integration JSON (statusCode, headers, body, isBase64Encoded) only after the balance is settled', async () => {
    // Prepare: a fresh account, and a record of what finished first.
    const { accountId } = await host.gateway.credits.openAccount({ balanceMicro: 50_000_000, rateLimitRpm: 1000 });
    const order: string[] = [];
    const api = createApiHandler(() => host.gateway, silentLog);
    const handler = bufferAnswers(async (event, context) => {
      const answered = await api(event, context);
      // The writes that follow the answer travel with it: noted as they end.
      return { ...answered, finished: answered.finished?.then(() => void order.push('settled')) };
    }, silentLog);

    // Act
    const result = await handler(proxyEvent(accountId, body({ models: ['fam_k-8b', 'fam_c-4o'] })), lambdaContext('api'));
    order.push('answered');

    // Assess: exactly the keys sam-local accepts, each of the type it parses.
    expect(Object.keys(result).every((key) => (PROXY_RESULT_KEYS as readonly string[]).includes(key))).toBe(true);
    expect(result).toMatchObject({ statusCode: 200, isBase64Encoded: false });
    expect(typeof result.body).toBe('string');
    expect(Object.values(result.headers ?? {}).every((value) => typeof value === 'string')).toBe(true);
    // The request's ID as API Gateway gave it (its access log records it): what a caller quotes.
    expect(result.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-buffered' });
    const answer = JSON.parse(result.body) as { promptLogId: string; creditsUsed: number; results: { status: string }[] };
    expect(answer.results.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(answer.creditsUsed).toBeGreaterThan(0);

    // Assess: settled before it answered, read at once with nothing awaited in between.
    expect(order).toEqual(['settled', 'answered']);
    const account = (await host.gateway.accounts.get(accountId))!;
    expect(account.reservations).toEqual({});
    expect(account.balanceMicro).toBe(50_000_000 - Math.round(answer.creditsUsed * 1e6));
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(account.balanceMicro);
    expect(await host.gateway.promptLogs.get(answer.promptLogId)).toBeDefined();
  });

  it("counts the request from when API Gateway received it (its requestTimeEpoch), as the integration timeout does: a cold start's wait comes out of the deadline", async () => {
    const { accountId } = await host.gateway.credits.openAccount({ balanceMicro: 50_000_000, rateLimitRpm: 1000 });
    const handler = bufferAnswers(
      createApiHandler(() => host.gateway, silentLog),
      silentLog,
    );
    const event = proxyEvent(accountId, body({ models: ['fam_k-8b'] }));
    const received = Date.now() - 2_000;
    (event.requestContext as { requestTimeEpoch: number }).requestTimeEpoch = received;

    const answer = JSON.parse((await handler(event, lambdaContext('api'))).body) as { promptLogId: string };

    expect((await host.gateway.promptLogs.get(answer.promptLogId))!.createdAt).toBe(new Date(received).toISOString());
  });

  it.each([
    ['2 s before now', -2_000, -2_000],
    ['after now (a clock ahead)', 5_000, 0],
    ['an hour before (a clock behind)', -3_600_000, -10_000],
  ])('takes a requestTimeEpoch %s as %i ms from now', (_, offset, expected) => {
    const now = 1_800_000_000_000;
    const event = { requestContext: { requestTimeEpoch: now + offset } } as unknown as Parameters<typeof receivedAt>[0];
    expect(receivedAt(event, now) - now).toBe(expected);
    expect(receivedAt({ requestContext: {} } as unknown as Parameters<typeof receivedAt>[0], now)).toBe(now);
  });

  it('answers a refusal in the same shape, with the error body naming the field, and charges nothing', async () => {
    const { accountId } = await host.gateway.credits.openAccount({ balanceMicro: 5_000_000, rateLimitRpm: 1000 });
    const handler = bufferAnswers(
      createApiHandler(() => host.gateway, silentLog),
      silentLog,
    );

    const result = await handler(proxyEvent(accountId, { models: ['fam_k-8b'] }), lambdaContext('api'));

    expect(result).toMatchObject({ statusCode: 400, isBase64Encoded: false, headers: { 'x-request-id': 'req-buffered' } });
    expect(Object.keys(result).every((key) => (PROXY_RESULT_KEYS as readonly string[]).includes(key))).toBe(true);
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'invalid_request', details: [expect.objectContaining({ field: '/prompt' })] } });
    expect((await host.gateway.accounts.get(accountId))!.balanceMicro).toBe(5_000_000);
  });
});
