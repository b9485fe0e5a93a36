import { exceeds } from './json-shape.js';
import type { OutputValidator } from './schema-compile.js';

/** Whether an output conforms to the request's `response_schema`, and the parsed value when it does. */
export type StructuredOutput = { conforms: true; value: unknown } | { conforms: false; errors: string[] };

/**
 * Parses an output as JSON the way models send it (bare, in a Markdown fence, or with
 * prose around one object) and validates it against the schema.
 */
export function checkStructuredOutput(output: string, validate: OutputValidator): StructuredOutput {
  const value = parseJsonOutput(output);
  if (value === undefined) return { conforms: false, errors: ['the output is not JSON'] };
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
 * At most three `JSON.parse` calls, each linear in the output's length: no regex, no
 * search that restarts from every `{` (an output is hostile input, and can be megabytes).
 */
function parseJsonOutput(output: string): unknown {
  const trimmed = output.trim();
  const candidates = [trimmed, fencedBody(trimmed)];
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(trimmed.slice(first, last + 1));
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      // try the next form
    }
  }
  return undefined;
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

/** The body of a text that is one Markdown code fence (```` ```json ... ``` ````), or undefined. */
function fencedBody(text: string): string | undefined {
  if (text.length < 2 * FENCE.length || !text.startsWith(FENCE) || !text.endsWith(FENCE)) return undefined;
  const open = text.slice(FENCE.length, FENCE.length + 4).toLowerCase() === 'json' ? FENCE.length + 4 : FENCE.length;
  return text.slice(open, -FENCE.length).trim();
}
