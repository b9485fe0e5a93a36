import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runAdminCommand, UsageError, type AdminDeps } from '../../infra/admin/commands.js';
import { hashApiKey } from '../../shared/auth/keys.js';
import type { Account } from '../../shared/storage/accounts.js';

/** What each store call was asked, for the commands the command line lets through; nothing answers but these. */
function recordingDeps() {
  const calls: { call: string; args: unknown[] }[] = [];
  const account = (accountId: string, balanceMicro: number, rateLimitRpm?: number): Account =>
    ({ accountId, balanceMicro, zeroDataRetention: false, rateLimitRpm, createdAt: '2026-01-01T00:00:00.000Z' }) as Account;
  const record = <T>(call: string, args: unknown[], answer: T): T => {
    calls.push({ call, args });
    return answer;
  };
  const deps = {
    accounts: {
      get: async (accountId: string) => record('accounts.get', [accountId], account(accountId, 1_000_000)),
      setSettings: async (...args: unknown[]) => record('accounts.setSettings', args, undefined),
    },
    apiKeys: {},
    ledger: {},
    credits: {
      openAccount: async (opening: { balanceMicro: number; rateLimitRpm?: number }) =>
        record('credits.openAccount', [opening], account('acct_new', opening.balanceMicro, opening.rateLimitRpm)),
      topUp: async (accountId: string, amountMicro: number, entryId: string, again: boolean) =>
        record('credits.topUp', [accountId, amountMicro, entryId, again], { balanceMicro: 1_000_000 + amountMicro, applied: again ? 'already' : 'now' }),
      topUpEntryId: () => '01KB0000000000000000000000#topup',
    },
  } as unknown as AdminDeps;
  return { deps, calls };
}

async function refused(argv: string[]): Promise<{ error: unknown; calls: unknown[] }> {
  const { deps, calls } = recordingDeps();
  const error = await runAdminCommand(argv, deps).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, calls };
}

