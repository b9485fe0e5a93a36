import type { OutputValidator } from '../contract/response-schema.js';

/** Whether an output conforms to the request's `response_schema`, and the parsed value when it does. */
export type StructuredOutput = { conforms: true; value: unknown } | { conforms: false; errors: string[] };

const FENCED = /^```(?:json)?\s*([\s\S]*?)\s*```$/i;

/**
 * Parses an output as JSON the way models send it (bare, in a Markdown fence, or with
 * prose around one object) and validates it against the schema.
 */
export function checkStructuredOutput(output: string, validate: OutputValidator): StructuredOutput {
  const value = parseJsonOutput(output);
  if (value === undefined) return { conforms: false, errors: ['the output is not JSON'] };
  if (validate(value)) return { conforms: true, value };
  return { conforms: false, errors: (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'is invalid'}`) };
}

function parseJsonOutput(output: string): unknown {
  const trimmed = output.trim();
  const candidates = [trimmed, FENCED.exec(trimmed)?.[1]];
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
