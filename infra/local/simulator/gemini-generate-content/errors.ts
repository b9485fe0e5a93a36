/** The error bodies of the simulated Gemini API, as Google shapes them: `{"error":{"code","message","status","details"}}`. */
import { errorNameFor } from '../error-names.js';
import type { Json } from '../json.js';
import type { Reply } from '../types.js';

/** The message Google sends with a status, when a fault gives no body. */
export const GOOGLE_MESSAGES: Record<number, string> = {
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'The request timed out. Please try again.',
};

export function googleHeaders(): Record<string, string> {
  return { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', server: 'scaffolding on HTTPServer2' };
}

/** An error reply in Google's shape. */
export function simulatedGoogleError(status: number, message: string, details?: unknown[]): Reply {
  const error: Json = { code: status, message, status: errorNameFor('google', status) };
  if (details) error['details'] = details;
  return { status, headers: googleHeaders(), body: JSON.stringify({ error }) };
}
