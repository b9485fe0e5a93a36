import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalHost } from '../../infra/local/host.js';
import { hashApiKey } from '../../shared/auth/keys.js';
import { revokeApiKey } from '../../shared/auth/revoke.js';
import { runTs } from '../support/processes.js';
import { testConfig } from '../support/local.js';
import { recordingLog } from '../support/log.js';

/** Runs `npm start`'s entry; should it start after all, it is killed after 15 s (the test then fails on its output). */
const start = (env: Record<string, string>) => runTs('infra/local/main.ts', [], env, { killAfterMs: 15_000 });

/** A key of the gateway's form, pinned as DEMO_API_KEY. */
const PINNED_KEY = 'mcg_pinned-demo-key-0123456789';

let scratch: string;
let notADirectory: string;
let revokedKeyDir: string;
let incompleteDir: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'start-errors-'));
  notADirectory = join(scratch, 'a-file');
  writeFileSync(notADirectory, '');
  // A data dir whose store holds the pinned demo key, revoked (revoke-key against that store).
  revokedKeyDir = join(scratch, 'data');
  const host = await startLocalHost(testConfig({ GATEWAY_DATA_DIR: revokedKeyDir, DEMO_API_KEY: PINNED_KEY }));
  try {
    await revokeApiKey(host.gateway, hashApiKey(PINNED_KEY));
  } finally {
    await host.close();
  }
  // The same store copied but for its CURRENT file, as a copy or restore cut short leaves it.
  incompleteDir = join(scratch, 'incomplete');
  cpSync(revokedKeyDir, incompleteDir, { recursive: true, filter: (source) => !source.endsWith('CURRENT') });
  chmodSync(incompleteDir, 0o700);
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** `npm start` with a setting that is not valid: it stops before it starts anything, with one line naming the setting. */
describe('npm start, a setting that is not valid', () => {
  it.each([
    // One setting loadConfig refuses (test/unit/config.test.ts has each of them), and one the host checks.
    ['PORT past the highest TCP port (was a raw RangeError stack)', () => ({ PORT: '70000' }), /^npm start: PORT must be an integer >= 0 and <= 65535, got "70000"$/],
    ['a demo key the gateway would never accept (checked by the host, not loadConfig)', () => ({ DEMO_API_KEY: 'demo' }), /^npm start: DEMO_API_KEY must be 16 to 256 characters/],
    [
      'GATEWAY_DATA_DIR naming a file (was an EEXIST stack trace from mkdir)',
      () => ({ GATEWAY_DATA_DIR: notADirectory }),
      /^npm start: GATEWAY_DATA_DIR must be a directory, or a path where one can be made, got ".*a-file": it is a file$/,
    ],
    [
      'GATEWAY_DATA_DIR under a file',
      () => ({ GATEWAY_DATA_DIR: join(notADirectory, 'data') }),
      /^npm start: GATEWAY_DATA_DIR must be a directory, or a path where one can be made, got ".*a-file.data": a part of it is a file$/,
    ],
    [
      'a pinned DEMO_API_KEY revoked in the data dir (was a plain Error with its stack)',
      () => ({ GATEWAY_DATA_DIR: revokedKeyDir, DEMO_API_KEY: PINNED_KEY }),
      /^npm start: DEMO_API_KEY was revoked \(.+\) in the store of GATEWAY_DATA_DIR \(.*data\): pin another key, or unset DEMO_API_KEY/,
    ],
    [
      "a data dir holding the store's files but not its CURRENT file (the store started empty and deleted them)",
      () => ({ GATEWAY_DATA_DIR: incompleteDir }),
      /^npm start: GATEWAY_DATA_DIR .*incomplete holds the store's files \(\d+\.(?:ldb|log).*\) but not its CURRENT file, as a copy or restore cut short leaves it: opened, the store would start empty and delete them\. Restore the directory whole, or choose an empty one$/,
    ],
  ])('%s', async (_name, env, line) => {
    const result = await start({ PORT: '0', DYNAMODB_PORT: '0', ...env() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });

  it('leaves a data dir without its CURRENT file as it was: every file of the store still there', async () => {
    const before = readdirSync(incompleteDir).sort();
    expect(before.some((name) => /^\d+\.(?:ldb|log)$/.test(name))).toBe(true);
    expect((await start({ PORT: '0', DYNAMODB_PORT: '0', GATEWAY_DATA_DIR: incompleteDir })).code).toBe(1);
    expect(readdirSync(incompleteDir).sort()).toEqual(before);
  });
});

describe('GATEWAY_DATA_DIR that does not exist yet', () => {
  it('is made readable by this user alone, as the store in it holds prompt logs and key hashes', () => {
    // Made by beforeAll's host (with the usual umask, 022, it was 0755).
    expect(statSync(revokedKeyDir).mode & 0o777).toBe(0o700);
  });

  it('is said to be readable by others when it was there already with such permissions (kept as they are), and not otherwise', async () => {
    const open = join(scratch, 'open-to-all');
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    for (const [dir, warned] of [
      [open, true],
      [revokedKeyDir, false],
    ] as const) {
      const log = recordingLog();
      const host = await startLocalHost(testConfig({ GATEWAY_DATA_DIR: dir }), { log });
      await host.close();
      const warnings = log.lines.filter((line) => line.includes('GATEWAY_DATA_DIR is readable by other users'));
      expect(warnings, dir).toHaveLength(warned ? 1 : 0);
      if (warned) expect(JSON.parse(warnings[0]!)[1]).toEqual({ dataDir: open, mode: '0755', fix: `chmod 700 ${open}` });
    }
    expect(statSync(open).mode & 0o777).toBe(0o755);
  });
});

describe('npm start on a data directory another gateway holds', () => {
  it('stops with one line naming GATEWAY_DATA_DIR (was a "Database is closed" stack trace after it had started)', async () => {
    const held = join(scratch, 'held');
    const host = await startLocalHost(testConfig({ GATEWAY_DATA_DIR: held }));
    try {
      const result = await start({ PORT: '0', DYNAMODB_PORT: '0', GATEWAY_DATA_DIR: held });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^npm start: GATEWAY_DATA_DIR .*held: the embedded store cannot open it: in use by another process$/);
    } finally {
      await host.close();
    }
  });
});

describe('npm start on a data directory LevelDB cannot open', () => {
  it('stops with one line giving LevelDB\'s reason, not only its "Database failed to open"', async () => {
    const broken = join(scratch, 'broken');
    mkdirSync(broken, { recursive: true });
    // A store whose manifest is gone (as a permission refused, which root's tests cannot make, gives its own reason).
    writeFileSync(join(broken, 'CURRENT'), 'MANIFEST-000099\n');
    const result = await start({ PORT: '0', DYNAMODB_PORT: '0', GATEWAY_DATA_DIR: broken });
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^npm start: GATEWAY_DATA_DIR .*broken: the embedded store cannot open it: Database failed to open \(IO error: .*MANIFEST-000099: No such file or directory\)$/,
    );
  });
});
