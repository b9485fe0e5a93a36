import { NodeHttpHandler } from '@smithy/node-http-handler';

/** Per attempt: to connect, and from the request's start to the answer's headers. */
export interface AwsTimeouts {
  connectMs: number;
  answerMs: number;
}

/**
 * The SDK's Node HTTP handler for an AWS client, with deadlines that fail the attempt (which
 * the client's retry strategy may then retry): `connectMs` to connect, `answerMs` for the
 * answer. The SDK's `requestTimeout` alone only logs a warning and lets the call wait on
 * (`throwOnRequestTimeout` makes it an error), so a hung answer would hold the invocation,
 * and whatever it has reserved, until the Lambda's own timeout. `Handler` is the class of
 * the client's own copy of the SDK's core, for a client bundled apart (`#sdk/s3`).
 */
export function awsRequestHandler({ connectMs, answerMs }: AwsTimeouts, Handler: typeof NodeHttpHandler = NodeHttpHandler): NodeHttpHandler {
  return new Handler({ connectionTimeout: connectMs, requestTimeout: answerMs, throwOnRequestTimeout: true });
}
