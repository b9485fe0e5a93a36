import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex, Readable } from 'node:stream';

export interface PostAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface PostOptions {
  /** Keep-alive connections to reuse; by default the process's shared ones. */
  agent?: HttpAgent;
  signal?: AbortSignal;
  /** Longest silence on the socket before the call fails with code ETIMEDOUT. */
  timeoutMs?: number;
  /** The longest answer body `post` reads (MAX_ANSWER_BYTES by default); a longer one fails the call with code EANSWERTOOLARGE. */
  maxBytes?: number;
}

/**
 * The longest whole answer read: far above any vendor's answer to a call the gateway sends
 * (its output limited to tens of thousands of tokens), and far below what would hurt a Lambda.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * How long a pooled connection may sit idle before it is closed. Servers and load
 * balancers close idle connections too (Node's own after 5 s), and a Lambda function
 * thawed after minutes must not send its next call on one of those: it would fail with a
 * reset. Node 20's agent keeps idle sockets forever; `fetch` closed them after 4 s.
 */
const IDLE_CONNECTION_MS = 4_000;

/** `agent`, its pooled sockets closing after `idleMs` idle; a socket taken from the pool again carries no idle timer. */
function closingIdle<T extends HttpAgent>(agent: T, idleMs: number): T {
  const pooled = (socket: Socket) => Object.values(agent.freeSockets).some((list) => list?.includes(socket));
  // After the agent's own listener, which pools the socket or hands it to a waiting request. The agent destroys a pooled socket that times out.
  agent.on('free', (socket: Socket) => {
    if (!socket.destroyed && pooled(socket)) socket.setTimeout(idleMs);
  });
  const reuse = agent.reuseSocket.bind(agent);
  agent.reuseSocket = (socket: Duplex, request: ClientRequest) => {
    (socket as Socket).setTimeout(0);
    reuse(socket, request);
  };
  return agent;
}

const shared = {
  'http:': closingIdle(new HttpAgent({ keepAlive: true }), IDLE_CONNECTION_MS),
  'https:': closingIdle(new HttpsAgent({ keepAlive: true }), IDLE_CONNECTION_MS),
};

/**
 * Keep-alive connections of its own for one client (the Bedrock client's), which its owner
 * can close; `idleMs` is for tests. Like the shared agents, it holds as many connections to a
 * host as there are calls at once: no `maxSockets`. A cap (128 had been set, to stay above a
 * judge task's 120 calls) is shared by every request of the process: locally, where one
 * process serves every tenant, one tenant's 64 slow requests to a Bedrock model had queued
 * another's fast call behind them for 14 s. What bounds the calls is the requests' own limits
 * (models and judge calls a request, requests in flight an account) and, locally, the host's
 * connection cap.
 */
export function keepAliveAgent(url: URL, idleMs = IDLE_CONNECTION_MS): HttpAgent {
  const options = { keepAlive: true };
  return closingIdle(url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options), idleMs);
}

/**
 * One HTTP POST over node:http(s) with keep-alive connections, the body read whole as
 * UTF-8. Every outgoing call of the gateway (providers, the store, Secrets Manager) goes
 * through here: it costs a fraction of the CPU of `fetch` per call on Node 20, which
 * decides how many models a request can fan out to without waiting on itself. Network
 * failures reject with the Node error (its `code` set: ECONNRESET, ECONNREFUSED,
 * ETIMEDOUT); an abort rejects with an AbortError.
 */
export function post(url: URL, body: Body, headers: Record<string, string>, options: PostOptions = {}): Promise<PostAnswer> {
  return request(url, body, headers, options, (res, resolve, reject) => {
    readBody(res, options.maxBytes).then((bytes) => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: bytes.toString('utf8') }), reject);
  });
}

/** An answer body longer than this is handed on in a turn of the event loop of its own (largeAnswerTurn). */
export const LARGE_ANSWER_BYTES = 1024 * 1024;

/**
 * The most answer bytes waiting for their turns: past it, a large answer is handed on at once,
 * as before turns. Answers that wait are read in full meanwhile, which no socket's backpressure
 * bounds: a judge task's 110 calls answering 8 MiB each would otherwise wait with 880 MiB.
 */
export const MAX_WAITING_ANSWER_BYTES = 64 * 1024 * 1024;

let lastLargeAnswer: Promise<void> = Promise.resolve();
let waitingAnswerBytes = 0;

/**
 * Resolves in a turn of the event loop of its own, once every large answer before it has had
 * its turn: what the answer's reader then does at once (decode, parse, price: about 100 ms for
 * 8 MiB here) holds the thread for one answer, with other requests' I/O between two answers.
 * Twenty models answering 8 MiB together had held it for 0.7 s at a time.
 */
export function largeAnswerTurn(): Promise<void> {
  // A timer, not setImmediate: the loop polls for I/O, and runs what was set for its check phase, before its next timers.
  const mine = lastLargeAnswer.then(() => new Promise<void>((resolve) => setTimeout(resolve, 0)));
  lastLargeAnswer = mine;
  return mine;
}