describe('Function: runAdminCommand, amounts', () => {
  it.each([
    ['a blank amount, which Number() reads as 0', ' '],
    ['hexadecimal, which Number() reads as 16', '0x10'],
    ['binary, which Number() reads as 3', '0b11'],
    ['octal', '0o7'],
    ['an exponent', '1e3'],
    ['a sign', '+5'],
    ['a bare point', '5.'],
    ['no digit before the point', '.5'],
    ['seven decimals', '1.0000001'],
    ['padding', ' 5'],
    ['Infinity', 'Infinity'],
  ])('refuses --credits as %s (%j) on top-up and create-account, before any store call', async (_name, amount) => {
    for (const argv of [
      ['top-up', '--account', 'acct_x', '--credits', amount],
      ['create-account', '--credits', amount],
    ]) {
      const { error, calls } = await refused(argv);
      expect(error, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(/^--credits must be a (positive|non-negative) decimal number/);
      expect(calls).toEqual([]);
    }
  });

  it.each([
    ['5', 5_000_000],
    ['0.000001', 1],
    ['12.5', 12_500_000],
    ['007', 7_000_000],
    ['1000000000', 1e15],
  ])('tops up a plain decimal: --credits %s', async (amount, micro) => {
    const { deps, calls } = recordingDeps();
    await runAdminCommand(['top-up', '--account', 'acct_x', '--credits', amount], deps);
    expect(calls).toEqual([{ call: 'credits.topUp', args: ['acct_x', micro, '01KB0000000000000000000000#topup', false] }]);
  });

  it("names a top-up's entry, prints it, and runs a top-up named again under its name; refuses a name that is no top-up's", async () => {
    const { deps, calls } = recordingDeps();
    expect(await runAdminCommand(['top-up', '--account', 'acct_x', '--credits', '5'], deps)).toEqual({
      accountId: 'acct_x',
      entryId: '01KB0000000000000000000000#topup',
      applied: 'now',
      balance: 6,
    });
    const named = '01KB1234567890ABCDEFGHJKMN#topup';
    expect(await runAdminCommand(['top-up', '--account', 'acct_x', '--credits', '5', '--entry', named], deps)).toMatchObject({ entryId: named });
    expect(calls.at(-1)).toEqual({ call: 'credits.topUp', args: ['acct_x', 5_000_000, named, true] });
    for (const entry of ['01KB1234567890ABCDEFGHJKMN#settlement', 'topup', '01KB1234567890ABCDEFGHJKMU#topup']) {
      const { error, calls } = await refused(['top-up', '--account', 'acct_x', '--credits', '5', '--entry', entry]);
      expect(error, entry).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain('--entry');
      expect(calls).toEqual([]);
    }
  });

  it('opens an account with 0 credits, and refuses a top-up of 0', async () => {
    const { deps, calls } = recordingDeps();
    await runAdminCommand(['create-account', '--credits', '0'], deps);
    expect(calls).toEqual([{ call: 'credits.openAccount', args: [{ balanceMicro: 0, zeroDataRetention: false, rateLimitRpm: undefined }] }]);
    expect((await refused(['top-up', '--account', 'acct_x', '--credits', '0'])).error).toBeInstanceOf(UsageError);
  });
});

describe('Function: runAdminCommand, flags', () => {
  it.each(['balance', 'top-up', 'list-keys', 'ledger'])(
    "refuses %s of an account ID past DynamoDB's 2,048 bytes as usage, calling nothing (it had been internal_error)",
    async (command) => {
      const argv = [command, '--account', 'a'.repeat(3000), ...(command === 'top-up' ? ['--credits', '5'] : [])];
      const { error, calls } = await refused(argv);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe("--account is 3000 bytes, more than an account ID's 2048");
      expect(calls).toEqual([]);
    },
  );

  it.each([
    [['top-up', '--credits', '5', '--credits', '500', '--account', 'acct_x'], '--credits'],
    [['top-up', '--account', 'acct_x', '--account', 'acct_y', '--credits', '5'], '--account'],
    [['create-account', '--credits', '5', '--zdr', '--zdr'], '--zdr'],
    [['set-rate-limit', '--account', 'acct_x', '--rpm', '5', '--rpm', '50'], '--rpm'],
  ])('refuses a repeated flag, naming it: %j', async (argv, flag) => {
    const { error, calls } = await refused(argv);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`${flag} is given more than once; give it once`);
    expect(calls).toEqual([]);
  });

  it.each([
    // Would open a NEW account, the operator believing it tops up acct_X.
    [['create-account', '--credits', '5', '--account', 'acct_X', '--key', 'x'], 'create-account does not take --account (it takes --credits, --zdr, --rpm)'],
    [['top-up', '--account', 'acct_x', '--credits', '5', '--zdr'], 'top-up does not take --zdr (it takes --account, --credits, --entry)'],
    [['balance', '--account', 'acct_x', '--credits', '5'], 'balance does not take --credits (it takes --account)'],
    [['create-key', '--account', 'acct_x', '--rpm', '5'], 'create-key does not take --rpm (it takes --account)'],
    [['revoke-key', '--key', 'mcg_x', '--account', 'acct_x'], 'revoke-key does not take --account (it takes --key, --hash)'],
    [['reconcile', '--account', 'acct_x'], 'reconcile does not take --account (it takes no flag)'],
  ])('refuses a flag the command does not take, naming it: %j', async (argv, message) => {
    const { error, calls } = await refused(argv);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message.startsWith(message)).toBe(true);
    expect(calls).toEqual([]);
  });

  it.each([
    [['create-account', '--credits', '5', 'extra'], 'create-account takes no argument besides its flags: unexpected argument "extra": create-account --credits N'],
    // A boolean flag takes no value: `true` is left over.
    [['create-account', '--credits', '5', '--zdr', 'true'], 'create-account takes no argument besides its flags: unexpected argument "true"'],
    [['balance', 'acct_x', '--account', 'acct_y', 'more'], 'balance takes no argument besides its flags: unexpected arguments "acct_x", "more": balance --account ID'],
  ])('refuses a stray argument, naming it (it printed the whole usage without it): %j', async (argv, message) => {
    const { error, calls } = await refused(argv);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message.startsWith(message), (error as Error).message).toBe(true);
    expect(calls).toEqual([]);
  });
});

