import { escapedQuoteAt } from '../text/escaped-quote.js';
import { exceeds } from './json-shape.js';
import type { OutputValidator } from './schema-compile.js';

/** Whether an output conforms to the request's `response_schema`, and the parsed value when it does. */
export type StructuredOutput = { conforms: true; value: unknown } | { conforms: false; errors: string[] };

/**
 * Parses an output as JSON the way models send it (bare, in a Markdown fence, or with prose
 * around it) and validates it against the schema: the first reading of it that conforms, else
 * what the first that parses breaks (prose around the answer may hold an object of its own:
 * `shape: {"n": 0}`, `({} if empty)`).
 */
export function checkStructuredOutput(output: string, validate: OutputValidator): StructuredOutput {
  let first: StructuredOutput | undefined;
  for (const value of parsedReadings(output)) {
    const checked = checkValue(value, validate);
    if (checked.conforms) return checked;
    first ??= checked;
  }
  return first ?? { conforms: false, errors: ['the output is not JSON'] };
}

function checkValue(value: unknown, validate: OutputValidator): StructuredOutput {
  // JSON.parse takes any depth, JSON.stringify (the answer) and a recursive schema's check do not.
  if (exceeds(value, { depth: MAX_VALUE_DEPTH })) return { conforms: false, errors: [TOO_DEEP] };
  try {
    if (validate(value)) return { conforms: true, value };
  } catch (error) {
    // A recursive schema ($ref to itself) recurses as deep as the output nests.
    if (error instanceof RangeError) return { conforms: false, errors: [TOO_DEEP] };
    throw error;
  }
  return { conforms: false, errors: (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'is invalid'}`) };
}

/**
 * The readings of an output that parse as JSON, in order: the output whole, the body of its
 * first Markdown fence, its text from the first `{` to the last `}`, and its brace-balanced
 * objects worth a parse (objectSpans): at most eight `JSON.parse` calls (and as many checks),
 * each linear in the output's length, after two passes over it. No regex, no search that restarts
 * from every `{` (an output is hostile input, and can be megabytes).
 */
function* parsedReadings(output: string): Generator<unknown> {
  const trimmed = output.trim();
  const candidates = new Set([trimmed, fencedBody(trimmed)]);
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.add(trimmed.slice(first, last + 1));
  for (const [start, end] of objectSpans(trimmed)) candidates.add(trimmed.slice(start, end));
  for (const candidate of candidates) {
    if (!candidate) continue;
    let value: unknown;
    try {
      value = JSON.parse(candidate) as unknown;
    } catch {
      // try the next form
      continue;
    }
    yield value;
  }
}

/**
 * The deepest a parsed output may nest to be checked and answered as `value`: far past any
 * JSON a schema asks for, far short of the depth JSON.stringify overflows the stack at (about
 * 3,000 levels here, for a value cloned from the schema thread), which had failed the whole
 * answer (a 500, nothing charged for every model of the request).
 */
export const MAX_VALUE_DEPTH = 512;

const TOO_DEEP = 'the output nests too deeply to check';

const FENCE = '```';

/** The body of a text's first Markdown code fence (```` ```json ... ``` ````, prose before and after it or not), or undefined. */
function fencedBody(text: string): string | undefined {
  const opened = text.indexOf(FENCE);
  if (opened < 0) return undefined;
  const closed = text.indexOf(FENCE, opened + FENCE.length);
  if (closed < 0) return undefined;
  const body = opened + FENCE.length;
  const open = text.slice(body, body + 4).toLowerCase() === 'json' ? body + 4 : body;
  return text.slice(open, closed).trim();
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The [start, end) of `text`'s outermost brace-balanced objects worth a parse: read from the
 * start, the longest, the last and the first; read from the end, the longest and the last
 * (prose before the JSON that opens a brace it never closes, `:-{`, leaves the pass from the
 * start inside it; prose after it that closes one, `:-}`, misleads the pass from the end).
 * The longest first: an answer is most often the largest object, an example in the prose a
 * small one. A span both passes find is one reading (parsedReadings keeps each text once).
 */
function objectSpans(text: string): [number, number][] {
  return [...spansFromStart(text), ...spansFromEnd(text)];
}

/** The longest, last and first objects reading from the start: inside an object, a string's braces are the string's; outside one (prose), quotes are the prose's. */
function spansFromStart(text: string): [number, number][] {
  let first: [number, number] | undefined;
  let last: [number, number] | undefined;
  let longest: [number, number] | undefined;
  let depth = 0;
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === OPEN_BRACE) {
      if (depth++ === 0) start = i;
    } else if (depth > 0) {
      if (code === QUOTE) inString = true;
      else if (code === CLOSE_BRACE && --depth === 0) {
        last = [start, i + 1];
        first ??= last;
        if (!longest || i + 1 - start > longest[1] - longest[0]) longest = last;
      }
    }
  }
  return first ? [longest!, last!, first] : [];
}

/** The longest and last objects reading from the end: a `}` opens, a `{` closes, and inside an object a quote is a string's unless a backslash escapes it. */
function spansFromEnd(text: string): [number, number][] {
  let nearest: [number, number] | undefined;
  let longest: [number, number] | undefined;
  let depth = 0;
  let end = 0;
  let inString = false;
  for (let i = text.length - 1; i >= 0; i--) {
    const code = text.charCodeAt(i);
    if (code === QUOTE && depth > 0 && !escapedQuoteAt(text, i)) inString = !inString;
    else if (inString) continue;
    else if (code === CLOSE_BRACE) {
      if (depth++ === 0) end = i + 1;
    } else if (code === OPEN_BRACE && depth > 0 && --depth === 0) {
      const span: [number, number] = [i, end];
      nearest ??= span;
      if (!longest || end - i > longest[1] - longest[0]) longest = span;
    }
  }
  return nearest ? [longest!, nearest] : [];
}
