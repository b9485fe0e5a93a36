/**
 * The simulated Amazon Bedrock Converse protocol:
 * `POST /{provider}/v1/model/{modelId}/converse` (the modelId URL-encoded, as the AWS SDK
 * sends it: `amazon.nova-pro-v1%3A0`; `converse-stream` streams). Validates the request with
 * Nova's limits (validate.ts), answers in the exact Converse response shape with a
 * simulated prompt cache (answer.ts) or its event stream (stream.ts), and shapes errors as
 * restJson1 does (errors.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errorNameFor } from '../error-names.js';
import { bodyText, servedMatching } from '../handler-parts.js';
import type { ProtocolHandler, Reply } from '../types.js';
import { cachedPrefixes } from './answer.js';
import { BEDROCK_MESSAGES, simulatedBedrockError } from './errors.js';
import { simulatedConverseStream } from './stream.js';
import { validateConverse } from './validate.js';

const CONVERSE_PATH = /^\/v1\/model\/([^/]+)\/(converse|converse-stream)$/;

/** The model is the one the path names, '' when it names none or does not decode; reset() is a cold prompt cache again. */
const serving = servedMatching('bedrock-converse', CONVERSE_PATH, 'converse-stream', simulatedConverseStream, 'none', () => cachedPrefixes.clear());

/** The protocol module registered by the simulator server. */
export const simulatedBedrockConverse: ProtocolHandler = {
  ...serving,

  /** Any SigV4 (or Bedrock API key bearer) signature passes; a request without one does not. */
  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    if (headers.authorization !== undefined && headers.authorization !== '') return undefined;
    return simulatedBedrockError(403, 'Missing Authentication Token', 'MissingAuthenticationTokenException');
  },

  prepare: (body, rest) => validateConverse(body, serving.modelOf(body, rest)),

  invalidJson(): Reply {
    return simulatedBedrockError(400, 'Malformed input request, please reformat your input and try again.', 'ValidationException');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const type = errorNameFor('bedrock', status);
    const reply = simulatedBedrockError(status, BEDROCK_MESSAGES[type] ?? `Simulated upstream error ${status}`, type);
    if (type === 'ModelErrorException') reply.body = JSON.stringify({ message: BEDROCK_MESSAGES[type], originalStatusCode: 500, resourceName: '' });
    if (retryAfter !== undefined) reply.headers['retry-after'] = retryAfter;
    if (body !== undefined) reply.body = bodyText(body);
    return reply;
  },
};
