/**
 * The simulated Gemini `generateContent` protocol:
 * `POST /{provider}/v1/models/{model}:generateContent` and `/v1beta/...` (the model is in the
 * path; `:streamGenerateContent` streams). Validates the request as Gemini does
 * (validate.ts), answers in the GenerateContentResponse shape with deterministic text
 * (answer.ts) or its stream (stream.ts), and shapes errors as Google does (errors.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bodyText, modelInPath, postMatching } from '../handler-parts.js';
import type { ProtocolHandler, Reply } from '../types.js';
import { DEFAULT_MESSAGES, googleHeaders, simulatedGoogleError } from './errors.js';
import { simulatedGenerateContentStream } from './stream.js';
import { validateGenerateContent } from './validate.js';

const PATH = /^\/(?:v1|v1beta)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** The model named in `/v1beta/models/{model}:generateContent`, '' when the path has none. */
function modelFromPath(rest: string): string {
  return modelInPath(PATH, rest, 'as-sent');
}

/** The protocol module registered by the simulator server. */
export const simulatedGeminiGenerateContent: ProtocolHandler = {
  protocol: 'gemini-generate-content',
  streams: (_body, rest) => PATH.exec(rest)?.[2] === 'streamGenerateContent',
  toStream: simulatedGenerateContentStream,
  route: postMatching(PATH),
  modelOf: (_body, rest) => modelFromPath(rest),

  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    const key = headers['x-goog-api-key'];
    if (key === undefined || (typeof key === 'string' && key.trim() !== '')) return undefined;
    return simulatedGoogleError(400, 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ]);
  },

  prepare: (body, rest) => validateGenerateContent(body, modelFromPath(rest)),

  invalidJson(): Reply {
    return simulatedGoogleError(400, 'Invalid JSON payload received. Unexpected token.');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    if (body !== undefined) return { status, headers: googleHeaders(), body: bodyText(body) };
    // Google sends its retry delay as a RetryInfo detail, not as a Retry-After header.
    const seconds = retryAfter !== undefined && /^\d+(\.\d+)?$/.test(retryAfter) ? retryAfter : undefined;
    const details = seconds !== undefined ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }] : undefined;
    const reply = simulatedGoogleError(status, DEFAULT_MESSAGES[status] ?? `Simulated upstream error ${status}`, details);
    if (retryAfter !== undefined && seconds === undefined) reply.headers['retry-after'] = retryAfter;
    return reply;
  },
};
