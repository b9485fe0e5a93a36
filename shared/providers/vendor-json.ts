import { tooManyJsonFields } from '../contract/json-fields.js';

/**
 * Object members and array elements in all that the gateway parses of one vendor JSON text
 * (an answer, an error body, a streamed event, a tool's input). An answer needs a few dozen
 * (its text is one string however long); JSON.parse of 20,000 members takes about 10 ms
 * here, while a vendor's 8 MiB answer of nested arrays or empty keys held the thread for 3
 * to 7 seconds, every tenant's requests waiting behind it.
 */
export const MAX_VENDOR_JSON_FIELDS = 20_000;

/** What parseVendorJson throws for a text over MAX_VENDOR_JSON_FIELDS, before any parse: a SyntaxError, as JSON.parse's own. */
export class VendorJsonShapeError extends SyntaxError {
  constructor() {
    super(`more than ${MAX_VENDOR_JSON_FIELDS} JSON fields`);
  }
}

/** JSON.parse of a vendor's text, refused before the parse when its shape would hold the thread (tooManyJsonFields). */
export function parseVendorJson(text: string): unknown {
  if (tooManyJsonFields(text, MAX_VENDOR_JSON_FIELDS)) throw new VendorJsonShapeError();
  return JSON.parse(text);
}

/**
 * Whether a vendor's JSON the AWS SDK parses itself (Bedrock's: a body read whole, an event's
 * payload from `start` to `end`) holds more fields than `max` (by default what parseVendorJson
 * takes): the bytes are decoded and scanned only where there are more of them than the limit
 * (a field takes one at least, its comma).
 */
export function tooManyVendorJsonFields(bytes: Buffer, start = 0, end = bytes.length, max = MAX_VENDOR_JSON_FIELDS): boolean {
  return end - start > max && tooManyJsonFields(bytes.toString('utf8', start, end), max);
}

/** How a vendor's text that parseVendorJson refused differs from JSON: too many fields, or not JSON at all. */
export function notJson(error: unknown): string {
  return error instanceof VendorJsonShapeError ? `holds ${error.message}` : 'is not JSON';
}
