/**
 * The small parts several simulated protocols' handlers share: their routes, where they read
 * the model, whether a body asks for a stream, and a fault's error body as text.
 */
import { isObject } from './json.js';

/** A route serving `POST` at exactly `path`. */
export function postAt(path: string): (method: string, rest: string) => boolean {
  return (method, rest) => method === 'POST' && rest === path;
}

/** A route serving `POST` at any path `pattern` matches. */
export function postMatching(pattern: RegExp): (method: string, rest: string) => boolean {
  return (method, rest) => method === 'POST' && pattern.test(rest);
}

/** The body's `model` field, '' when it has none. */
export function modelInBody(body: unknown): string {
  return isObject(body) && typeof body['model'] === 'string' ? body['model'] : '';
}

/** Whether the body asks for a streamed answer with `stream: true`. */
export function asksForStream(body: unknown): boolean {
  return isObject(body) && body['stream'] === true;
}

/** The model the first group of `pattern` finds in the path, URL-decoded; `undecodable` decides what a bad escape gives. */
export function modelInPath(pattern: RegExp, rest: string, undecodable: 'as-sent' | 'none'): string {
  const encoded = pattern.exec(rest)?.[1];
  if (encoded === undefined) return '';
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undecodable === 'as-sent' ? encoded : '';
  }
}

/** A fault's error body as sent: a string as it is, anything else as JSON. */
export function bodyText(body: unknown): string {
  return typeof body === 'string' ? body : JSON.stringify(body);
}
