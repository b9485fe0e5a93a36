import { createHash } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { once } from 'node:events';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { createStoreClient } from '../../shared/storage/dynamodb.js';
import { LedgerRepository } from '../../shared/storage/ledger.js';
import { awsError, startFakeAws } from '../support/fake-aws.js';
import { startFakeHttp } from '../support/fake-http.js';
import { ROOT, runTs, startTs } from '../support/processes.js';

/** `npm start` and `npm run admin` as a user runs them: separate processes, talking over loopback. */
let host: ChildProcess;
let banner: string;
let url: string;
let demoKey: string;
let storeEndpoint: string;

beforeAll(async () => {
  const started = await startTs(
    'infra/local/main.ts',
    { PORT: '0', DYNAMODB_PORT: '0', DEMO_CREDITS: '50', AUTHORIZER_CACHE_SECONDS: '0' },
    /Admin CLI against this store:[\s\S]*\n\n/,
  );
  host = started.child;
  banner = started.stdout();
  url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]!;
  demoKey = /demo key: +(\S+)/.exec(banner)![1]!;
  storeEndpoint = /store: +(http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]!;
});

afterAll(async () => {
  if (host && host.exitCode === null) {
    host.kill('SIGTERM');
    await once(host, 'exit');
  }
});

function admin(...args: string[]) {
  return runTs('infra/admin/cli.ts', args, { DYNAMODB_ENDPOINT: storeEndpoint });
}

/** An admin command given `stdin` on its standard input. */
function adminWithStdin(stdin: string, ...args: string[]) {
  return runTs('infra/admin/cli.ts', args, { DYNAMODB_ENDPOINT: storeEndpoint }, { stdin });
}

/** The error body a failed admin command wrote to stderr (after whatever Node warned first). */
function errorOf(stderr: string): { code: string; message: string } {
  return JSON.parse(stderr.slice(stderr.indexOf('{\n'))).error;
}

