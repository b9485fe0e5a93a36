import { parseRetryAfter, statusError, vendorWord, type UpstreamError } from '../errors.js';
import { cutWhole } from '../../text/characters.js';
import { parseVendorJson } from '../vendor-json.js';

/** Google's error body: `{"error": {"code", "message", "status", "details": [{"@type", ...}]}}`. */
interface GoogleErrorBody {
  error?: {
    code?: unknown;
    message?: unknown;
    status?: unknown;
    details?: unknown;
  };
}

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

/** A protobuf Duration in JSON ("34.4s", "2s", "0.500s") in milliseconds. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

/** The wait a google.rpc.RetryInfo detail asks for, if the body carries one. */
export function retryDelayOf(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (typeof detail === 'object' && detail !== null && (detail as Record<string, unknown>)['@type'] === RETRY_INFO) {
      return parseDuration((detail as Record<string, unknown>)['retryDelay']);
    }
  }
  return undefined;
}

/**
 * A non-2xx answer as an UpstreamError: Google's message and status, retryable for 429
 * (RESOURCE_EXHAUSTED) and 5xx (INTERNAL, UNAVAILABLE, DEADLINE_EXCEEDED), waiting as long as
 * the Retry-After header or else the RetryInfo detail says.
 */
export function fromErrorResponse(status: number, text: string, retryAfter: string | null, now = Date.now()): UpstreamError {
  let error: GoogleErrorBody['error'];
  try {
    const parsed = parseVendorJson(text);
    if (typeof parsed === 'object' && parsed !== null) error = (parsed as GoogleErrorBody).error;
  } catch {
    error = undefined;
  }
  return fromGoogleError(status, error, retryAfter, now);
}

/** The HTTP status of each google.rpc status (google/rpc/code.proto), for an error that gives its status and no HTTP code. */
const HTTP_STATUS_OF: Readonly<Record<string, number>> = {
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
  UNAUTHENTICATED: 401,
};

/**
 * An error object a 200 carried instead of an answer (a stream's chunk, a whole body: Gemini
 * sends `{"error": …}` so too), as fromErrorResponse maps one: its `code` the status where it
 * is an HTTP error status, else the one its google.rpc `status` stands for, else 500 (a code of
 * 7, 1000 or 2.5 is no status the vendor answered).
 */
export function errorInAnswer(error: unknown): UpstreamError {
  const found = typeof error === 'object' && error !== null ? (error as NonNullable<GoogleErrorBody['error']>) : {};
  const { code, status } = found;
  const http =
    typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599
      ? code
      : typeof status === 'string' && Object.hasOwn(HTTP_STATUS_OF, status)
        ? HTTP_STATUS_OF[status]!
        : 500;
  return fromGoogleError(http, found, null);
}

function fromGoogleError(status: number, error: GoogleErrorBody['error'], retryAfter: string | null, now = Date.now()): UpstreamError {
  const message = typeof error?.message === 'string' && error.message !== '' ? cutWhole(error.message, 500) : undefined;
  const googleStatus = error?.status === '' ? undefined : vendorWord(error?.status);
  const described = message ? (googleStatus ? `${googleStatus}: ${message}` : message) : `The provider answered ${status}${googleStatus ? ` ${googleStatus}` : ''}`;
  return statusError(status, described, { retryAfterMs: parseRetryAfter(retryAfter, now) ?? retryDelayOf(error?.details) });
}
