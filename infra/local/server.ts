import { BoundedMap } from '../../shared/bounded-map.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { LIMITS } from '../../shared/contract/limits.js';
import {
  BadRequestError,
  type GatewayError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  routeMethods,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../../shared/errors.js';
import { acceptsEventStream, pipeAnswer, wholeAnswer, WRITE_SLICE_CHARS, type ApiResult, type EventStream } from '../../shared/http/event-stream.js';
import { logAnswer } from '../../shared/http/answered.js';
import { errorResponse } from '../../shared/http/response.js';
import type { Log } from '../../shared/log.js';
import { withoutTrailingSlashes } from '../../shared/text/trailing-slashes.js';
import { CATALOG_PATHS, PAGE_PATHS } from '../../functions/catalog-handler.js';
import { lambdaContext, requestUrl, toAuthorizerEvent, toProxyEvent } from './lambda-events.js';

export const PROMPT_PATH = '/api/v1/prompt';

/** The routes, as API Gateway has them: each path, its one method, the handler behind it, and whether the authorizer runs first. */
const ROUTES: Readonly<Record<string, { method: 'GET' | 'POST'; handler: 'api' | 'catalog'; public?: true }>> = {
  [PROMPT_PATH]: { method: 'POST', handler: 'api' },
  [CATALOG_PATHS.models]: { method: 'GET', handler: 'catalog' },
  [CATALOG_PATHS.openapi]: { method: 'GET', handler: 'catalog' },
  ...Object.fromEntries(Object.values(PAGE_PATHS).map((path) => [path, { method: 'GET', handler: 'catalog', public: true } as const])),
};

export interface LocalHandlers {
  authorizer: (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;
  /** Its answer may be an event stream (Accept: text/event-stream): written as it comes. */
  api: (event: APIGatewayProxyEvent, context: Context) => Promise<ApiResult>;
  /** GET /api/v1/models and GET /api/v1/openapi.json; the comparison page (GET /, /page.js, /page-markdown.js, /page.css). */
  catalog: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
}

/**
 * How long a client may take to send a request's headers, and the whole request with its body,
 * before it is answered 408 and its connection closed. API Gateway gives no more: its idle
 * connection timeout is 10 s and its integration timeout 29 s (Node's own defaults, 60 s and
 * 300 s, let a client that sends a byte now and then hold a connection for minutes).
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The most connections the host holds at once, well below its file descriptor limit (each also
 * needs descriptors for its vendor calls): past it a new connection is closed at once (Node's
 * server `drop`), where 27,000 idle half-sent requests had used up every descriptor of the process.
 */
export const MAX_CONNECTIONS = 4_096;

/** How often answersWritten looks at what the answers' connections have handed on. */
const WRITE_CHECK_MS = 100;

export interface LocalServerOptions {
  /** The `api` handler's time a request (its Lambda context's), as the function's timeout in AWS: the request deadline and FUNCTION_MARGIN_MS. */
  apiTimeoutMs?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** By default MAX_CONNECTIONS, or a quarter of the process's file descriptor limit when that is lower (fileLimit). */
  maxConnections?: number;
}

/** The process's soft limit on open files, read from /proc on Linux; undefined elsewhere. */
function fileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** MAX_CONNECTIONS, or a quarter of the file descriptor limit when that is lower. */
export function connectionCap(limit = fileLimit()): number {
  return limit === undefined ? MAX_CONNECTIONS : Math.max(1, Math.min(MAX_CONNECTIONS, Math.floor(limit / 4)));
}

/** A request whose client went away before its body was read: its connection is closed, nothing answered or logged. */
class ClientGoneError extends Error {
  override name = 'ClientGoneError';
}

/** The local server, and what it is still writing. */
export interface LocalServer extends Server {
  /**
   * Resolves once every answer begun has been written whole (or its connection has closed):
   * an event stream's queued events, a large answer to a slow reader; or once none of them has
   * been taken further for `stalledMs` (a reader that has stopped reading).
   */
  answersWritten(stalledMs: number): Promise<void>;
  /** Connections with a request being read, run or answered. */
  answering(): number;
}

/**
 * What API Gateway does in AWS, on one loopback port: the route (POST /api/v1/prompt
 * only), the payload limit, the Lambda authorizer first, then the `api` handler with the
 * authorizer's context, and what that handler writes after its answer once the answer
 * is sent. Every refusal uses the handler's error body. A request is given
 * HEADERS_TIMEOUT_MS for its headers and REQUEST_TIMEOUT_MS in all (408), and the host
 * holds at most `connectionCap()` connections.
 */
export function createLocalServer(handlers: LocalHandlers, log: Log, options: LocalServerOptions = {}): LocalServer {
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // A request without Host reaches `handle`, which refuses it with the error body; Node would answer it bare.
  // The timeouts are checked every connectionsCheckingInterval (30 s by default: a 10 s timeout would take up to 40).
  const serverOptions = { requireHostHeader: false, headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(1, Math.min(1_000, Math.floor(headersTimeout / 4))) };
  const serving: Serving = { handlers, log, stopping: () => !server.listening, apiTimeoutMs: options.apiTimeoutMs };
  // The answers being written, each until its connection is done with it.
  const writing = new Set<ServerResponse>();
  let allWritten: (() => void) | undefined;
  const server = createServer(serverOptions, (req, res) => {
    // Pipelined behind an answer that closes the connection (a refusal, a later request's client
    // error): not run, as its answer could not go (it had run, and been charged, unanswered).
    if (closing.has(req.socket)) return void req.resume();
    writing.add(res);
    const written = () => {
      if (!writing.delete(res)) return;
      if (writing.size === 0) allWritten?.();
    };
    // An answer queued behind another (pipelined) hears no 'close' of its own when its connection
    // goes: it had been counted as being written for ever, and a host's close waited a minute on it.
    const forget = awaitingOn(req.socket, written);
    res.once('close', () => {
      forget();
      written();
    });
    const requestId = randomUUID();
    // Stopping (the host's close() stopped listening): a request that comes on a connection
    // still open is refused cleanly, and every answer still to go closes its connection,
    // rather than the close that ends the host resetting a request half read.
    if (!server.listening) return reject(req, res, stoppingError(), requestId, log, true);
    handle(req, res, requestId, serving).catch((error: unknown) => {
      // The caller went away mid-body: no one to answer, nothing went wrong here.
      if (error instanceof ClientGoneError) return void req.socket.destroy();
      void send(res, errorResponse(error, log, { requestId }), requestId);
    });
  });
  server.maxConnections = options.maxConnections ?? connectionCap();
  // Every header read, as API Gateway reads them: past Node's default 2,000 they were dropped
  // unseen (a second Authorization or Content-Type among them). The 16 KiB of headers bound them.
  server.maxHeadersCount = 0;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, writing));
  // CONNECT (a tunnel, which Node hands over as a socket, not a request): Node closed such a
  // connection without a word; answered as any other method a route does not take, or a
  // target that is no route's path.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const target = req.url ?? '';
    // A CONNECT's target is an authority (host:port) in HTTP, never a path: only a path is read as one.
    const path = target.startsWith('/') ? routePath(target) : undefined;
    const route = routeOf(path);
    const error =
      path === undefined
        ? new BadRequestError('The request target is not a valid path')
        : route
          ? new MethodNotAllowedError('CONNECT', route.method)
          : new NotFoundError(path || '/');
    const requestId = randomUUID();
    logAnswer(log, error, error.status, requestId);
    answerOnSocket(socket, error, requestId);
  });
  // Expect: 100-continue (curl sends it for bodies over 1 MiB): the go-ahead only for a body
  // that fits. A larger one is refused before its client sends it; sent, the close that
  // follows the 413 would meet its bytes, and the reset could cut the 413 away.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length'] ?? 0) > LIMITS.bodyBytes)) res.writeContinue();
    server.emit('request', req, res);
  });
  // An Expect other than 100-continue: 417, as Node answers it, with the error body Node leaves out.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    reject(req, res, new BadRequestError('Only "Expect: 100-continue" is supported', 417), randomUUID(), log, true);
  });
  return Object.assign(server, {
    answering: () => writing.size,
    answersWritten: (stalledMs: number) =>
      new Promise<void>((resolve) => {
        if (writing.size === 0) return resolve();
        // The bytes the connections' readers have taken, and their callers sent (a body still
        // arriving): unchanged for stalledMs, they have stopped.
        const handedOn = () => {
          let bytes = 0;
          for (const res of writing) bytes += res.socket ? moved(res.socket) : 0;
          return bytes;
        };
        let last = handedOn();
        let still = 0;
        const timer = setInterval(() => {
          const bytes = handedOn();
          still = bytes === last ? still + WRITE_CHECK_MS : 0;
          last = bytes;
          if (still >= stalledMs) done();
        }, WRITE_CHECK_MS);
        const done = () => {
          clearInterval(timer);
          allWritten = undefined;
          resolve();
        };
        allWritten = done;
      }),
  });
}

