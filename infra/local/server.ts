import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { LIMITS } from '../../shared/contract/limits.js';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError, UnauthorizedError } from '../../shared/errors.js';
import { errorResponse } from '../../shared/http/response.js';
import type { Log } from '../../shared/log.js';
import { lambdaContext, toAuthorizerEvent, toProxyEvent } from './lambda-events.js';

export const PROMPT_PATH = '/api/v1/prompt';

export interface LocalHandlers {
  authorizer: (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
  api: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
}

/**
 * What API Gateway does in AWS, on one loopback port: the route (POST /api/v1/prompt
 * only), the payload limit, the Lambda authorizer first, then the `api` handler with the
 * authorizer's context. Every refusal uses the handler's error body.
 */
export function createLocalServer(handlers: LocalHandlers, log: Log): Server {
  return createServer((req, res) => {
    const requestId = randomUUID();
    handle(req, res, handlers, requestId).catch((error: unknown) => {
      send(res, errorResponse(error, log, { requestId }), requestId);
    });
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, handlers: LocalHandlers, requestId: string): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
  if (path !== PROMPT_PATH) return reject(req, res, new NotFoundError(path || '/'), requestId);
  if (req.method !== 'POST') return reject(req, res, new MethodNotAllowedError(req.method ?? ''), requestId);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > LIMITS.bodyBytes) return reject(req, res, new PayloadTooLargeError(LIMITS.bodyBytes), requestId, true);

  const body = await readBody(req, LIMITS.bodyBytes);
  if (body === undefined) return reject(req, res, new PayloadTooLargeError(LIMITS.bodyBytes), requestId);

  let authorizerContext: Record<string, unknown>;
  try {
    const decision = await handlers.authorizer(toAuthorizerEvent(req, PROMPT_PATH));
    authorizerContext = { ...decision.context, principalId: decision.principalId };
  } catch (error) {
    if ((error as Error).message === 'Unauthorized') return reject(req, res, new UnauthorizedError(), requestId);
    throw error;
  }
  const event = toProxyEvent(req, body, PROMPT_PATH, authorizerContext, requestId);
  send(res, await handlers.api(event, lambdaContext('api', requestId)), requestId);
}

/** The body as text, or undefined once it passes `limit` bytes (the rest is drained, not kept). */
function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reject(req: IncomingMessage, res: ServerResponse, error: Error, requestId: string, closeConnection = false): void {
  if (closeConnection) res.setHeader('connection', 'close');
  send(res, errorResponse(error), requestId);
  // Unread bodies are discarded so that a keep-alive connection stays usable.
  if (!closeConnection) req.resume();
}

function send(res: ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  if (res.headersSent) return;
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>), 'x-request-id': requestId });
  res.end(result.body);
}
