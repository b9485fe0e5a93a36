import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { parseServerTiming } from '../../shared/http/server-timing.js';

/** A loopback HTTP client with keep-alive: the same for every path a benchmark compares. */
export interface Client {
  post(url: string, body: string, headers?: Record<string, string>): Promise<Reply>;
  close(): void;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** From the request's start to the last byte of the answer. */
  ms: number;
}

export function createClient(options: { maxSockets?: number } = {}): Client {
  // Idle sockets are dropped after 4 s, before the server's 5 s keep-alive timeout closes them
  // under a request being written (a reset that says nothing about the server).
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? Infinity, keepAliveMsecs: 1_000, timeout: 4_000 });
  return {
    post(url, body, headers = {}) {
      return new Promise<Reply>((resolve, reject) => {
        const started = performance.now();
        const req = request(
          url,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
            res.on('error', reject);
          },
        );
        req.setTimeout(60_000, () => req.destroy(new Error(`POST ${url}: no answer within 60 s`)));
        req.on('error', reject);
        req.end(body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** Parses a JSON answer, with the status and a bit of the body in the error when it is not JSON. */
export function json<T = any>(reply: Reply): T {
  try {
    return JSON.parse(reply.body) as T;
  } catch {
    throw new Error(`Expected JSON, got status ${reply.status}: ${reply.body.slice(0, 200)}`);
  }
}

/**
 * The gateway's own account of a request: its Server-Timing phases (ms) and `outside`, the
 * rest of the client's wall time (HTTP both ways, the authorizer, body parsing and validation).
 */
export function gatewayPhases(reply: Reply): Record<string, number> {
  const phases = parseServerTiming(String(reply.headers['server-timing'] ?? ''));
  if (phases.total === undefined) throw new Error(`the gateway answered without a Server-Timing total (status ${reply.status})`);
  return { ...phases, outside: reply.ms - phases.total };
}