/**
 * The bytes a connection has moved: read from its caller, and written to the kernel for its
 * reader (the answer's pieces, 64 KiB each, less what waits in the socket's buffer and in
 * libuv's queue, which shrinks as the reader takes them): a slow reader moves it between pieces.
 */
function moved(socket: Socket): number {
  const queued = (socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
  return socket.bytesRead + socket.bytesWritten - socket.writableLength - queued;
}

const AUTHORIZER_CACHE_ENTRIES = 10_000;

/**
 * API Gateway's authorizer cache: an Allow decision is reused for the same Authorization
 * value for `ttlMs` (so a revoked key works until then, in AWS and here alike); refusals
 * are not cached. 0 turns it off.
 */
export function cacheAuthorizer(authorizer: LocalHandlers['authorizer'], ttlMs: number, now: () => number = Date.now): LocalHandlers['authorizer'] {
  if (ttlMs <= 0) return authorizer;
  const cache = new BoundedMap<string, { decision: APIGatewayAuthorizerResult; until: number }>(AUTHORIZER_CACHE_ENTRIES);
  return async (event) => {
    const hit = cache.get(event.authorizationToken);
    if (hit && hit.until > now()) return hit.decision;
    const decision = await authorizer(event);
    cache.set(event.authorizationToken, { decision, until: now() + ttlMs });
    return decision;
  };
}

/**
 * A request that is not valid HTTP (headers over Node's 16 KiB limit, a broken request
 * line) never reaches a handler; Node would answer it with a bare status and no body.
 * It gets the error body too, as API Gateway's own 4xx answers do in AWS.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, writing: ReadonlySet<ServerResponse>): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // A later request's error (its headers or body broken, too large, too slow), pipelined behind
  // requests read whole and still running or being answered: their answers go, then the
  // connection closes; the error is not answered in their place (a running request had been
  // charged, its answer lost). The erring request's own answer, if it has one, never goes. The
  // answers being written are in the order their requests came: the connection's last is the latest.
  let latest: ServerResponse | undefined;
  for (const answer of writing) if (answer.req?.socket === socket && !answer.writableFinished && answer.req.complete) latest = answer;
  if (latest) {
    if (closing.has(socket as Socket)) return;
    closing.add(socket as Socket);
    socket.pause();
    if (!latest.headersSent) {
      // Node ends the connection after an answer that says so.
      latest.shouldKeepAlive = false;
      latest.setHeader('connection', 'close');
    } else latest.once('finish', () => socket.end());
    return;
  }
  // An answer already begun on the connection (a refusal whose body is still being discarded) is not followed by another.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message = status === 431 ? 'The request headers are too large' : status === 408 ? 'The request was not received in time' : 'The request is not valid HTTP';
  answerOnSocket(socket, new BadRequestError(message, status));
}

/** `error` as the handler's error body, written on a bare socket (no ServerResponse to write it), which then closes. */
function answerOnSocket(socket: Duplex, error: GatewayError, requestId?: string): void {
  const { statusCode, body, headers } = errorResponse(error);
  const lines = Object.entries({ ...headers, ...(requestId ? { 'x-request-id': requestId } : {}) }).map(([name, value]) => `${name}: ${String(value)}\r\n`);
  socket.end(`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\n${lines.join('')}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/** A request target in origin form (RFC 9112 3.2.1): a path of RFC 3986 characters, then any query. */
const ORIGIN_FORM = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*(\?.*)?$/s;

/** The path a request target names for its route (no trailing slash), read one way for every method; undefined where it is no valid path. */
function routePath(target: string): string | undefined {
  if (target.startsWith('/') && !ORIGIN_FORM.test(target)) return undefined;
  try {
    return withoutTrailingSlashes(requestUrl(target).pathname);
  } catch {
    return undefined;
  }
}

function routeOf(path: string | undefined): (typeof ROUTES)[string] | undefined {
  return path !== undefined && Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
}

/** The answer to a request the host will not run: it is closing. */
function stoppingError(): ServiceUnavailableError {
  return new ServiceUnavailableError('The gateway is stopping; send the request again once it runs', 1);
}

/** What every request of one server is handled with. */
interface Serving {
  handlers: LocalHandlers;
  log: Log;
  /** Whether the server has stopped listening (the host is closing). */
  stopping: () => boolean;
  apiTimeoutMs: number | undefined;
}

async function handle(req: IncomingMessage, res: ServerResponse, requestId: string, { handlers, log, stopping, apiTimeoutMs }: Serving): Promise<void> {
  if (req.headers.host === undefined && req.httpVersion === '1.1') return reject(req, res, new BadRequestError('The Host header is missing'), requestId, log, true);
  // RFC 9112 3.2: a request with more than one Host line is answered 400.
  if ((req.headersDistinct.host?.length ?? 0) > 1) return reject(req, res, new BadRequestError('The Host header is sent more than once'), requestId, log, true);
  const path = routePath(req.url ?? '/');
  if (path === undefined) return reject(req, res, new BadRequestError('The request target is not a valid path'), requestId, log, true);
  const route = routeOf(path);
  if (!route) return reject(req, res, new NotFoundError(path || '/'), requestId, log);
  // A GET route answers HEAD as GET, without the body (Node writes none for HEAD).
  if (!routeMethods(route.method).includes(req.method ?? '')) return reject(req, res, new MethodNotAllowedError(req.method ?? '', route.method), requestId, log);
  const declared = Number(req.headers['content-length'] ?? 0);
  // A client that waits for 100 Continue sends no body: its connection closes with the 413.
  if (declared > LIMITS.bodyBytes) return reject(req, res, new PayloadTooLargeError(LIMITS.bodyBytes), requestId, log, req.headers.expect !== undefined);

  // The key before the body, as in AWS, where API Gateway runs the authorizer before the
  // function sees the body. The page's routes are public, as in the stack: no authorizer, an empty context.
  const authorizerContext = route.public ? {} : await authorize(handlers, req, path);
  if (!authorizerContext) return reject(req, res, new UnauthorizedError(), requestId, log);

  const body = await readBody(req, LIMITS.bodyBytes);
  if (body === undefined) return reject(req, res, new PayloadTooLargeError(LIMITS.bodyBytes), requestId, log);
  // The host began closing while this request was read: its close waits for the requests it
  // found running, not for this one, which would run (reserved, its models called) and be cut.
  if (stopping()) return reject(req, res, stoppingError(), requestId, log, true);
  const event = toProxyEvent(req, body, path, authorizerContext, requestId);
  if (route.handler === 'catalog') {
    await send(res, await handlers.catalog(event, lambdaContext('catalog', requestId)), requestId);
    return;
  }
  const result = await handlers.api(event, lambdaContext('api', requestId, apiTimeoutMs, acceptsEventStream(req.headers.accept) ? callerGone(req, res) : undefined));
  if (stopping()) res.setHeader('connection', 'close');
  if (result.eventStream) await sendEvents(res, result, result.eventStream, requestId);
  else await send(res, result, requestId);
  // What the handler still writes once its answer is sent.
  await result.finished;
}

/**
 * An event-stream caller that leaves before its answer is sent: its calls are not sent from then
 * on (CallerGone). Heard on its socket too: a request pipelined behind another hears no 'close'
 * of its own when the socket goes. (A JSON answer's run does not stop for its caller.)
 */
function callerGone(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const caller = new AbortController();
  const left = () => {
    if (!res.writableFinished) caller.abort(new Error('The caller disconnected'));
  };
  const forget = awaitingOn(req.socket, left);
  // After its answer (finished) as much as on a broken connection.
  res.once('close', () => {
    left();
    forget();
  });
  return caller.signal;
}

/** The requests of a socket awaiting their answers, each told should the socket close first: one listener a socket, however many are pipelined on it. */
const awaiting = new WeakMap<Socket, Set<() => void>>();

/** Calls `gone` should `socket` close; the function returned forgets it. */
function awaitingOn(socket: Socket, gone: () => void): () => void {
  let waiting = awaiting.get(socket);
  if (!waiting) {
    const set = new Set<() => void>();
    waiting = set;
    awaiting.set(socket, set);
    socket.once('close', () => {
      for (const call of set) call();
      set.clear();
    });
  }
  waiting.add(gone);
  return () => void waiting.delete(gone);
}

/** The authorizer's context as API Gateway hands it to the integration, or undefined when it refuses the key. */
async function authorize(handlers: LocalHandlers, req: IncomingMessage, path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const decision = await handlers.authorizer(toAuthorizerEvent(req, path));
    // API Gateway hands the authorizer's context values to the integration as strings.
    const context = Object.entries(decision.context ?? {}).map(([key, value]) => [key, String(value)]);
    return { ...Object.fromEntries(context), principalId: decision.principalId };
  } catch (error) {
    if ((error as Error).message === 'Unauthorized') return undefined;
    throw error;
  }
}

/** An event stream: its status and headers at once, then its events as they come (pipeAnswer). */
async function sendEvents(res: ServerResponse, result: ApiResult, stream: EventStream, requestId: string): Promise<void> {
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>), 'x-request-id': requestId });
  res.flushHeaders();
  await pipeAnswer(stream, res);
}

/** The body's bytes, or undefined as soon as it passes `limit` bytes (reject() then discards the rest). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      resolve(undefined);
    };
    req.on('data', onData);
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    // A client that disconnects mid-body (or is cut off by the request timeout): aborted, ECONNRESET.
    const gone = () => reject(new ClientGoneError('The client closed the connection before its body was read'));
    req.on('error', gone);
    req.once('close', () => {
      if (!req.complete) gone();
    });
  });
}

/**
 * How much more of a refused request's body is read, and discarded, before its connection is
 * dropped, and for how long: a client still sending hears the answer (closed at once, the
 * connection would meet its bytes with a reset, which can cut the answer away), and a
 * client sending without end is not read for ever.
 */
const DISCARD_BYTES = 2 * LIMITS.bodyBytes;
const DISCARD_MS = 5_000;

function discardBody(req: IncomingMessage): void {
  let discarded = 0;
  const drop = setTimeout(() => req.socket.destroy(), DISCARD_MS);
  drop.unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_BYTES) req.socket.destroy();
  });
  req.once('end', () => clearTimeout(drop));
  req.once('close', () => clearTimeout(drop));
  req.resume();
}

/** Connections whose answers end with one that closes them: a request pipelined behind that one is not run. */
const closing = new WeakSet<Socket>();

/** A refusal before the handler (as API Gateway's own answers are, in AWS, where its access log records them): answered and logged. */
function reject(req: IncomingMessage, res: ServerResponse, error: Error, requestId: string, log: Log, closeConnection = false): void {
  if (closeConnection) {
    res.setHeader('connection', 'close');
    closing.add(req.socket);
  }
  const answer = errorResponse(error);
  logAnswer(log, error, answer.statusCode, requestId);
  void send(res, answer, requestId);
  // Unread bodies are discarded so that a keep-alive connection stays usable.
  if (!closeConnection) discardBody(req);
}

/**
 * An answer whole. One larger than a piece is written as an event stream's events are
 * (pipeAnswer), in pieces, its connection ended for a reader that takes none for a minute (it
 * had been held as long as the reader liked, with the answer, up to megabytes, in memory); a
 * smaller one goes to the socket at once, holding nothing.
 */
async function send(res: ServerResponse, result: APIGatewayProxyResult, requestId: string): Promise<void> {
  if (res.headersSent) return;
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>), 'x-request-id': requestId });
  const body = result.body ?? '';
  if (body.length <= WRITE_SLICE_CHARS) res.end(body);
  else await pipeAnswer(wholeAnswer(body), res);
}