/**
 * How many pieces (`data` events: an HTTP chunk, or what one read of the socket held of it) an
 * answer may arrive in before MIN_AVERAGE_CHUNK_BYTES applies. Far above a whole answer's
 * pieces (a socket read holds up to 64 KiB) and a streamed answer's first events.
 */
export const FREE_ANSWER_CHUNKS = 4096;

/**
 * Past FREE_ANSWER_CHUNKS pieces, the fewest bytes an answer's pieces must average, else the
 * read fails with code EANSWERFRAGMENTED. Every piece costs the reader a fixed amount of work
 * and memory whatever its size: an 8 MiB answer sent as 1-byte HTTP chunks had cost about
 * 400 bytes of memory a byte (2.5 GB) and held the event loop for seconds. Vendors' smallest
 * pieces are stream events of tens to hundreds of bytes; a keep-alive comment is 8 or more.
 */
export const MIN_AVERAGE_CHUNK_BYTES = 16;

/**
 * An answer's pieces counted as they arrive, read whole (AnswerBytes) or as a stream: `count`
 * throws the EANSWERFRAGMENTED error (with its `chunks` and `bytes`) once they break
 * MIN_AVERAGE_CHUNK_BYTES.
 */
export class AnswerPieces {
  chunks = 0;
  bytes = 0;

  count(bytes: number): void {
    this.chunks += 1;
    this.bytes += bytes;
    if (this.chunks > FREE_ANSWER_CHUNKS && this.bytes < this.chunks * MIN_AVERAGE_CHUNK_BYTES) {
      throw Object.assign(new Error(`The answer arrived in ${this.chunks} pieces of ${this.bytes} bytes in all, under ${MIN_AVERAGE_CHUNK_BYTES} bytes a piece`), {
        code: 'EANSWERFRAGMENTED',
        chunks: this.chunks,
        bytes: this.bytes,
      });
    }
  }
}

/**
 * An answer's bytes as they arrive, copied into one buffer that doubles as it fills (at most
 * to `limit`), so that it costs memory by its bytes, not by its pieces: each piece kept as a
 * Buffer of its own cost about 400 bytes a byte when pieces were 1 byte. Counts its pieces
 * (AnswerPieces): `add` throws when they break MIN_AVERAGE_CHUNK_BYTES.
 */
export class AnswerBytes {
  private buffer: Buffer | undefined;
  private readonly pieces = new AnswerPieces();
  length = 0;

  constructor(private readonly limit = Infinity) {}

  /** The pieces added so far. */
  get chunks(): number {
    return this.pieces.chunks;
  }

  add(chunk: Buffer): void {
    this.pieces.count(chunk.length);
    const need = this.length + chunk.length;
    if (this.buffer === undefined || need > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, Math.min(2 * (this.buffer?.length ?? 0), this.limit), 1024));
      this.buffer?.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.length);
    this.length = need;
  }

  /** The bytes so far (a view of the buffer, not a copy). */
  bytes(): Buffer {
    return this.buffer === undefined ? Buffer.alloc(0) : this.buffer.subarray(0, this.length);
  }
}

/**
 * An answer's body read whole, at most `maxBytes` of it: past that it is destroyed (its
 * connection with it) and the read fails with code EANSWERTOOLARGE; arriving in too many tiny
 * pieces (MIN_AVERAGE_CHUNK_BYTES), with code EANSWERFRAGMENTED. Read into an AnswerBytes. A body over
 * LARGE_ANSWER_BYTES is handed on in its own turn of the event loop (largeAnswerTurn), while
 * those waiting hold at most MAX_WAITING_ANSWER_BYTES. `post`
 * reads every body with it, and the Bedrock client the bodies the AWS SDK reads whole.
 */
export function readBody(body: Readable, maxBytes = MAX_ANSWER_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const answer = new AnswerBytes(maxBytes);
    const fail = (error: Error) => {
      body.off('data', onData);
      reject(error);
      body.destroy(error);
    };
    const onData = (chunk: Buffer) => {
      if (answer.length + chunk.length > maxBytes) return fail(Object.assign(new Error(`The answer exceeded ${maxBytes} bytes`), { code: 'EANSWERTOOLARGE' }));
      try {
        answer.add(chunk);
      } catch (error) {
        fail(error as Error);
      }
    };
    body.on('data', onData);
    body.once('end', () => {
      const received = answer.length;
      if (received <= LARGE_ANSWER_BYTES || waitingAnswerBytes + received > MAX_WAITING_ANSWER_BYTES) return resolve(answer.bytes());
      // Its own copy, of its size: the buffer it was read into grew by doubling, and what waits must hold what it counts.
      const waiting = Buffer.from(answer.bytes());
      waitingAnswerBytes += received;
      void largeAnswerTurn().then(() => {
        waitingAnswerBytes -= received;
        resolve(waiting);
      });
    });
    body.once('error', reject);
    body.once('aborted', () => reject(Object.assign(new Error('The connection closed before the answer ended'), { code: 'ECONNRESET' })));
  });
}

