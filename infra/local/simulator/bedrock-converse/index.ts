/**
 * The simulated Amazon Bedrock Converse protocol:
 * `POST /{provider}/v1/model/{modelId}/converse` (the modelId URL-encoded, as the AWS SDK
 * sends it: `amazon.nova-pro-v1%3A0`; `converse-stream` streams). Validates the request with
 * Nova's limits (validate.ts), answers in the exact Converse response shape with a
 * simulated prompt cache (answer.ts) or its event stream (stream.ts), and shapes errors as
 * restJson1 does (errors.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bodyText, modelInPath, postMatching } from '../handler-parts.js';
import type { ProtocolHandler, Reply } from '../types.js';
import { cachedPrefixes } from './answer.js';
import { bedrockErrorType, DEFAULT_MESSAGES, simulatedBedrockError } from './errors.js';
import { simulatedConverseStream } from './stream.js';
import { validateConverse } from './validate.js';

const CONVERSE_PATH = /^\/v1\/model\/([^/]+)\/(converse|converse-stream)$/;

function modelFromPath(rest: string): string {
  return modelInPath(CONVERSE_PATH, rest, 'none');
}

/** The protocol module registered by the simulator server. */
export const simulatedBedrockConverse: ProtocolHandler = {
  /** A cold prompt cache again. */
  reset: () => cachedPrefixes.clear(),
  protocol: 'bedrock-converse',
  streams: (_body, rest) => CONVERSE_PATH.exec(rest)?.[2] === 'converse-stream',
  toStream: simulatedConverseStream,
  route: postMatching(CONVERSE_PATH),
  modelOf: (_body, rest) => modelFromPath(rest),

  /** Any SigV4 (or Bedrock API key bearer) signature passes; a request without one does not. */
  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    if (headers.authorization !== undefined && headers.authorization !== '') return undefined;
    return simulatedBedrockError(403, 'Missing Authentication Token', 'MissingAuthenticationTokenException');
  },

  prepare: (body, rest) => validateConverse(body, modelFromPath(rest)),

  invalidJson(): Reply {
    return simulatedBedrockError(400, 'Malformed input request, please reformat your input and try again.', 'ValidationException');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const type = bedrockErrorType(status);
    const reply = simulatedBedrockError(status, DEFAULT_MESSAGES[type] ?? `Simulated upstream error ${status}`, type);
    if (type === 'ModelErrorException') reply.body = JSON.stringify({ message: DEFAULT_MESSAGES[type], originalStatusCode: 500, resourceName: '' });
    if (retryAfter !== undefined) reply.headers['retry-after'] = retryAfter;
    if (body !== undefined) reply.body = bodyText(body);
    return reply;
  },
};
