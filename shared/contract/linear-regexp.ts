import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';

/**
 * The regex engine of callers' schemas (`pattern`, `patternProperties`): RE2 in plain JS,
 * whose matching time is linear in the input. V8's own engine backtracks: `^(a+)+$`
 * against 28 `a`s and a `!` held the gateway's only thread for 7.5 s, and each further
 * character doubled it. RE2 has no backreferences and no lookaround; patterns that need
 * them are refused when the request arrives (`patternProblem`).
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, _flags: string) => {
    const compiled = compile(pattern);
    // ajv shares one compiled pattern between keywords by `toString()`: it must differ per pattern.
    return { test: (input: string) => compiled.test(input), toString: () => `/${pattern}/re2` };
  },
  { code: 'linearRegExp' },
);

/**
 * Compiled patterns by source: compiling costs up to a few ms each, and each is compiled
 * when the request's schema is checked (`patternProblem`) and again by ajv. Bounded, oldest
 * dropped first.
 */
const compiledPatterns = new Map<string, RE2JS>();
const MAX_PATTERNS = 500;

function compile(pattern: string): RE2JS {
  const known = compiledPatterns.get(pattern);
  if (known) return known;
  const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  if (compiledPatterns.size >= MAX_PATTERNS) compiledPatterns.delete(compiledPatterns.keys().next().value as string);
  compiledPatterns.set(pattern, compiled);
  return compiled;
}

/** Why `pattern` cannot be a schema pattern here, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  try {
    // Only compiled, never run: JSON Schema patterns are ECMA-262, which vendors read too.
    new RegExp(pattern, 'u');
  } catch (error) {
    return `is not a valid regular expression: ${(error as Error).message}`;
  }
  try {
    linearRegExp(pattern, 'u');
    return undefined;
  } catch (error) {
    return `cannot run in linear time (backreferences and lookaround are not supported): ${(error as Error).message}`;
  }
}