const SENT = Symbol('requestSent');
const HEAD = Symbol('answerHead');

/** An answer's status and headers: what its head said. */
export interface AnswerHead {
  status: number;
  headers: IncomingHttpHeaders;
}

/** For an error a POST failed with once its answer's head was in (its body broken off, or too large): that head; undefined for any other error. */
export function answerHead(error: unknown): AnswerHead | undefined {
  const answer = (error as { [HEAD]?: IncomingMessage } | null)?.[HEAD];
  return answer && { status: answer.statusCode ?? 0, headers: answer.headers };
}

/** For an error a POST failed with once its answer's head was in: the answer's status; undefined for any other error. */
export function answerStatus(error: unknown): number | undefined {
  return answerHead(error)?.status;
}

/** The TLS sockets whose handshake has ended ('secureConnect'), heard by the first request on each. */
const secured = new WeakSet<Socket>();

/** Whether a socket's connection is made: TCP connected and, over TLS, its handshake ended. */
function connected(socket: Socket | null): boolean {
  if (!socket || socket.connecting) return false;
  return !(socket as Partial<TLSSocket>).encrypted || secured.has(socket);
}

/**
 * For an error a POST failed with: whether its request had reached the peer (its body handed
 * to a connection made, TCP and TLS, or its answer's head in); undefined for an error that is
 * not a POST's. A call stopped before its request reached the vendor used nothing there.
 */
export function requestSent(error: unknown): boolean | undefined {
  const sent = (error as { [SENT]?: unknown } | null)?.[SENT];
  return typeof sent === 'boolean' ? sent : undefined;
}

/** A request body: whole, or in pieces written one after another (pieces other calls' bodies share: providers/shared-text.ts). */
export type Body = string | Buffer | readonly Buffer[];

function bodyBytes(body: Body): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (Buffer.isBuffer(body)) return body.length;
  let bytes = 0;
  for (const piece of body as readonly Buffer[]) bytes += piece.length;
  return bytes;
}

/** Sends the POST; `onResponse` settles the promise from the answer. */
function request<T>(
  url: URL,
  body: Body,
  headers: Record<string, string>,
  options: PostOptions,
  onResponse: (res: IncomingMessage, resolve: (value: T) => void, reject: (error: unknown) => void) => void,
): Promise<T> {
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') return Promise.reject(new TypeError(`Only http and https URLs can be called, not ${url.protocol}`));
  return new Promise<T>((resolve, reject) => {
    // How far the call got, for a failure to say (requestSent, answerHead): its request handed
    // to a connection made (TCP, TLS), and its answer's head (status, headers) once it is in.
    let sent = false;
    let answered: IncomingMessage | undefined;
    const fail = (error: unknown) =>
      reject(error !== null && typeof error === 'object' ? Object.assign(error, { [SENT]: sent }, answered === undefined ? {} : { [HEAD]: answered }) : error);
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(bodyBytes(body)) },
        agent: options.agent ?? shared[url.protocol as 'http:' | 'https:'],
        signal: options.signal,
        timeout: options.timeoutMs,
      },
      (res) => {
        // Its answer's head in: the peer had the request, and said what it did with it.
        sent = true;
        // The answer itself: its head is read from it only should the call fail (every answer had made an object of it).
        answered = res;
        onResponse(res, resolve, fail);
      },
    );
    req.once('timeout', () => req.destroy(Object.assign(new Error(`No answer from ${url.host} in ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    // A body written while the connection is still being made waits in it: sent once it is made.
    req.once('socket', (socket: Socket) => {
      if ((socket as Partial<TLSSocket>).encrypted && !secured.has(socket)) socket.once('secureConnect', () => secured.add(socket));
    });
    req.once('finish', () => {
      const socket = req.socket;
      if (connected(socket)) sent = true;
      else
        socket?.once((socket as Partial<TLSSocket>).encrypted ? 'secureConnect' : 'connect', () => {
          sent = true;
        });
    });
    req.once('error', fail);
    if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else {
      // Written as they are: a shared piece is never copied into a body of its own.
      for (const piece of body as readonly Buffer[]) req.write(piece);
      req.end();
    }
  });
}

export interface StreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The answer's body as it arrives; whoever takes it must read it to its end or destroy it. */
  body: IncomingMessage;
}

/**
 * One HTTP POST like `post`, resolving once the answer's head arrives, its body left to read
 * as a stream (a streamed model answer). The same connections, errors and abort; an abort
 * after the head destroys the body, which then fails with an AbortError.
 */
export function postStream(url: URL, body: Body, headers: Record<string, string>, options: PostOptions = {}): Promise<StreamAnswer> {
  return request(url, body, headers, options, (res, resolve) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }));
}
