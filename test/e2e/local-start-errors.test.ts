import { describe, expect, it } from 'vitest';
import { runTs } from '../support/processes.js';

/** Runs `npm start`'s entry; should it start after all, it is killed after 15 s (the test then fails on its output). */
const start = (env: Record<string, string>) => runTs('infra/local/main.ts', [], env, { killAfterMs: 15_000 });

/** `npm start` with a setting that is not valid: it stops before it starts anything, with one line naming the setting. */
describe('npm start, a setting that is not valid', () => {
  it.each([
    // One setting loadConfig refuses (test/unit/config.test.ts has each of them), and one the host checks.
    ['PORT past the highest TCP port (was a raw RangeError stack)', { PORT: '70000' }, /^npm start: PORT must be an integer >= 0 and <= 65535, got "70000"$/],
    ['a demo key the gateway would never accept (checked by the host, not loadConfig)', { DEMO_API_KEY: 'demo' }, /^npm start: DEMO_API_KEY must be 16 to 256 characters/],
  ])('%s', async (_name, env, line) => {
    const result = await start({ PORT: '0', DYNAMODB_PORT: '0', ...env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });
});