describe('Function: runAdminCommand, --rpm', () => {
  it.each([
    ['past what the rate window can ever count (the SDK refused 1e16 as internal_error)', '1e16'],
    ['one past the bound', '1000001'],
    ['an exponent', '1e3'],
    ['a decimal point', '60.0'],
    ['hexadecimal', '0x10'],
    ['zero', '0'],
    ['blank', ' '],
  ])('refuses --rpm %s (%j) on set-rate-limit and create-account, before any store call', async (_name, value) => {
    for (const argv of [
      ['set-rate-limit', '--account', 'acct_x', '--rpm', value],
      ['create-account', '--credits', '5', '--rpm', value],
    ]) {
      const { error, calls } = await refused(argv);
      expect(error, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(/^--rpm must be a whole number of requests a minute, digits only, from 1 to 1000000/);
      expect(calls).toEqual([]);
    }
  });

  it.each([
    ['1', 1],
    ['060', 60],
    ['1000000', 1_000_000],
  ])('sets --rpm %s', async (value, limit) => {
    const { deps, calls } = recordingDeps();
    expect(await runAdminCommand(['set-rate-limit', '--account', 'acct_x', '--rpm', value], deps)).toEqual({ accountId: 'acct_x', rateLimitRpm: limit });
    expect(calls).toEqual([{ call: 'accounts.setSettings', args: ['acct_x', { rateLimitRpm: limit }] }]);
  });

  it("removes the account's own limit with --rpm default (the gateway's then applies)", async () => {
    const { deps, calls } = recordingDeps();
    expect(await runAdminCommand(['set-rate-limit', '--account', 'acct_x', '--rpm', 'default'], deps)).toEqual({ accountId: 'acct_x', rateLimitRpm: null });
    expect(calls).toEqual([{ call: 'accounts.setSettings', args: ['acct_x', { rateLimitRpm: null }] }]);
  });

  it.each([
    [['--on'], true],
    [['--off'], false],
  ])('set-zdr %s sets the account default', async (flags, on) => {
    const { deps, calls } = recordingDeps();
    expect(await runAdminCommand(['set-zdr', '--account', 'acct_x', ...flags], deps)).toEqual({ accountId: 'acct_x', zeroDataRetention: on });
    expect(calls).toEqual([{ call: 'accounts.setSettings', args: ['acct_x', { zeroDataRetention: on }] }]);
  });

  it.each([[[]], [['--on', '--off']]])('refuses set-zdr with neither or both of --on and --off (%j), changing nothing', async (flags) => {
    const { deps, calls } = recordingDeps();
    const error = await runAdminCommand(['set-zdr', '--account', 'acct_x', ...flags], deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/^set-zdr takes one of --on or --off/);
    expect(calls).toEqual([]);
  });
});

describe('docs/deployment.md: what the admin CLI needs in AWS', () => {
  /** The DynamoDB actions each repository the CLI uses sends, read off its imports: the SDK commands and paginators. */
  const ACTION_OF: Record<string, string> = {
    GetItemCommand: 'GetItem',
    GetCommand: 'GetItem',
    PutItemCommand: 'PutItem',
    PutCommand: 'PutItem',
    UpdateItemCommand: 'UpdateItem',
    UpdateCommand: 'UpdateItem',
    DeleteItemCommand: 'DeleteItem',
    DeleteCommand: 'DeleteItem',
    paginateScan: 'Scan',
    ScanCommand: 'Scan',
    paginateQuery: 'Query',
    QueryCommand: 'Query',
  };
  const REPOSITORIES = { accounts: 'shared/storage/accounts.ts', apiKeys: 'shared/storage/api-keys.ts', ledger: 'shared/storage/ledger.ts' };

  it.each(Object.entries(REPOSITORIES))('names every DynamoDB action the %s repository sends (list-keys and reconcile Scan, ledger Queries)', (table, file) => {
    const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    const imported = /import \{([^}]*)\} from '@aws-sdk\/(?:client-dynamodb|lib-dynamodb)'/
      .exec(source)![1]!
      .split(',')
      .map((name) => name.trim());
    const sent = [...new Set(imported.flatMap((name) => (ACTION_OF[name] ? [ACTION_OF[name]] : [])))].sort();
    expect(sent.length).toBeGreaterThan(0);
    const deployment = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
    const row = new RegExp(`\\n\\| ${table} \\| ([^|]*) \\|`).exec(deployment.slice(deployment.indexOf('## First account and key')))?.[1] ?? '';
    const documented = [...row.matchAll(/`dynamodb:(\w+)`/g)].map((match) => match[1]).sort();
    expect(documented).toEqual(sent);
  });
});

