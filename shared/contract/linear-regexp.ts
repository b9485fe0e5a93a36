import { BoundedMap } from '../bounded-map.js';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { accountShare, scopedKey } from './schema-protocol.js';

/**
 * The regex engine of callers' schemas (`pattern`, `patternProperties`): RE2 in plain JS,
 * whose matching time is linear in the input. V8's own engine backtracks: `^(a+)+$`
 * against 28 `a`s and a `!` held the gateway's only thread for 7.5 s, and each further
 * character doubled it. RE2 has no backreferences and no lookaround; patterns that need
 * them are refused before the request is accepted (`linearPatternProblem`).
 */
export const linearRegExp: RegExpEngine = linearRegExpIn('');

/**
 * linearRegExp, its compiled patterns kept apart for `scope` (the account whose schema
 * they are): a cached pattern compiles in no time where a new one takes 0.2 to 7 ms,
 * which would tell an account that another had sent it.
 */
export function linearRegExpIn(scope: string): RegExpEngine {
  return Object.assign(
    (pattern: string, _flags: string) => {
      const compiled = compile(pattern, scope);
      // ajv shares one compiled pattern between keywords by `toString()`: it must differ per pattern.
      return { test: (input: string) => compiled.test(input), toString: () => `/${pattern}/re2` };
    },
    { code: 'linearRegExp' },
  );
}

/**
 * Compiled patterns by scope and source: compiling costs up to a few ms each, and each is compiled
 * when the request's schema is checked (`linearPatternProblem`) and again by ajv. Bounded, oldest
 * dropped first, an account's share at most a quarter.
 */
const compiledPatterns = new BoundedMap<string, RE2JS>(500, accountShare(500));

function compile(pattern: string, scope: string): RE2JS {
  const key = scopedKey(scope, pattern);
  const known = compiledPatterns.get(key);
  if (known) return known;
  const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  compiledPatterns.set(key, compiled);
  return compiled;
}

/**
 * Why `pattern` is not an ECMA-262 regex (JSON Schema's dialect, which vendors read too),
 * or undefined. Only parsed, never run (on the schema thread too: parsing Unicode classes costs V8 about 0.3 ms a pattern).
 */
export function patternSyntaxProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (error) {
    return `is not a valid regular expression: ${(error as Error).message}`;
  }
}

/**
 * Why RE2 cannot run `pattern` (backreferences, lookaround, counted repetitions nested past its
 * 1,000), or undefined. Compiling for RE2 costs 0.2 to 7 ms a pattern: done on the schema thread
 * (schema-thread.ts), never on the main one.
 */
export function linearPatternProblem(pattern: string, scope = ''): string | undefined {
  try {
    linearRegExpIn(scope)(pattern, 'u');
    return undefined;
  } catch (error) {
    const message = (error as Error).message;
    // RE2 counts nested repetitions multiplied (`((a{9}){9}){9}` is 729): past 1,000 it refuses the pattern.
    const why = /invalid repeat count|bad repetition operator/.test(message)
      ? 'its counted repetitions, nested, repeat more than 1,000 times'
      : 'backreferences and lookaround are not supported';
    return `cannot run in linear time (${why}): ${message}`;
  }
}
