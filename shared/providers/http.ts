import { randomUUID } from 'node:crypto';
import { answerHead, answerStatus, MAX_ANSWER_BYTES, MIN_AVERAGE_CHUNK_BYTES, post, requestSent, type PostAnswer } from '../http/post.js';
import { UpstreamError, parseRetryAfter, statusError } from './errors.js';
import { cutWhole } from '../text/characters.js';
import { notJson, parseVendorJson } from './vendor-json.js';
import { jsonStringBytes, pieceTexts } from './shared-text.js';
import type { ModelCall } from './types.js';

/** Who calls: some vendors' edges refuse requests without a user agent. */
const USER_AGENT = 'model-compare-gateway';

/** Turns a vendor's non-2xx answer into an UpstreamError; protocols whose error bodies say more pass their own. */
export type ErrorMapper = (status: number, text: string, retryAfter: string | null) => UpstreamError;

/**
 * A vendor request, serialised once, to UTF-8 bytes: sent again as it is by every attempt,
 * and written to the socket without encoding it again (a 5 MiB prompt to 32 models is 160 MB
 * to encode: once each, while the reserve is in flight, not all at once when it lands).
 */
export interface WireRequest {
  url: URL;
  /** Whole, or in pieces where the call's prompt has shared pieces (jsonPayload). */
  payload: Buffer | readonly Buffer[];
  headers: Record<string, string>;
}

/**
 * A vendor's body as the gateway sends it, with the headers every vendor call carries.
 * `prompt`: the call whose prompt the body holds, in pieces where it has them (jsonPayload).
 */
export function jsonRequest(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  { accept = 'application/json', prompt }: { accept?: string; prompt?: Pick<ModelCall, 'prompt' | 'promptPieces'> } = {},
): WireRequest {
  return { url: new URL(url), payload: jsonPayload(body, prompt), headers: { 'content-type': 'application/json', accept, 'user-agent': USER_AGENT, ...headers } };
}

/**
 * Whether the prompt's pieces can stand for it in a body: they make it (pieceTexts), and no
 * surrogate pair is split between two of them (JSON escapes half a pair, where the whole
 * prompt has the character). Reads no text but the pieces' ends.
 */