describe('Function: runAdminCommand, revoke-key --key -', () => {
  /** The key hashes revoke-key revoked, given `stdin` (or no standard input at all). */
  async function revokedFromStdin(stdin: string | undefined): Promise<{ error?: unknown; revoked: string[] }> {
    const revoked: string[] = [];
    const deps = {
      ...recordingDeps().deps,
      apiKeys: {
        revoke: async (keyHash: string) => {
          revoked.push(keyHash);
          return { keyHash, accountId: 'acct_x', keyPrefix: 'mcg_abcd', revokedAt: 'now' };
        },
      },
      accounts: { revokeKey: async () => undefined },
      ...(stdin === undefined ? {} : { readStdin: async (most: number) => stdin.slice(0, most) }),
    } as unknown as AdminDeps;
    return runAdminCommand(['revoke-key', '--key', '-'], deps).then(
      () => ({ revoked }),
      (error: unknown) => ({ error, revoked }),
    );
  }

  it("dates the revocation by the store's clock (deps.now), in the key's record and the account's list: a machine hours ahead had dropped keys revoked just before", async () => {
    const dated: unknown[] = [];
    const storeNow = Date.UTC(2026, 10, 27, 15, 42, 5);
    const deps = {
      ...recordingDeps().deps,
      now: () => storeNow,
      apiKeys: {
        revoke: async (keyHash: string, at: Date) => {
          dated.push(at.getTime());
          return { keyHash, accountId: 'acct_x', keyPrefix: 'mcg_abcd', revokedAt: at.toISOString() };
        },
      },
      accounts: {
        revokeKey: async (_accountId: string, _keyHash: string, at: number) => {
          dated.push(at);
        },
      },
    } as unknown as AdminDeps;
    expect(await runAdminCommand(['revoke-key', '--hash', 'a'.repeat(64)], deps)).toMatchObject({ revokedAt: '2026-11-27T15:42:05.000Z' });
    expect(dated).toEqual([storeNow, storeNow]);
  });

  it("reads the key from standard input's one line, the spaces and line end around it dropped", async () => {
    expect(await revokedFromStdin('  mcg_abcdef \r\n\n')).toEqual({ revoked: [hashApiKey('mcg_abcdef')] });
  });

  it.each([
    ['no standard input', undefined, '--key - reads the key from standard input, which this caller does not give'],
    ['an empty one', ' \n', '--key -: standard input holds no key; give the key on it, as in: revoke-key --key - < key.txt'],
    ['two keys', 'mcg_a\nmcg_b\n', '--key -: standard input holds 2 lines; give one key a run'],
    ['more than a line', 'x'.repeat(5000), "--key -: standard input holds more than 4096 characters, more than a key's line; give one key"],
  ])('refuses %s, revoking nothing', async (_name, stdin, message) => {
    const { error, revoked } = await revokedFromStdin(stdin);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(message);
    expect(revoked).toEqual([]);
  });
});
