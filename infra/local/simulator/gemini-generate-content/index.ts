/**
 * The simulated Gemini `generateContent` protocol:
 * `POST /{provider}/v1/models/{model}:generateContent` and `/v1beta/...` (the model is in the
 * path; `:streamGenerateContent` streams). Validates the request as Gemini does
 * (validate.ts), answers in the GenerateContentResponse shape with deterministic text
 * (answer.ts) or its stream (stream.ts), and shapes errors as Google does (errors.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bodyText, servedMatching } from '../handler-parts.js';
import type { ProtocolHandler, Reply } from '../types.js';
import { GOOGLE_MESSAGES, googleHeaders, simulatedGoogleError } from './errors.js';
import { simulatedGenerateContentStream } from './stream.js';
import { validateGenerateContent } from './validate.js';

const PATH = /^\/(?:v1|v1beta)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** The model is the one the path names, '' when it names none (a bad escape stays as sent). */
const serving = servedMatching('gemini-generate-content', PATH, 'streamGenerateContent', simulatedGenerateContentStream, 'as-sent');

/** The protocol module registered by the simulator server. */
export const simulatedGeminiGenerateContent: ProtocolHandler = {
  ...serving,

  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    const key = headers['x-goog-api-key'];
    if (key === undefined || (typeof key === 'string' && key.trim() !== '')) return undefined;
    return simulatedGoogleError(400, 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ]);
  },

  prepare: (body, rest) => validateGenerateContent(body, serving.modelOf(body, rest)),

  invalidJson(): Reply {
    return simulatedGoogleError(400, 'Invalid JSON payload received. Unexpected token.');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    if (body !== undefined) return { status, headers: googleHeaders(), body: bodyText(body) };
    // Google sends its retry delay as a RetryInfo detail, not as a Retry-After header.
    const seconds = retryAfter !== undefined && /^\d+(\.\d+)?$/.test(retryAfter) ? retryAfter : undefined;
    const details = seconds !== undefined ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }] : undefined;
    const reply = simulatedGoogleError(status, GOOGLE_MESSAGES[status] ?? `Simulated upstream error ${status}`, details);
    if (retryAfter !== undefined && seconds === undefined) reply.headers['retry-after'] = retryAfter;
    return reply;
  },
};