function piecesMake(prompt: Pick<ModelCall, 'prompt' | 'promptPieces'>): boolean {
  const texts = pieceTexts(prompt);
  if (!texts) return false;
  let endsHigh = false;
  for (const text of texts) {
    if (text.length === 0) continue;
    if (endsHigh && isLowSurrogate(text.charCodeAt(0))) return false;
    endsHigh = isHighSurrogate(text.charCodeAt(text.length - 1));
  }
  return true;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Stands for the prompt in a body serialised without it; random, so that no caller's text holds it (and a body that does is serialised whole). */
const PROMPT_MARK = `prompt-${randomUUID()}`;

/**
 * The body's JSON as UTF-8. Where the call's prompt has pieces and the body holds the prompt as
 * one of its strings, once, the body is serialised with a mark in its place and the prompt's
 * pieces' bytes go there: the shared pieces' bytes made once for every call that sends them.
 * The bytes are the same as the whole body's: JSON escapes a string character by character.
 */
function jsonPayload(body: unknown, prompt: Pick<ModelCall, 'prompt' | 'promptPieces'> | undefined): Buffer | readonly Buffer[] {
  const pieces = prompt?.promptPieces;
  if (pieces && prompt.prompt.length > 0 && piecesMake(prompt)) {
    const marked = JSON.stringify(body, (_key, value: unknown) => (value === prompt.prompt ? PROMPT_MARK : value));
    const at = marked.indexOf(PROMPT_MARK);
    if (at >= 0 && marked.indexOf(PROMPT_MARK, at + PROMPT_MARK.length) < 0) {
      return [Buffer.from(marked.slice(0, at), 'utf8'), ...pieces.map(jsonStringBytes), Buffer.from(marked.slice(at + PROMPT_MARK.length), 'utf8')];
    }
  }
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * A POST's failure as an UpstreamError: an abort; a success whose body broke off once its head
 * was in (the status the error carries), which reached the vendor: a malformed answer, not
 * retried (the vendor generated it); else a failure to reach the vendor, retried. An error
 * status whose body broke off is mapped by its caller, as that status (`errorStatusAnswer`).
 */
export function unreachable(signal: AbortSignal, error: unknown): UpstreamError {
  const status = answerStatus(error);
  if (signal.aborted) return abortError(signal, error, status);
  if (status !== undefined && status >= 200 && status <= 299) {
    return new UpstreamError('upstream_malformed_response', `The provider's answer broke off: ${describe(error)}`, { upstreamStatus: status, cause: error });
  }
  return new UpstreamError('upstream_unreachable', `Could not reach the provider: ${describe(error)}`, { retryable: true, cause: error });
}

/**
 * For a POST that failed once an error status's head was in (its body broken off, or too large
 * to read), that status's error as `mapError` makes it, from the head alone (its Retry-After
 * kept): the vendor answered, and its status says what it did. Undefined for any other failure.
 */
export function errorStatusAnswer(signal: AbortSignal, error: unknown, mapError: ErrorMapper): UpstreamError | undefined {
  const head = answerHead(error);
  if (signal.aborted || head === undefined || (head.status >= 200 && head.status <= 299)) return undefined;
  return mapError(head.status, '', headerValue(head.headers['retry-after']));
}

export interface PostJsonOptions {
  /** Turns a non-2xx answer into an UpstreamError; by default `defaultErrorMapper`. */
  mapError?: ErrorMapper;
}

/**
 * POSTs JSON to a vendor and returns the parsed JSON answer. Every failure becomes an
 * UpstreamError: by default 429 and 5xx are retryable, other statuses are not; a body that
 * is not JSON is a malformed response. The vendor's error message is kept; the request body never is.
 */
export async function postJson(request: WireRequest, signal: AbortSignal, options: PostJsonOptions = {}): Promise<unknown> {
  const { mapError = defaultErrorMapper } = options;
  let response: PostAnswer;
  try {
    response = await post(request.url, request.payload, request.headers, { signal });
  } catch (error) {
    // An error answer broken off or too large to read whole is still its status's error.
    throw errorStatusAnswer(signal, error, mapError) ?? answerTooLarge(error) ?? unreachable(signal, error);
  }
  const { status, text } = response;
  if (status < 200 || status > 299) throw mapError(status, text, headerValue(response.headers['retry-after']));
  try {
    return parseVendorJson(text);
  } catch (error) {
    throw new UpstreamError('upstream_malformed_response', `The provider answered ${status} with a body that ${notJson(error)}`, {
      upstreamStatus: status,
      cause: error,
    });
  }
}

/**
 * An answer `post` (or `readBody`) refused for its size, or for its pieces (MIN_AVERAGE_CHUNK_BYTES),
 * or the Bedrock client for its JSON fields (EANSWERFIELDS), as an UpstreamError, its message
 * made anew (the AWS SDK appends a hint to the message of an error thrown while it reads);
 * undefined for any other error.
 */
export function answerTooLarge(error: unknown): UpstreamError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  // Not retried: the same call would answer as much again.
  if (code === 'EANSWERTOOLARGE') return new UpstreamError('upstream_malformed_response', `The provider's answer exceeded ${MAX_ANSWER_BYTES} bytes`, { cause: error });
  if (code === 'EANSWERFIELDS') {
    const { limit } = error as { limit?: unknown };
    return new UpstreamError('upstream_malformed_response', `The provider's answer holds more than ${String(limit)} JSON fields`, { cause: error });
  }
  if (code === 'EANSWERFRAGMENTED') {
    const { chunks, bytes } = error as { chunks?: unknown; bytes?: unknown };
    const pieces = `${String(chunks)} pieces of ${String(bytes)} bytes in all, under ${MIN_AVERAGE_CHUNK_BYTES} bytes a piece`;
    return new UpstreamError('upstream_malformed_response', `The provider's answer came in too many tiny pieces: ${pieces}`, { cause: error });
  }
  return undefined;
}

export const defaultErrorMapper: ErrorMapper = (status, text, retryAfter) => {
  const body = vendorBody(text);
  return statusError(status, vendorMessage(body) ?? `The provider answered ${status}`, { body, retryAfterMs: parseRetryAfter(retryAfter) });
};

export function abortError(signal: AbortSignal, cause: unknown, status = answerStatus(cause)): UpstreamError {
  // An error answer cut off: its status is what the vendor said, and it bills nothing for it.
  const refused = status !== undefined && (status < 200 || status > 299);
  return new UpstreamError('timeout', 'The model did not answer before the request deadline', {
    cause: signal.reason ?? cause,
    ...(refused ? { upstreamStatus: status } : {}),
    ...(refused || requestSent(cause) === false ? { unbilled: true as const } : {}),
  });
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : typeof message === 'string' ? message : 'network error';
}

export function headerValue(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The human part of a vendor error body (`{"error":{"message"}}` and its relatives), cut short. */
function vendorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message } = body as { error?: { message?: unknown } | string | null; message?: unknown };
  const text = typeof error === 'string' ? error : (error?.message ?? message);
  return typeof text === 'string' ? cutWhole(text, 500) : undefined;
}

/** A vendor error body as JSON, or undefined where it is none. */
export function vendorBody(text: string): unknown {
  try {
    return parseVendorJson(text);
  } catch {
    return undefined;
  }
}
