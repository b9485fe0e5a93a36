import { isUtf8 } from 'node:buffer';
import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { checkPromptRequest } from '../contract/validate.js';
import { REPEATED_MEMBER, readRequestJson, TOO_MANY_FIELDS } from '../contract/json-fields.js';
import { escapePointer } from '../contract/pointer.js';
import type { PromptRequest } from '../contract/types.js';
import { ContentTypeError } from './single-headers.js';
import { IdempotencyService } from '../idempotency/idempotency-service.js';
import { MalformedJsonError, PayloadTooLargeError, ValidationError, type FieldError } from '../errors.js';

export type ApiEvent = APIGatewayProxyEvent & { json?: unknown; promptRequest?: PromptRequest };
type Middleware = middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult>;

/**
 * JSON bodies only. `application/x-www-form-urlencoded` is accepted too because it is
 * what `curl -d` sends by default; the body must still be JSON. No Content-Type at all
 * is taken as JSON. Parameters are free, but a `charset` must be UTF-8 (refusedCharset).
 */
const ACCEPTED_TYPES = /^(application\/json|application\/[a-z0-9.+-]+\+json|application\/x-www-form-urlencoded)\s*(;.*)?$/i;

/**
 * The content-codings of a Content-Encoding other than `identity`, or undefined: the body is
 * read as the bytes it is (no gzip or other coding is undone), so a coded body is refused, not
 * taken for JSON it is not.
 */
function refusedEncoding(contentEncoding: string | undefined): string | undefined {
  if (contentEncoding === undefined) return undefined;
  const codings = contentEncoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  return codings.length > 0 ? codings.join(', ') : undefined;
}

/** UTF-8's IANA name and `utf8`, which the WHATWG Encoding standard and most HTTP clients also take for it. */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);

/**
 * The value of the first `charset` parameter of a Content-Type that does not name UTF-8
 * (in any letter case, quoted or not), or undefined. JSON exchanged between systems is
 * UTF-8 (RFC 8259 8.1): a body declared `charset=utf-16` or `latin1` would otherwise be
 * read as UTF-8, as other text than its sender meant. Read in one pass over the header
 * (parameters per RFC 9110 5.6.6: `; name=token` or `; name="quoted\"string"`); a parameter
 * without a value is skipped, as it was.
 */
export function refusedCharset(contentType: string): string | undefined {
  const length = contentType.length;
  let at = contentType.indexOf(';');
  while (at !== -1 && at < length) {
    // The name: up to its `=`, or to the next `;` when it has no value.
    let end = at + 1;
    while (end < length && contentType[end] !== '=' && contentType[end] !== ';') end++;
    const name = contentType
      .slice(at + 1, end)
      .trim()
      .toLowerCase();
    if (contentType[end] !== '=') {
      at = end;
      continue;
    }
    let start = end + 1;
    while (start < length && (contentType[start] === ' ' || contentType[start] === '\t')) start++;
    let value: string;
    if (contentType[start] === '"') {
      // A quoted string: a backslash quotes the character after it; a `;` inside is text.
      const chars: string[] = [];
      let i = start + 1;
      for (; i < length && contentType[i] !== '"'; i++) chars.push(contentType[contentType[i] === '\\' && i + 1 < length ? ++i : i] as string);
      value = chars.join('');
      at = contentType.indexOf(';', i);
    } else {
      at = contentType.indexOf(';', start);
      value = contentType.slice(start, at === -1 ? length : at).trim();
    }
    if (name === 'charset' && !UTF8_LABELS.has(value.toLowerCase())) return value;
  }
  return undefined;
}

/**
 * The request body, parsed by `@middy/http-json-body-parser` into `event.json`, after the
 * checks it does not make: the size in bytes (`limitBytes`, counted on the bytes as
 * received, base64 bodies decoded), the accepted content types, UTF-8 (RFC 8259: a
 * body that is not valid UTF-8 is not JSON, however it parses), the field cap, and member
 * names repeated in an object. Every refusal is the contract's error body: 413, 415, or 400
 * (`malformed_json`, or `invalid_request` naming the fields).
 */
