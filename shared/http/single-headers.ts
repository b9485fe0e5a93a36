import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { type FieldError, UnauthorizedError, UnsupportedMediaTypeError, ValidationError } from '../errors.js';

// Apart from the prompt route's body handling (middleware.ts), so that the catalog's function
// refuses repeated headers without loading the request validator.

/** A 415 that names the header in `details`, as a 400 names a field of the body. */
export class ContentTypeError extends UnsupportedMediaTypeError {
  readonly details: FieldError[];
  constructor(contentType: string, message: string, header = 'Content-Type', summary?: string) {
    super(contentType, summary);
    this.details = [{ field: `header:${header}`, message }];
  }
}

/** Headers a request must carry at most once, and the error a repeated one gets. */
const SINGLE_HEADERS: ReadonlyMap<string, () => Error> = new Map(
  Object.entries({
    // One credential per request, whichever of its values the authorizer was given.
    authorization: () => new UnauthorizedError('Send exactly one Authorization header: Authorization: Bearer <API_KEY>'),
    // Which key would the retry be matched on? Neither silently.
    'idempotency-key': () => new ValidationError([{ field: 'header:Idempotency-Key', message: 'must be sent at most once' }]),
    // Which type is the body? A proxy may have read the first, the parser the last.
    'content-type': () => new ContentTypeError('', 'must be sent at most once', 'Content-Type', 'Send exactly one Content-Type header: Content-Type: application/json'),
    // `gzip` then `identity` would pass as identity, the body still gzip.
    'content-encoding': () =>
      new ContentTypeError('', 'must be sent at most once', 'Content-Encoding', 'Send at most one Content-Encoding header, identity: the body is read as it comes'),
  }),
);

/** Headers the gateway reads whose lines, repeated, make one list (RFC 9110 §5.3). */
const LIST_HEADERS: ReadonlySet<string> = new Set(['accept']);

/**
 * Headers sent on several lines (in any letter case), read in one pass over
 * `multiValueHeaders` before the header normalizer, which would keep one of the values:
 * - one of SINGLE_HEADERS is refused: a repeated `Authorization` with 401, a repeated
 *   `Idempotency-Key` with 400, a repeated `Content-Type` or `Content-Encoding` with 415;
 * - one of LIST_HEADERS is read as one, its lines joined in order with commas, as RFC 9110
 *   §5.3 says a recipient may combine them (Node's server does): API Gateway hands over the
 *   last line in `headers`, so `Accept: text/event-stream` then `Accept: text/html` was read
 *   as `text/html` alone, where the one line `text/event-stream, text/html` streams.
 */
export function repeatedHeaders(): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    before: ({ event }) => {
      // Maps: a header named as a member every object inherits (`constructor`, `__proto__`) is no entry of them.
      const counts = new Map<string, number>();
      const lists = new Map<string, string[]>();
      for (const [name, lines] of Object.entries(event.multiValueHeaders ?? {})) {
        const lower = name.toLowerCase();
        if (SINGLE_HEADERS.has(lower)) counts.set(lower, (counts.get(lower) ?? 0) + (lines?.length ?? 0));
        else if (LIST_HEADERS.has(lower) && lines) lists.set(lower, [...(lists.get(lower) ?? []), ...lines]);
      }
      for (const [name, count] of counts) if (count > 1) throw SINGLE_HEADERS.get(name)!();
      for (const [name, lines] of lists) {
        if (lines.length < 2) continue;
        const others = Object.entries(event.headers ?? {}).filter(([key]) => key.toLowerCase() !== name);
        event.headers = { ...Object.fromEntries(others), [name]: lines.join(', ') };
      }
    },
  };
}
