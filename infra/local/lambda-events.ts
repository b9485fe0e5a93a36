import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import type { CallerGone } from '../../functions/api-handler.js';

const ACCOUNT = '000000000000';
const API_ID = 'local';
const STAGE = 'local';

/** The event API Gateway's TOKEN authorizer receives for this request. */
export function toAuthorizerEvent(req: IncomingMessage, resourcePath: string): APIGatewayTokenAuthorizerEvent {
  return {
    type: 'TOKEN',
    authorizationToken: header(req, 'authorization') ?? '',
    methodArn: `arn:aws:execute-api:us-east-1:${ACCOUNT}:${API_ID}/${STAGE}/${req.method}${resourcePath}`,
  };
}

/**
 * A request target as a URL: a path (`//api/...` read against a base would take `api` for a host
 * name, and `//` or `//%zz` would throw), or a whole URL. The one reading of the routing and of
 * the event's path.
 */
export function requestUrl(target: string): URL {
  return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target, 'http://localhost');
}

/**
 * The REST API (v1) proxy event the `api` Lambda receives, with the authorizer's context.
 * A body given as bytes that are not valid UTF-8 is handed over base64-encoded, as API
 * Gateway hands over a body it cannot pass as text; otherwise as text.
 */
export function toProxyEvent(req: IncomingMessage, body: string | Buffer, resourcePath: string, authorizer: Record<string, unknown>, requestId: string): APIGatewayProxyEvent {
  // Gathered in maps and made objects as JSON.parse makes API Gateway's: a header named
  // `constructor` or `__proto__` is an own member like any other, never one it inherits.
  const single = new Map<string, string>();
  const multiple = new Map<string, string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const value = req.rawHeaders[i + 1] as string;
    single.set(name, value);
    const values = multiple.get(name) ?? [];
    multiple.set(name, values);
    values.push(value);
  }
  const headers: Record<string, string> = Object.fromEntries(single);
  const multiValueHeaders: Record<string, string[]> = Object.fromEntries(multiple);
  const url = requestUrl(req.url ?? '/');
  return {
    resource: resourcePath,
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    ...(typeof body !== 'string' && !isUtf8(body) ? { body: body.toString('base64'), isBase64Encoded: true } : { body: body.toString(), isBase64Encoded: false }),
    requestContext: {
      accountId: ACCOUNT,
      apiId: API_ID,
      authorizer,
      protocol: 'HTTP/1.1',
      httpMethod: req.method ?? 'GET',
      identity: {} as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      stage: STAGE,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath,
    },
  };
}

export function lambdaContext(functionName: string, requestId: string = randomUUID(), timeoutMs = 29_000, callerGone?: AbortSignal): Context & CallerGone {
  const deadline = Date.now() + timeoutMs;
  return {
    ...(callerGone ? { callerGone } : {}),
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