export function jsonBody(options: { limitBytes: number }): Middleware {
  // Its own content-type check is off: ours accepts what curl -d sends, and a body with none
  // (6.x reads `disableContentTypeCheck`; its type declarations omit it).
  const parser = httpJsonBodyParser({ disableContentTypeCheck: true } as Parameters<typeof httpJsonBodyParser>[0]);
  return {
    before: async (request) => {
      const { event } = request;
      const bytes = event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64') : undefined;
      const size = bytes ? bytes.length : Buffer.byteLength(event.body ?? '', 'utf8');
      if (size > options.limitBytes) throw new PayloadTooLargeError(options.limitBytes);
      const encoding = refusedEncoding(event.headers['content-encoding']);
      if (encoding !== undefined)
        throw new ContentTypeError(
          encoding,
          'must be identity or absent: the body is read as it is sent, not decoded',
          'Content-Encoding',
          `Content-Encoding "${encoding.slice(0, 40)}" is not accepted; send the body uncoded`,
        );
      const contentType = event.headers['content-type'];
      if (contentType !== undefined) {
        if (!ACCEPTED_TYPES.test(contentType)) throw new ContentTypeError(contentType, 'must be application/json');
        const charset = refusedCharset(contentType);
        if (charset !== undefined)
          throw new ContentTypeError(contentType, `must not declare charset "${charset.slice(0, 40)}": a JSON body is UTF-8 (RFC 8259); send charset=utf-8 or none`);
      }
      // A text body is a string already; bytes handed over as base64 are checked before they are decoded.
      if (bytes && !isUtf8(bytes)) throw new MalformedJsonError(new Error('The body is not valid UTF-8'));
      // No body at all is no JSON (the parser would take `null` for the JSON value null).
      event.body ??= '';
      const text = bytes ? bytes.toString('utf8') : event.body;
      // Before the parse: what a hostile shape costs JSON.parse is what the field cap is for.
      const fields = readRequestJson(text);
      if (fields.tooMany) throw new ValidationError([{ field: '', message: TOO_MANY_FIELDS }]);
      try {
        await parser.before!(request as Parameters<NonNullable<typeof parser.before>>[0]);
      } catch (error) {
        throw new MalformedJsonError(error);
      }
      // JSON.parse keeps the last of a repeated member; a proxy or log that read the first saw another request.
      if (fields.repeated.length > 0)
        throw new ValidationError(
          fields.repeated.map((field) => ({ field, message: REPEATED_MEMBER })),
          fields.repeatedCount,
        );
      event.json = event.body as unknown;
      // UTF-8 cannot spell half of a surrogate pair; a `\ud800` escape can. Such a string is not
      // text (a vendor's parser may refuse it after the credits are held): 400, naming the field.
      if (SURROGATE_ESCAPE.test(text)) {
        const field = loneSurrogateAt(event.json);
        if (field !== undefined)
          throw new ValidationError([{ field: field || '/', message: 'is not valid Unicode text: it holds half of a surrogate pair (a lone \\uD800-\\uDFFF escape)' }]);
      }
    },
  };
}

/** A `\uD800`-`\uDFFF` escape, which may leave half of a surrogate pair in a parsed string. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** A place in a JSON value: its member name or index, below its parent's place. */
type Place = { name: string; parent: Place | undefined } | undefined;

function pointer(place: Place): string {
  const names: string[] = [];
  for (let at = place; at !== undefined; at = at.parent) names.push(escapePointer(at.name));
  return names
    .reverse()
    .map((name) => `/${name}`)
    .join('');
}

/**
 * The JSON pointer of a string (a value or a member's name) holding a lone surrogate, or
 * undefined. Walked with a stack of its own, not recursion, and each place kept as a link to
 * its parent's: a body may nest deeper than the call stack goes.
 */
function loneSurrogateAt(json: unknown): string | undefined {
  const pending: [unknown, Place][] = [[json, undefined]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, place] = next;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return pointer(place);
    } else if (typeof value === 'object' && value !== null) {
      for (const [name, member] of Object.entries(value)) {
        const at = { name, parent: place };
        if (!name.isWellFormed()) return pointer(at);
        pending.push([member, at]);
      }
    }
  }
  return undefined;
}

/** What is wrong with the request's Idempotency-Key (its headers normalized), or undefined. */
function keyProblemOf(event: ApiEvent): FieldError | undefined {
  const key = event.headers?.['idempotency-key'];
  return key === undefined ? undefined : IdempotencyService.keyProblem(key);
}

/**
 * Refuses a malformed Idempotency-Key once the body passed its checks, and names it beside the
 * body's fields where they did not (a repeated member, an unknown field): one 400, not a second
 * once the body is fixed. Used after the body's checks, so that its error handler runs first.
 */
export function idempotencyKeyHeader(): Middleware {
  return {
    before: ({ event }) => {
      const problem = keyProblemOf(event);
      if (problem) throw new ValidationError([problem]);
    },
    onError: (request) => {
      const problem = keyProblemOf(request.event);
      const { error } = request;
      if (problem && error instanceof ValidationError && !error.details.some((detail) => detail.field === problem.field)) {
        request.error = error.adding(problem);
      }
    },
  };
}

export function validateContract(): Middleware {
  return {
    before: async ({ event }) => {
      // A response_schema is compiled on the schema thread (ajv loads there, on the first one),
      // its compile cached for the account alone (the authorizer's context; none: the handler refuses with a 401).
      const accountId = event.requestContext?.authorizer?.accountId;
      event.promptRequest = await checkPromptRequest(event.json, typeof accountId === 'string' ? accountId : '');
    },
  };
}
