import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AwsCall {
  /** `X-Amz-Target` after the dot, e.g. `UpdateItem` or `GetSecretValue`. */
  operation: string;
  input: Record<string, any>;
  headers: IncomingMessage['headers'];
}

export type AwsAnswer = { status?: number; body: Record<string, unknown> };

/**
 * An AWS JSON-protocol endpoint on loopback whose answers a test scripts: for the error
 * paths a real store or service cannot produce on demand (throttling, lost races,
 * denied access), over the same HTTP the gateway's client speaks in AWS.
 */
export async function startFakeAws(answer: (call: AwsCall, calls: AwsCall[]) => AwsAnswer | undefined): Promise<{ endpoint: string; calls: AwsCall[]; close(): Promise<void> }> {
  const calls: AwsCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const call: AwsCall = { operation: target.slice(target.indexOf('.') + 1), input: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'), headers: req.headers };
      calls.push(call);
      const { status = 200, body } = answer(call, calls) ?? { body: {} };
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An AWS JSON-protocol error answer. */
export function awsError(type: string, message: string, status = 400, extra: Record<string, unknown> = {}): AwsAnswer {
  return { status, body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra } };
}