async function prompt(key: string) {
  const response = await fetch(`${url}/api/v1/prompt`, {
    method: 'POST',
    // What the banner's curl sends.
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Say hello', models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'] }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('npm start', () => {
  it('prints the endpoint, a demo key, its balance and which providers are simulated', () => {
    expect(banner).toContain(`POST ${url}/api/v1/prompt`);
    expect(demoKey).toMatch(/^mcg_[A-Za-z0-9_-]{43}$/);
    expect(banner).toMatch(/balance: +50 credits/);
    expect(banner).toMatch(/simulated: +openai, anthropic, google, xai, cerebras, deepseek, mistral, groq, bedrock/);
    expect(banner).toContain('(in memory)');
  });

  it('answers the request the README shows', async () => {
    const { status, body } = await prompt(demoKey);
    expect(status).toBe(200);
    expect(body.results.map((r: any) => [r.modelId, r.status])).toEqual([
      ['fam_c-5.4', 'completed'],
      ['fam_a-opus-4-6', 'completed'],
      ['fam_b-3.1-pro', 'completed'],
    ]);
  });
});

/**
 * A host of its own, whose simulated OpenAI answers `delayMs` late, and a request waiting for it
 * (its call at the simulator): what a signal then meets.
 */
async function hostWithRequestInFlight(delayMs: number) {
  const started = await startTs('infra/local/main.ts', { PORT: '0', DYNAMODB_PORT: '0', DEMO_CREDITS: '50' }, /Admin CLI against this store:[\s\S]*\n\n/);
  const exited = once(started.child, 'exit');
  const base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(started.stdout())![1]!;
  const key = /demo key: +(\S+)/.exec(started.stdout())![1]!;
  const simulator = /provider simulator at (http:\/\/127\.0\.0\.1:\d+)/.exec(started.stdout())![1]!;
  await fetch(`${simulator}/__sim/faults`, { method: 'POST', body: JSON.stringify({ kind: 'slow', delayMs, provider: 'openai' }) });
  const answer = fetch(`${base}/api/v1/prompt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Say hello', models: ['fam_c-5.4'] }),
  });
  let calls = 0;
  while (calls === 0) calls = ((await (await fetch(`${simulator}/__sim/calls`)).json()) as unknown[]).length;
  return { started, exited, answer };
}

describe('npm start, then Ctrl-C', () => {
  it('answers the request in flight before it stops, though the signal comes twice at once (the terminal sends it, and npm passes it on)', async () => {
    // Prepare: a host of its own, whose simulated OpenAI answers 1.5 s late, and a request waiting for it.
    const { started, exited, answer } = await hostWithRequestInFlight(1_500);
    const stopping = started.child;

    // Act: Ctrl-C, delivered twice within a few milliseconds.
    stopping.kill('SIGINT');
    stopping.kill('SIGINT');

    // Assess: answered, then a clean exit.
    const response = await answer;
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).results[0].status).toBe('completed');
    expect((await exited)[0]).toBe(0);
    expect(started.stdout()).toContain('Stopping: 1 request in flight finishes first');
  });
});

describe('npm start, then a signal to a process', () => {
  it("stops as Ctrl-C does on SIGTERM to npm's own process: npm passes it on to the host (a shell between them had not, and the host had served on, orphaned)", async () => {
    // Its own process group, so that whatever it leaves running is killed with it below.
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', DYNAMODB_PORT: '0', DEMO_CREDITS: '50' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    try {
      let stdout = '';
      await new Promise<void>((resolve, reject) => {
        npm.stdout!.on('data', (chunk) => {
          stdout += chunk;
          if (/Admin CLI against this store:[\s\S]*\n\n/.test(stdout)) resolve();
        });
        npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stdout}`)));
      });
      const base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
      // npm and the host write to the one pipe: it closes once both have exited.
      const gone = once(npm.stdout!, 'close');
      const exited = once(npm, 'exit');
      npm.kill('SIGTERM');
      // npm exits once its child has: nothing answers on the host's port then (an orphaned host had served on).
      expect(await exited).toEqual([0, null]);
      await expect(fetch(`${base}/api/v1/models`)).rejects.toThrow();
      await gone;
      expect(stdout).toMatch(/Stopped\.\n$/);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // All gone already.
      }
    }
  });

  it('stops as Ctrl-C does on SIGHUP, its terminal closed (it had ended at once)', async () => {
    const started = await startTs('infra/local/main.ts', { PORT: '0', DYNAMODB_PORT: '0', DEMO_CREDITS: '50' }, /Admin CLI against this store:[\s\S]*\n\n/);
    const exited = once(started.child, 'exit');
    started.child.kill('SIGHUP');
    expect(await exited).toEqual([0, null]);
    expect(started.stdout()).toMatch(/Stopped\.\n$/);
  });

  it('answers the request in flight and stops where its output can no longer be written (its terminal gone, a pipe whose reader left): the failed write had crashed it mid-stop', async () => {
    const { started, exited, answer } = await hostWithRequestInFlight(1_000);
    // Its output's reader gone: its "Stopping" line cannot be written.
    started.child.stdout!.destroy();
    started.child.kill('SIGHUP');
    expect((await answer).status).toBe(200);
    expect(await exited).toEqual([0, null]);
  });
});

describe('npm start whose output cannot be written', () => {
  it('stops, where its output fails for another reason than a reader gone (a full disk under a redirected log): it would otherwise run unseen, its banner and demo key never shown', async () => {
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', DYNAMODB_PORT: '0' },
      stdio: ['ignore', full, 'pipe'],
    });
    closeSync(full);
    // Should it run on (the failure this test is about), it is not left running.
    onTestFinished(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    expect(code).not.toBe(0);
    expect(stderr).toContain('ENOSPC');
  });
});

