/**
 * Provider simulator: a loopback HTTP server that speaks vendors' wire
 * protocols so the gateway can run (and be tested and benchmarked) with no
 * network.
 *
 * Routes:
 *   POST   /{provider}/v1/chat/completions   OpenAI-compatible chat completions (any provider token)
 *   POST   /__sim/faults                     add a FaultRule (JSON body) -> 204
 *   DELETE /__sim/faults                     clear fault rules and latencies -> 204
 *   GET    /__sim/calls                      recorded calls, without bodies
 *   anything else                            404 (JSON)
 *
 * Each wire protocol is one module implementing ProtocolHandler (see
 * types.ts); add new ones to PROTOCOLS (protocols.ts).
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FaultRules, LatencyTable, parseFaultRule } from './faults.js';
import type { FaultMatch, FaultRule } from './faults.js';
import { JudgeRules, parseJudgeRule, type JudgeRule } from './judges.js';
import { simulatedOpenAiError } from './openai-chat/errors.js';
import { PROTOCOLS } from './protocols.js';
import { shutDown } from './shut-down.js';
import { cutInHalf, writeStream, type StreamReply } from './streaming.js';
import type { AnswerOptions, Prepared, ProtocolHandler, Reply } from './types.js';
import type { WireProtocol } from '../../../shared/catalog/types.js';

export type { FaultMatch, FaultRule } from './faults.js';
export { countTokens } from './text.js';

export interface SimulatorOptions {
  /** default 0 = ephemeral */
  port?: number;
  /** default 0: added before every answer */
  latencyMs?: number;
  /** Calls kept for calls(), oldest dropped first; default 10,000 (a long `npm start` or bench stays bounded). */
  maxRecordedCalls?: number;
  /**
   * Whether calls() keeps each call's body (prompts, outputs a judge was shown, attachments):
   * default true, for the tests that read what was sent; `npm start` keeps none, so that no
   * request's content outlives it there (zero data retention), nor holds memory.
   */
  recordBodies?: boolean;
}

export interface SimulatedCall {
  provider: string;
  protocol: WireProtocol;
  model: string;
  path: string;
  at: number;
  headers: Record<string, string | undefined>;
  body: unknown;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:43123 */
  readonly url: string;
  /** `${url}/${provider}/v1` — what a gateway uses as <P>_BASE_URL */
  baseUrl(provider: string): string;
  /** every upstream call received, in order */
  calls(): readonly SimulatedCall[];
  /** add a rule */
  setFault(rule: FaultRule): void;
  /** default latency, or per model/provider */
  setLatency(ms: number, match?: FaultMatch): void;
  /** clear rules, latencies (back to options.latencyMs), calls and the protocols' prompt caches; resumes a pause */
  reset(): void;
  /** tell judge calls to one judge (by provider and/or upstream model) how to decide; cleared by reset() */
  setJudge(rule: JudgeRule): void;
  /** hold every answer until resume() */
  pause(): void;
  resume(): void;
  /** closes server and any hanging sockets immediately */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const MAX_BODY_BYTES = 64 * 1024 * 1024;
/**
 * Headers never recorded: credentials (vendors' keys, cookies, Bedrock's session token with
 * temporary credentials), and SigV4's digest of the body, which would confirm a guess of a
 * request's text where the body itself is not kept.
 */
const REDACTED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'x-amz-security-token',
  'x-amz-content-sha256',
]);
const PROVIDER_TOKEN = /^[A-Za-z0-9._-]+$/;

type BodyResult = { text: string; tooLarge: boolean } | undefined;

/** Reads the whole request body; resolves undefined if the client went away first. */
function readBody(req: IncomingMessage): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.once('end', () => {
      const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
      resolve({ text, tooLarge });
    });
    req.once('error', () => resolve(undefined));
    req.once('close', () => resolve(undefined)); // no-op when 'end' already resolved
  });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.length === 0) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  reply.headers['content-length'] = String(Buffer.byteLength(reply.body));
  res.writeHead(reply.status, reply.headers);
  res.end(reply.body);
}

/** Waits `ms` without blocking; resolves false (and clears the timer) if the response closes first. */
function wait(ms: number, res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(true);
    }, ms);
    res.once('close', onClose);
  });
}

function recordHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const key in headers) {
    const v = headers[key];
    if (v === undefined) continue;
    out[key] = REDACTED_HEADERS.has(key) ? '[redacted]' : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function notFound(method: string, path: string): Reply {
  return simulatedOpenAiError(404, `Unknown route: ${method} ${path}`, 'invalid_request_error', null, 'unknown_url');
}

function noContent(): Reply {
  return { status: 204, headers: {}, body: '' };
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

class ProviderSimulator implements Simulator {
  readonly url: string;
  private readonly server: Server;
  private readonly sockets: Set<Socket>;
  private readonly rules = new FaultRules();
  private readonly judges = new JudgeRules();
  private readonly latency: LatencyTable;
  private readonly defaultLatencyMs: number;
  private recorded: SimulatedCall[] = [];
  private closing: Promise<void> | undefined;
  /** While set, every answer waits for resume(): a test holds requests in flight without timing. */
  private paused: { promise: Promise<void>; release: () => void } | undefined;

  constructor(
    server: Server,
    sockets: Set<Socket>,
    url: string,
    latencyMs: number,
    private readonly maxRecordedCalls: number,
    private readonly recordBodies: boolean,
  ) {
    this.server = server;
    this.sockets = sockets;
    this.url = url;
    this.defaultLatencyMs = latencyMs;
    this.latency = new LatencyTable(latencyMs);
  }

  baseUrl(provider: string): string {
    return `${this.url}/${provider}/v1`;
  }

  calls(): readonly SimulatedCall[] {
    return this.recorded;
  }

  setFault(rule: FaultRule): void {
    this.rules.add(rule);
  }

  setLatency(ms: number, match?: FaultMatch): void {
    this.latency.set(ms, match);
  }

  setJudge(rule: JudgeRule): void {
    const parsed = parseJudgeRule(rule);
    if (!parsed.ok) throw new TypeError(`invalid judge rule: ${parsed.error}`);
    this.judges.add(parsed.rule);
  }

  reset(): void {
    this.rules.clear();
    this.judges.clear();
    this.latency.reset(this.defaultLatencyMs);
    this.recorded = [];
    for (const protocol of PROTOCOLS) protocol.reset?.();
    this.resume();
  }

  pause(): void {
    if (this.paused) return;
    let release = (): void => undefined;
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.paused = { promise, release };
  }

  resume(): void {
    this.paused?.release();
    this.paused = undefined;
  }

  close(): Promise<void> {
    this.resume();
    if (this.closing) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
    });
    return this.closing;
  }

  /** Entry point for every HTTP request. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.dispatch(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        send(res, simulatedOpenAiError(500, `Simulator internal error: ${err instanceof Error ? err.message : String(err)}`, 'server_error'));
      } else {
        res.destroy();
      }
    });
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);

    if (path.startsWith('/__sim/')) return this.control(method, path, req, res);

    const slash = path.indexOf('/', 1);
    if (slash > 1) {
      const provider = path.slice(1, slash);
      const rest = path.slice(slash);
      if (PROVIDER_TOKEN.test(provider)) {
        for (const handler of PROTOCOLS) {
          if (handler.route(method, rest)) return this.upstream(handler, provider, rest, path, req, res);
        }
      }
    }
    req.resume();
    send(res, notFound(method, path));
  }

  private async upstream(handler: ProtocolHandler, provider: string, rest: string, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (raw === undefined) return; // client went away
    const parsed = raw.tooLarge ? ({ ok: false } as const) : parseJson(raw.text);
    const body = parsed.ok ? parsed.value : raw.tooLarge ? undefined : raw.text;
    const model = parsed.ok ? handler.modelOf(body, rest) : '';
    if (this.recorded.length >= this.maxRecordedCalls) this.recorded.splice(0, this.recorded.length - this.maxRecordedCalls + 1);
    this.recorded.push({
      provider,
      protocol: handler.protocol,
      model,
      path,
      // Milliseconds since the epoch to the microsecond, to order calls against the store's (benchmarks).
      at: performance.timeOrigin + performance.now(),
      headers: recordHeaders(req.headers),
      body: this.recordBodies ? body : undefined,
    });

    // Decide the outcome at arrival (so `times` is consumed in arrival order), then wait.
    let reply: Reply | undefined;
    let prepared: Prepared | undefined;
    let fault: FaultRule | undefined;
    if (raw.tooLarge) reply = simulatedOpenAiError(413, 'Request body too large for the simulator.', 'invalid_request_error');
    else reply = handler.authorize(req.headers) ?? (parsed.ok ? undefined : handler.invalidJson());
    // A model its vendor has shut down, as the catalog's retirements say, is refused as that vendor refuses it.
    if (reply === undefined && parsed.ok && shutDown(provider, model)) reply = handler.shutDown?.(model, provider);
    if (reply === undefined && parsed.ok) {
      prepared = handler.prepare(body, rest, provider);
      if (prepared.ok) fault = this.rules.take(provider, model);
      else reply = prepared.reply;
    }

    const latencyMs = this.latency.get(provider, model);
    if (latencyMs > 0 && !(await wait(latencyMs, res))) return;
    if (this.paused) await this.paused.promise;
    if (res.destroyed) return;

    if (reply !== undefined || prepared === undefined || !prepared.ok) {
      send(res, reply ?? handler.invalidJson());
      return;
    }
    const answering: AnswerOptions = { usage: true, structured: this.judges.verdictFor(provider, model, body) };
    // A streamed answer is the whole answer in the vendor's stream format; errors stay whole JSON answers, as vendors send them.
    const streaming = handler.streams(body, rest);
    const deliver = (good: Reply, change: (stream: StreamReply) => StreamReply = (stream) => stream, gapMs = 0): Promise<void> | void =>
      streaming && good.status === 200 ? writeStream(res, change(handler.toStream(good, body, provider)), gapMs, (ms) => wait(ms, res)) : send(res, good);
    if (fault === undefined) return deliver(prepared.answer(answering));
    switch (fault.kind) {
      case 'status':
        send(res, handler.vendorError(fault.status, fault.retryAfter, fault.body, { provider, model }));
        return;
      case 'hang':
        return; // the socket stays open until the client aborts or close() is called
      case 'slow':
        if (fault.delayMs > 0 && !(await wait(fault.delayMs, res))) return;
        return deliver(prepared.answer(answering));
      case 'slow-stream':
        return deliver(prepared.answer(answering), undefined, fault.delayMs);
      case 'malformed': {
        const good = prepared.answer(answering);
        if (streaming) return deliver(good, cutInHalf);
        good.body = good.body.slice(0, Math.max(1, Math.floor(good.body.length / 2)));
        send(res, good);
        return;
      }
      case 'empty': {
        const good = prepared.answer(answering);
        if (streaming) return deliver(good, (stream) => ({ ...stream, frames: [] }));
        good.body = '';
        send(res, good);
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      case 'no-usage':
        return deliver(prepared.answer({ ...answering, usage: false }));
    }
  }

  /** Reads a rule from a control request's JSON body: 204 once added, 400 naming what is wrong. */
  private async addRule<R>(
    req: IncomingMessage,
    res: ServerResponse,
    kind: string,
    parse: (input: unknown) => { ok: true; rule: R } | { ok: false; error: string },
    add: (rule: R) => void,
  ): Promise<void> {
    const raw = await readBody(req);
    if (raw === undefined) return;
    const parsed = raw.tooLarge ? ({ ok: false } as const) : parseJson(raw.text);
    if (!parsed.ok) {
      send(res, simulatedOpenAiError(400, `The request body must be a JSON ${kind} rule.`, 'invalid_request_error'));
      return;
    }
    const rule = parse(parsed.value);
    if (!rule.ok) {
      send(res, simulatedOpenAiError(400, `Invalid ${kind} rule: ${rule.error}`, 'invalid_request_error'));
      return;
    }
    add(rule.rule);
    send(res, noContent());
  }

  private async control(method: string, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (path === '/__sim/faults' && method === 'POST') {
      await this.addRule(req, res, 'fault', parseFaultRule, (rule) => this.rules.add(rule));
      return;
    }
    if (path === '/__sim/judges' && method === 'POST') {
      await this.addRule(req, res, 'judge', parseJudgeRule, (rule) => this.judges.add(rule));
      return;
    }
    req.resume();
    if (path === '/__sim/faults' && method === 'DELETE') {
      this.rules.clear();
      this.judges.clear();
      this.latency.reset(this.defaultLatencyMs);
      send(res, noContent());
      return;
    }
    if (path === '/__sim/calls' && method === 'GET') {
      const list = this.recorded.map(({ provider, protocol, model, path: p, at, headers }) => ({ provider, protocol, model, path: p, at, headers }));
      send(res, { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(list) });
      return;
    }
    send(res, notFound(method, path));
  }
}

/** Starts the simulator on 127.0.0.1 (port 0 = ephemeral by default). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const latencyMs = options.latencyMs ?? 0;
  new LatencyTable(latencyMs); // validates latencyMs before anything starts
  const sockets = new Set<Socket>();
  let sim: ProviderSimulator | undefined;
  const server = createServer((req, res) => {
    if (sim) sim.handle(req, res);
    else res.destroy();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  sim = new ProviderSimulator(server, sockets, `http://127.0.0.1:${port}`, latencyMs, options.maxRecordedCalls ?? 10_000, options.recordBodies ?? true);
  return sim;
}
