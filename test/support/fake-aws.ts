import type { IncomingHttpHeaders } from 'node:http';
import { startFakeHttp } from './fake-http.js';

export interface AwsCall {
  /** `X-Amz-Target` after the dot, e.g. `UpdateItem` or `GetSecretValue`. */
  operation: string;
  input: Record<string, any>;
  headers: IncomingHttpHeaders;
}

export type AwsAnswer = { status?: number; body: Record<string, unknown> };

/**
 * An AWS JSON-protocol endpoint on loopback whose answers a test scripts: for the error
 * paths a real store or service cannot produce on demand (throttling, lost races,
 * denied access), over the same HTTP the gateway's client speaks in AWS.
 */
export async function startFakeAws(
  answer: (call: AwsCall, calls: AwsCall[]) => AwsAnswer | undefined | Promise<AwsAnswer | undefined>,
): Promise<{ endpoint: string; calls: AwsCall[]; close(): Promise<void> }> {
  const calls: AwsCall[] = [];
  const server = await startFakeHttp(async (http) => {
    const target = String(http.headers['x-amz-target'] ?? '');
    const call: AwsCall = { operation: target.slice(target.indexOf('.') + 1), input: JSON.parse(http.body || '{}'), headers: http.headers };
    calls.push(call);
    const { status = 200, body } = (await answer(call, calls)) ?? { body: {} };
    return { status, headers: { 'content-type': 'application/x-amz-json-1.0' }, body };
  });
  return { endpoint: server.url, calls, close: server.close };
}

/** An AWS JSON-protocol error answer. */
export function awsError(type: string, message: string, status = 400, extra: Record<string, unknown> = {}): AwsAnswer {
  return { status, body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra } };
}

/** An AWS service that takes every request and never answers: the hung call a client's deadlines must end. */
export function startSilentAws(): ReturnType<typeof startFakeAws> {
  return startFakeAws(() => new Promise<never>(() => undefined));
}

/** Deadlines short enough for a test to meet them: 100 ms to the answer, per attempt. */
export const SHORT_TIMEOUTS = Object.freeze({ connectMs: 1_000, answerMs: 100 });
