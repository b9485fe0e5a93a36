import { escapedQuoteAt } from '../text/escaped-quote.js';

/**
 * Fields and array elements a body may hold in all, at every level: far more than the
 * contract needs (200 history turns of 3 fields, 32 models, a response schema of 100
 * objects), far fewer than a 5 MiB body of empty keys (150,000 of them cost the schema
 * check alone over 100 ms).
 */
export const MAX_FIELDS = 5_000;

export const TOO_MANY_FIELDS = `has more than ${MAX_FIELDS} fields in all`;

const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Whether a JSON text holds more than `max` (MAX_FIELDS) object members and array elements in all,
 * read from the text before it is parsed: JSON.parse alone of a hostile 5 MiB body (2.6
 * million nested arrays, 400,000 keys) holds the thread for seconds, which the same cap
 * checked on the parsed value comes too late to spare. One pass: members and elements are
 * the commas plus the containers that are not empty, outside strings, and a string is
 * skipped by searching for its closing quote (a quote after an odd run of backslashes is
 * escaped; each run is read once, by the quote after it). A text that is not JSON counts
 * whatever it counts: the parser refuses it anyway.
 */
export function tooManyJsonFields(text: string, max: number = MAX_FIELDS): boolean {
  let fields = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      let end = i;
      do {
        end = text.indexOf('"', end + 1);
        if (end === -1) return false;
      } while (escapedQuoteAt(text, end));
      i = end;
    } else if (code === COMMA) {
      if (++fields > max) return true;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      let next = i + 1;
      while (next < length && isSpace(text.charCodeAt(next))) next++;
      const after = text.charCodeAt(next);
      if (after !== CLOSE_ARRAY && after !== CLOSE_OBJECT && ++fields > max) return true;
    }
  }
  return false;
}
