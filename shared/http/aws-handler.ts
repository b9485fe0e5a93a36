import type { Readable } from 'node:stream';
import { NodeHttpHandler } from '@smithy/node-http-handler';

/** Per attempt: to connect, and from the request's start to the last byte of the answer. */
export interface AwsTimeouts {
  connectMs: number;
  answerMs: number;
}

/**
 * The SDK's Node HTTP handler for an AWS client, with deadlines that fail the attempt (which
 * the client's retry strategy may then retry): `connectMs` to connect, `answerMs` for the
 * whole answer. The SDK's `requestTimeout` alone only logs a warning and lets the call wait on
 * (`throwOnRequestTimeout` makes it an error), so a hung answer would hold the invocation, and
 * whatever it has reserved, until the Lambda's own timeout; and it ends with the answer's
 * headers: the body the SDK reads after them, which a connection gone quiet mid-answer had
 * left to wait for ever, is ended with a TimeoutError (which the SDK retries) once the
 * attempt's `answerMs` have passed. `Handler` is the class of the client's own copy of the
 * SDK's core, for a client bundled apart (`#sdk/s3`).
 */
export function awsRequestHandler({ connectMs, answerMs }: AwsTimeouts, Handler: typeof NodeHttpHandler = NodeHttpHandler): NodeHttpHandler {
  class WholeAnswerHandler extends Handler {
    override async handle(...args: Parameters<NodeHttpHandler['handle']>): ReturnType<NodeHttpHandler['handle']> {
      const started = performance.now();
      const answer = await super.handle(...args);
      const body = answer.response.body as Readable | undefined;
      if (body && typeof body.destroy === 'function' && !body.readableEnded) {
        const timer = setTimeout(
          () => body.destroy(Object.assign(new Error(`The answer's body did not arrive within ${answerMs} ms of its request`), { name: 'TimeoutError' })),
          Math.max(0, answerMs - (performance.now() - started)),
        );
        body.once('close', () => clearTimeout(timer));
      }
      return answer;
    }
  }
  return new WholeAnswerHandler({ connectionTimeout: connectMs, requestTimeout: answerMs, throwOnRequestTimeout: true });
}
