import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as is when a string, as JSON otherwise. */
  body: unknown;
}

/**
 * A loopback HTTP server whose answers a test scripts and whose calls it records: a
 * vendor or an AWS service as the gateway's real HTTP client meets it, for the answers
 * the simulator or the store cannot give on demand.
 */
export async function startFakeHttp(
  answer: (call: HttpCall, calls: HttpCall[]) => HttpAnswer | undefined | Promise<HttpAnswer | undefined>,
): Promise<{ url: string; calls: HttpCall[]; close(): Promise<void> }> {
  const calls: HttpCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const call: HttpCall = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      calls.push(call);
      // An answer may wait for something the test awaits (a promise), e.g. another call's arrival.
      Promise.resolve(answer(call, calls)).then(
        (answered) => {
          const { status = 200, headers = {}, body } = answered ?? { body: {} };
          res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
        },
        // A test's answer that fails is a broken connection to the caller, never an unhandled rejection.
        (error: unknown) => res.destroy(error as Error),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