describe('a fresh process', () => {
  it('loads the response_schema compiler on the first request that brings a schema', async () => {
    const response = await fetch(`${url}/api/v1/prompt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: 'Rate HTTP caching',
        models: ['fam_c-5.4-nano', 'fam_k-8b'],
        response_schema: { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'], additionalProperties: false },
      }),
    });
    const body = (await response.json()) as any;
    expect(response.status).toBe(200);
    for (const result of body.results) expect(result.structuredOutput).toMatchObject({ conforms: true, value: { score: expect.any(Number) } });
  });
});

describe('npm run admin', () => {
  it('refuses a command that writes ledger entries, before it writes anything, where LEDGER_TABLE names a table the store does not hold (the balance had changed, the entry left unposted, a reconcile told to run again)', async () => {
    const { accountId } = JSON.parse((await admin('create-account', '--credits', '5')).stdout);
    const misnamed = (...args: string[]) => runTs('infra/admin/cli.ts', args, { DYNAMODB_ENDPOINT: storeEndpoint, LEDGER_TABLE: 'gateway-ledgr' });
    for (const args of [['top-up', '--account', accountId, '--credits', '1'], ['create-account', '--credits', '1'], ['reconcile']]) {
      const refused = await misnamed(...args);
      expect([refused.code, errorOf(refused.stderr)], args.join(' ')).toEqual([2, { code: 'usage', message: expect.stringMatching(/^No table "gateway-ledgr" \(LEDGER_TABLE\)/) }]);
    }
    expect(JSON.parse((await admin('balance', '--account', accountId)).stdout)).toMatchObject({ balance: 5 });
    // A revocation writes no ledger entry: it does not wait for the ledger's name to be put right.
    const { apiKey } = JSON.parse((await admin('create-key', '--account', accountId)).stdout);
    expect((await misnamed('revoke-key', '--key', apiKey)).code).toBe(0);
  });

  it('creates an account and a key, tops up, reads the balance and revokes the key, printing JSON', async () => {
    const created = await admin('create-account', '--credits', '50', '--zdr', '--rpm', '30');
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account).toMatchObject({ accountId: expect.stringMatching(/^acct_/), balance: 50, zeroDataRetention: true, rateLimitRpm: 30 });

    const keyed = await admin('create-key', '--account', account.accountId);
    expect(keyed.code).toBe(0);
    const { apiKey } = JSON.parse(keyed.stdout);
    expect(apiKey).toMatch(/^mcg_/);

    const used = await prompt(apiKey);
    expect(used.status).toBe(200);

    const toppedUp = JSON.parse((await admin('top-up', '--account', account.accountId, '--credits', '10')).stdout);
    expect(toppedUp.balance).toBeCloseTo(60 - used.body.creditsUsed, 6);
    const balance = JSON.parse((await admin('balance', '--account', account.accountId)).stdout);
    expect(balance.balance).toBe(toppedUp.balance);

    // The key on standard input (`--key -`), as a file or a password manager gives it, so that it stays out of the shell's history.
    const [empty, twoKeys] = await Promise.all([adminWithStdin('\n', 'revoke-key', '--key', '-'), adminWithStdin(`${apiKey}\nmcg_other\n`, 'revoke-key', '--key', '-')]);
    expect([empty.code, errorOf(empty.stderr)]).toEqual([2, { code: 'usage', message: expect.stringContaining('standard input holds no key') }]);
    expect([twoKeys.code, errorOf(twoKeys.stderr)]).toEqual([2, { code: 'usage', message: '--key -: standard input holds 2 lines; give one key a run' }]);
    expect((await prompt(apiKey)).status).toBe(200);
    const revoked = await adminWithStdin(`  ${apiKey}\r\n`, 'revoke-key', '--key', '-');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ accountId: account.accountId, revokedAt: expect.any(String) });
    expect((await prompt(apiKey)).status).toBe(401);
  });

  it("lists an account's keys by hash and prefix, never the key, and revokes one by its hash: a key the operator does not hold", async () => {
    const { accountId } = JSON.parse((await admin('create-account', '--credits', '5')).stdout);
    const issued = await Promise.all([admin('create-key', '--account', accountId), admin('create-key', '--account', accountId)]);
    const [kept, leaked] = issued.map((answer) => JSON.parse(answer.stdout).apiKey as string) as [string, string];
    const listed = await admin('list-keys', '--account', accountId);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(kept);
    expect(listed.stdout).not.toContain(leaked);
    const { keys } = JSON.parse(listed.stdout) as { keys: { keyHash: string; keyPrefix: string; revokedAt?: string }[] };
    const leakedHash = createHash('sha256').update(leaked).digest('hex');
    expect(keys.map((key) => key.keyHash).sort()).toEqual([kept, leaked].map((key) => createHash('sha256').update(key).digest('hex')).sort());
    expect(keys.find((key) => key.keyHash === leakedHash)!.keyPrefix).toBe(leaked.slice(0, 8));

    const [revoked, bothFlags, badHash] = await Promise.all([
      admin('revoke-key', '--hash', leakedHash),
      admin('revoke-key', '--key', kept, '--hash', leakedHash),
      admin('revoke-key', '--hash', 'mcg_not-a-hash'),
    ]);
    expect([revoked.code, JSON.parse(revoked.stdout).accountId]).toEqual([0, accountId]);
    expect([bothFlags.code, errorOf(bothFlags.stderr).code]).toEqual([2, 'usage']);
    expect([badHash.code, errorOf(badHash.stderr).code]).toEqual([2, 'usage']);
    expect((await prompt(leaked)).status).toBe(401);
    expect((await prompt(kept)).status).toBe(402);
    const after = JSON.parse((await admin('list-keys', '--account', accountId)).stdout) as { keys: { keyHash: string; revokedAt?: string }[] };
    expect(after.keys.filter((key) => key.revokedAt !== undefined).map((key) => key.keyHash)).toEqual([leakedHash]);
  });

  it('keeps a balance within a billion credits: a larger amount is a usage error, and a top-up past it changes nothing', async () => {
    const [tooLarge, created] = await Promise.all([
      runTs('infra/admin/cli.ts', ['create-account', '--credits', '1e10'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' }),
      admin('create-account', '--credits', '999999999'),
    ]);
    expect([tooLarge.code, errorOf(tooLarge.stderr).code]).toEqual([2, 'usage']);
    const { accountId } = JSON.parse(created.stdout);
    const past = await admin('top-up', '--account', accountId, '--credits', '2');
    expect([past.code, errorOf(past.stderr).code]).toEqual([2, 'usage']);
    expect(errorOf(past.stderr).message).toContain('past the most an account holds (1000000000 credits)');
    expect(JSON.parse((await admin('top-up', '--account', accountId, '--credits', '1')).stdout).balance).toBe(1e9);
    // Still a number, read back exactly (past 2^53 micro-credits, DynamoDB's clients answer a BigInt).
    expect(JSON.parse((await admin('ledger', '--account', accountId)).stdout)).toMatchObject({ balance: 1e9, ledgerSum: 1e9 });
  });

  it('answers a top-up run again under an entry applied with another amount as a usage error, in credits, applying nothing', async () => {
    const { accountId } = JSON.parse((await admin('create-account', '--credits', '5')).stdout);
    // An entry ID of 2016: long past the 18 minutes before a run may name it.
    const entry = '01ARZ3NDEKTSV4RRFFQ69G5FAV#topup';
    expect(JSON.parse((await admin('top-up', '--account', accountId, '--credits', '10', '--entry', entry)).stdout).balance).toBe(15);
    const other = await admin('top-up', '--account', accountId, '--credits', '500', '--entry', entry);
    expect([other.code, errorOf(other.stderr).code]).toEqual([2, 'usage']);
    expect(errorOf(other.stderr).message).toContain('as a top-up of 10 credits, not 500: nothing applied');
    expect(JSON.parse((await admin('balance', '--account', accountId)).stdout).balance).toBe(15);
  });

  it('answers each kind of error with one code and its exit status, as JSON on stderr', async () => {
    // A store that answers reads and fails every write with a 500: a top-up's write that may have landed all the same.
    const failingWrites = await startFakeAws((call) => (call.operation === 'GetItem' ? { body: {} } : awsError('InternalServerError', 'Internal server error', 500)));
    // The commands are independent: run side by side (each is a process of its own).
    const missingCommands = [['top-up', '--credits', '5'], ['balance'], ['ledger'], ['create-key']];
    // A command line that is not valid is refused before any store call: here, with no store to reach.
    const noStore = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' };
    const [usage, bad, unknownKey, unreachable, topUp, ...missing] = await Promise.all([
      runTs('infra/admin/cli.ts', ['make-coffee'], noStore),
      runTs('infra/admin/cli.ts', ['create-account', '--credits', '-3'], noStore),
      admin('revoke-key', '--key', 'mcg_nothing'),
      runTs('infra/admin/cli.ts', ['balance', '--account', 'acct_x'], noStore),
      runTs('infra/admin/cli.ts', ['--credits', '5', 'top-up', '--account', 'acct_x'], { DYNAMODB_ENDPOINT: failingWrites.endpoint }),
      ...missingCommands.map((command) => admin(command[0]!, '--account', 'acct_nobody', ...command.slice(1))),
    ]).finally(() => failingWrites.close());

    expect(usage!.code).toBe(2);
    expect(errorOf(usage!.stderr).code).toBe('usage');
    expect([bad!.code, errorOf(bad!.stderr).code]).toEqual([2, 'usage']);
    // An unknown account is the same error whichever command meets it.
    missing.forEach((answer, i) => {
      expect([answer.code, errorOf(answer.stderr).code], missingCommands[i]![0]).toEqual([3, 'not_found']);
      expect(errorOf(answer.stderr).message).toContain('acct_nobody');
    });
    expect([unknownKey!.code, errorOf(unknownKey!.stderr).code]).toEqual([3, 'not_found']);
    // A store that cannot be reached: its own code, never a bare "Error".
    expect([unreachable!.code, errorOf(unreachable!.stderr).code]).toEqual([4, 'store_unavailable']);
    expect(errorOf(unreachable!.stderr).message).not.toContain('all the same');
    expect(errorOf(unreachable!.stderr).message).toContain('calling the store at http://127.0.0.1:9 (DYNAMODB_ENDPOINT)');
    // A top-up whose write failed: the operator is told which entry to run again, once at most.
    expect([topUp!.code, errorOf(topUp!.stderr).code]).toEqual([4, 'store_unavailable']);
    expect(errorOf(topUp!.stderr).message).toMatch(
      /^The store did not complete accounts\.topUp: .*, calling the store at .* \(DYNAMODB_ENDPOINT\)\. The top-up may have been applied all the same: run the same top-up again with --entry [0-9A-HJKMNP-TV-Z]{26}#topup from \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z on, which applies it once at most/,
    );
  });

  it("dates a top-up by the store's clock, not by the operator's machine's, when the two differ", async () => {
    // Prepare: the store behind a forwarder whose answers say it is 20 minutes later than
    // this machine thinks, as AWS would to an operator whose clock is 20 minutes behind.
    const AHEAD_MS = 20 * 60_000;
    const forwarder = await startFakeHttp(async (call) => {
      const headers = Object.entries(call.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name));
      const answer = await fetch(storeEndpoint, { method: 'POST', headers: headers.map(([name, value]) => [name, String(value)]), body: call.body });
      return { status: answer.status, headers: { 'content-type': 'application/x-amz-json-1.0', date: new Date(Date.now() + AHEAD_MS).toUTCString() }, body: await answer.text() };
    });
    const store = createStoreClient({ region: 'local', endpoint: storeEndpoint, local: true });
    const ledger = new LedgerRepository(store.items, loadConfig({}).tables.ledger);
    try {
      const account = JSON.parse((await admin('create-account', '--credits', '1')).stdout);

      // Act
      const before = Date.now();
      const toppedUp = await runTs('infra/admin/cli.ts', ['top-up', '--account', account.accountId, '--credits', '2'], { DYNAMODB_ENDPOINT: forwarder.url });
      const after = Date.now();

      // Assess: the top-up's entry is dated 20 minutes on (the Date header has whole seconds);
      // the opening balance's, written without the forwarder, by this machine's clock.
      expect(toppedUp.code).toBe(0);
      const [opening, topUp] = (await ledger.list(account.accountId)).filter((entry) => entry.kind === 'topup');
      expect(opening!.at).toBeLessThanOrEqual(before);
      expect(topUp!.at - AHEAD_MS).toBeGreaterThanOrEqual(before - 1_000);
      expect(topUp!.at - AHEAD_MS).toBeLessThanOrEqual(after + 1_000);
    } finally {
      store.destroy();
      await forwarder.close();
    }
  });

  it('prints --help as plain text on stdout, for the CLI and for each command', async () => {
    const all = await admin('--help');
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^Usage: npm run -s admin -- <command>/);
    const commands = ['create-account', 'create-key', 'revoke-key', 'list-keys', 'top-up', 'balance', 'ledger', 'set-rate-limit', 'set-zdr', 'reconcile'];
    // Each a process of its own: side by side.
    const helps = await Promise.all(commands.map((command) => admin(command, '--help')));
    commands.forEach((command, i) => {
      expect(all.stdout).toContain(`  ${command}`);
      expect(helps[i]!.code).toBe(0);
      expect(helps[i]!.stdout).toMatch(new RegExp(`^Usage: npm run -s admin -- ${command}`));
    });
  });
});
