/** The error bodies of the simulated Gemini API, as Google shapes them: `{"error":{"code","message","status","details"}}`. */
import type { Json } from '../json.js';
import type { Reply } from '../types.js';

/** Google RPC status names by HTTP status. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export const DEFAULT_MESSAGES: Record<number, string> = {
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'The request timed out. Please try again.',
};

export function googleStatusName(status: number): string {
  return STATUS_NAMES[status] ?? (status >= 500 ? 'UNKNOWN' : 'FAILED_PRECONDITION');
}

export function googleHeaders(): Record<string, string> {
  return { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', server: 'scaffolding on HTTPServer2' };
}

/** An error reply in Google's shape. */
export function simulatedGoogleError(status: number, message: string, details?: unknown[]): Reply {
  const error: Json = { code: status, message, status: googleStatusName(status) };
  if (details) error['details'] = details;
  return { status, headers: googleHeaders(), body: JSON.stringify({ error }) };
}
