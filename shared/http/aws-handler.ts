import { NodeHttpHandler } from '@smithy/node-http-handler';

/** Per attempt: to connect, and from the request's start to the answer's headers, and then between two pieces of it. */
export interface AwsTimeouts {
  connectMs: number;
  answerMs: number;
}

/**
 * The SDK's Node HTTP handler for an AWS client, with deadlines that fail the attempt (which
 * the client's retry strategy may then retry): `connectMs` to connect, `answerMs` for the
 * answer's headers and then for each piece of its body. The SDK's `requestTimeout` alone only
 * logs a warning and lets the call wait on (`throwOnRequestTimeout` makes it an error), so a
 * hung answer would hold the invocation, and whatever it has reserved, until the Lambda's own
 * timeout; and it ends with the headers: `socketTimeout` (the connection silent that long)
 * bounds the body, which a connection gone quiet mid-answer had left to wait for ever.
 * `Handler` is the class of the client's own copy of the SDK's core, for a client bundled
 * apart (`#sdk/s3`).
 */
export function awsRequestHandler({ connectMs, answerMs }: AwsTimeouts, Handler: typeof NodeHttpHandler = NodeHttpHandler): NodeHttpHandler {
  return new Handler({ connectionTimeout: connectMs, requestTimeout: answerMs, socketTimeout: answerMs, throwOnRequestTimeout: true });
}
