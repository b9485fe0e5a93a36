import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

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
}

const shared = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

/** Keep-alive connections of its own for one client, which its owner can close. */
export function keepAliveAgent(url: URL): HttpAgent {
  return url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 64 }) : new HttpAgent({ keepAlive: true, maxSockets: 64 });
}

/**
 * One HTTP POST over node:http(s) with keep-alive connections, the body read whole as
 * UTF-8. Every outgoing call of the gateway (providers, the store, Secrets Manager) goes
 * through here: it costs a fraction of the CPU of `fetch` per call on Node 20, which
 * decides how many models a request can fan out to without waiting on itself. Network
 * failures reject with the Node error (its `code` set: ECONNRESET, ECONNREFUSED,
 * ETIMEDOUT); an abort rejects with the signal's AbortError.
 */
export function post(url: URL, body: string, headers: Record<string, string>, options: PostOptions = {}): Promise<PostAnswer> {
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') return Promise.reject(new TypeError(`Only http and https URLs can be called, not ${url.protocol}`));
  return new Promise<PostAnswer>((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: options.agent ?? shared[url.protocol as 'http:' | 'https:'],
        signal: options.signal,
        timeout: options.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.once('error', reject);
        res.once('aborted', () => reject(Object.assign(new Error('The connection closed before the answer ended'), { code: 'ECONNRESET' })));
      },
    );
    req.once('timeout', () => req.destroy(Object.assign(new Error(`No answer from ${url.host} in ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.end(body);
  });
}
