/**
 * The simulated Anthropic Messages API: `POST /{provider}/v1/messages`. Validates the request
 * the way the Messages API does (validate.ts: required fields, ranges, the thinking and
 * sampling rules, the per-model refusals), answers in the exact `message` shape with
 * deterministic text and a simulated prompt cache (answer.ts) or its stream (stream.ts), and
 * shapes errors as `{type:'error', error:{type, message}}` (errors.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errorNameFor } from '../error-names.js';
import { bodyText, servedAt } from '../handler-parts.js';
import type { ProtocolHandler, Reply } from '../types.js';
import { cachedPrefixes } from './answer.js';
import { simulatedAnthropicError } from './errors.js';
import { simulatedMessagesStream } from './stream.js';
import { validateMessages } from './validate.js';

/** The protocol module registered by the simulator server. */
export const simulatedAnthropicMessages: ProtocolHandler = {
  // reset(): a cold prompt cache again.
  ...servedAt('anthropic-messages', '/v1/messages', simulatedMessagesStream, () => cachedPrefixes.clear()),

  /** No key is needed, but a Bearer token in place of `x-api-key` and a missing `anthropic-version` fail as with Anthropic. */
  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    if (headers['x-api-key'] === undefined && headers.authorization !== undefined) {
      return simulatedAnthropicError(401, 'authentication_error', 'x-api-key header is required');
    }
    if (headers['anthropic-version'] === undefined) return simulatedAnthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
    return undefined;
  },

  // Anthropic's 404 for a retired model (as for claude-opus-4-20250514, mnfst/modelparams.dev#94).
  shutDown: (model) => simulatedAnthropicError(404, 'not_found_error', `model: ${model}`),

  prepare: (body) => validateMessages(body),

  invalidJson(): Reply {
    return simulatedAnthropicError(400, 'invalid_request_error', 'There was an error parsing the body of your request: it is not valid JSON.');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const reply = simulatedAnthropicError(status, errorNameFor('anthropic', status), `Simulated upstream error ${status}`);
    if (retryAfter !== undefined) reply.headers['retry-after'] = retryAfter;
    if (body !== undefined) reply.body = bodyText(body);
    return reply;
  },
};
