import { parseArgs } from 'node:util';
import { generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';
import { revokeApiKey } from '../../shared/auth/revoke.js';
import { creditsToMicro, microToCredits } from '../../shared/credits/credits.js';
import { MAX_BALANCE_MICRO } from '../../shared/pricing/micro-credits.js';
import { MAX_RATE_LIMIT_RPM } from '../../shared/config.js';
import { AccountNotFoundError } from '../../shared/errors.js';
import type { CreditsService, ReconcileOutcome } from '../../shared/credits/credits-service.js';
import { pendingEntries, type Account, type AccountsRepository } from '../../shared/storage/accounts.js';
import type { ApiKeysRepository } from '../../shared/storage/api-keys.js';
import type { LedgerEntry, LedgerRepository } from '../../shared/storage/ledger.js';

export interface AdminDeps {
  accounts: AccountsRepository;
  apiKeys: ApiKeysRepository;
  ledger: LedgerRepository;
  credits: CreditsService;
  /**
   * Run, once the command line is valid, before a command that dates an entry or judges ages
   * (create-account, top-up, reconcile, revoke-key): the CLI reads the store's clock there (cli.ts).
   * `ledger`: the command writes ledger entries, and the CLI reads the ledger's table too, so
   * that a table the store does not hold is said before anything is written.
   */
  beforeDating?: (ledger: boolean) => Promise<void>;
  /** The time a revocation is dated by: the store's clock in the CLI (as `credits` dates entries), never the operator machine's. */
  now?: () => number;
  /** Standard input, up to `most` characters (the rest is not read): where `revoke-key --key -` reads its key (cli.ts). */
  readStdin?: (most: number) => Promise<string>;
}

/** Reads of the account around its ledger's listing before `ledger` takes them as one moment (LEDGER_READS). */
const LEDGER_READS = 3;

/**
 * The account and its ledger as of one moment: the account read before and after the ledger
 * is listed, again till both reads agree on what the terms read of it (at most LEDGER_READS
 * times); a request or top-up that landed between them had put a term in one read and not in
 * the other, and the terms `ledger` prints seemed not to add up. `consistent: false` where it
 * kept changing. What else changes (a minute's request count, a reserve, which moves credits
 * from the balance to the holds) is no change here.
 */
async function ledgerSnapshot(deps: AdminDeps, accountId: string): Promise<{ account: Account; entries: LedgerEntry[]; consistent: boolean }> {
  let account = await deps.accounts.get(accountId);
  if (!account) throw new AccountNotFoundError(accountId);
  for (let read = 1; ; read++) {
    const entries = await deps.ledger.list(accountId);
    const after = await deps.accounts.get(accountId);
    if (!after) throw new AccountNotFoundError(accountId);
    if (ledgerTerms(after) === ledgerTerms(account)) return { account, entries, consistent: true };
    if (read === LEDGER_READS) return { account: after, entries, consistent: false };
    account = after;
  }
}

/** What `ledger`'s terms read of the account: the balance with its holds, and the top-ups not yet posted. */
function ledgerTerms(account: Account): string {
  const pending = pendingEntries(account).map((entry) => `${entry.entryId}:${entry.amountMicro}`);
  return `${account.balanceMicro + heldMicro(account)} ${pending.sort().join(' ')}`;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** A reconcile run that finished every account it could, and failed some (their work is left for the next run). */
export class ReconcileIncompleteError extends Error {
  override name = 'ReconcileIncompleteError';
  constructor(readonly outcome: ReconcileOutcome) {
    const { accounts, failed, posted, completed, released, failedAccounts = [] } = outcome;
    const more = failed > failedAccounts.length ? ` and ${failed - failedAccounts.length} more` : '';
    super(
      `Reconcile failed for ${failed} of ${accounts} accounts (${failedAccounts.join(', ')}${more}: their writes failed, run it again); the others were reconciled: ${posted} entries posted, ${completed} reservations completed, ${released} released`,
    );
  }
}

/** A top-up's entry ID (CreditsService.topUpEntryId). */
const TOP_UP_ENTRY = /^[0-9A-HJKMNP-TV-Z]{26}#topup$/;

/** The most `--key -` reads: a key is 47 characters. */
const STDIN_KEY_MAX_CHARS = 4096;

/**
 * The key `revoke-key --key -` was given on standard input: its one line, without the line
 * end or the spaces around it (`echo`, a file, a password manager's output). Anything else
 * is refused: nothing, or several lines (one key a run, as with --key).
 */
async function keyFromStdin(deps: AdminDeps): Promise<string> {
  if (!deps.readStdin) throw new UsageError('--key - reads the key from standard input, which this caller does not give');
  // One character past the most: enough to know there is more, without reading all of it (`< /dev/zero` had filled memory).
  const text = await deps.readStdin(STDIN_KEY_MAX_CHARS + 1);
  if (text.length > STDIN_KEY_MAX_CHARS) throw new UsageError(`--key -: standard input holds more than ${STDIN_KEY_MAX_CHARS} characters, more than a key's line; give one key`);
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0) throw new UsageError('--key -: standard input holds no key; give the key on it, as in: revoke-key --key - < key.txt');
  if (lines.length > 1) throw new UsageError(`--key -: standard input holds ${lines.length} lines; give one key a run`);
  return lines[0]!;
}

/** What each command does and takes, for `--help`. */
const COMMANDS: Record<string, string> = {
  'create-account': 'create-account --credits N [--zdr] [--rpm N]\n  Opens an account with N credits; --zdr makes zero data retention its default, --rpm sets its own rate limit.',
  'create-key': 'create-key --account ID\n  Issues an API key for the account; the key is printed once, only its SHA-256 and its first 8 characters are stored.',
  'revoke-key':
    'revoke-key --key KEY | --key - | --hash SHA256\n  Revokes a key, given the key, the key on standard input (--key -, which keeps it out of the shell history), or its SHA-256 (list-keys shows it): its prompts are refused (401) at once; GET /api/v1/models and /api/v1/openapi.json accept it until the authorizer cache expires, 30 s by default.',
  'list-keys': "list-keys --account ID\n  The account's keys: SHA-256, prefix, when created and revoked (never the key, which is not stored).",
  'top-up':
    "top-up --account ID --credits N [--entry ENTRY]\n  Adds N credits; applies at once, and prints the top-up's entry ID. Run again with --entry and the ID a run printed (or its error named), from 18 minutes after that run on, it applies that top-up once at most: nothing where it was applied.",
  balance:
    'balance --account ID\n  The balance, what is reserved by requests in flight, the requests running and what they count of MAX_REQUESTS_IN_FLIGHT (a judged request 1, and 1 a model or judge, whichever are more), and the account settings.',
  ledger:
    'ledger --account ID\n  Every balance change. balance + reserved (held by requests in flight) equals ledgerSum + unpostedCredits (top-ups applied, their entries not yet in the ledger) - settledNotClosed.credits (settlements in the ledger whose request has not closed its hold yet: between its two writes, or crashed there until the reconciler applies them); ledgerSum alone once both are 0.',
  'set-rate-limit':
    "set-rate-limit --account ID --rpm N|default\n  The account's requests per minute, 1 to 1000000; default removes the account's own limit, which then follows the gateway's (RATE_LIMIT_RPM, or the stack's gateway:rateLimitRpm). Applies once the authorizer cache expires: 30 s by default.",
  'set-zdr':
    "set-zdr --account ID --on | --off\n  The account's zero-data-retention default: with --on, none of its requests' prompts, outputs or judge reasoning is kept (a request may still ask for it with zero_data_retention). Applies once the authorizer cache expires: 30 s by default.",
  reconcile:
    'reconcile\n  Posts unposted ledger entries older than 18 minutes, completes or releases reservations older than 18 minutes, and drops the IDs of closed requests 18 minutes after they began.',
};

export const USAGE = `Usage: npm run -s admin -- <command> [options]     (-s keeps npm's banner off stdout)

Commands:
${Object.values(COMMANDS)
  .map((text) => `  ${text.split('\n')[0]}`)
  .join('\n')}

npm run -s admin -- <command> --help says more about one command.
DYNAMODB_ENDPOINT points it at a local store (the one npm start prints); without it, the
deployed stack's tables (GATEWAY_STACK_NAME in AWS_REGION, else the AWS profile's
region), or the *_TABLE variables.
Output is JSON on stdout. Errors are JSON on stderr, {"error":{"code","message"}}, with
the exit status of their code: usage 2, not_found 3, store_unavailable 4, stack_not_found 5,
reconcile_incomplete 6, access_denied 7 (AWS refused the credentials), internal_error 1.`;

/** What `--help` prints: the whole usage, or one command's. */
export function helpText(command: string | undefined): string {
  const text = command ? COMMANDS[command] : undefined;
  return text ? `Usage: npm run -s admin -- ${text}` : USAGE;
}

const OPTIONS = {
  credits: { type: 'string' },
  account: { type: 'string' },
  key: { type: 'string' },
  hash: { type: 'string' },
  rpm: { type: 'string' },
  zdr: { type: 'boolean' },
  on: { type: 'boolean' },
  off: { type: 'boolean' },
  entry: { type: 'string' },
} as const;

type Flag = keyof typeof OPTIONS;

/** The flags each command takes: any other is refused, never ignored (a stray --account on create-account would open a new account). */
const COMMAND_FLAGS: Record<string, readonly Flag[]> = {
  'create-account': ['credits', 'zdr', 'rpm'],
  'create-key': ['account'],
  'revoke-key': ['key', 'hash'],
  'list-keys': ['account'],
  'top-up': ['account', 'credits', 'entry'],
  balance: ['account'],
  ledger: ['account'],
  'set-rate-limit': ['account', 'rpm'],
  'set-zdr': ['account', 'on', 'off'],
  reconcile: [],
};

/** `--help` or `-h` anywhere, or `help` as the command: the help of the command named, else the whole usage. */
export function helpRequested(argv: readonly string[]): string | undefined {
  if (!argv.includes('--help') && !argv.includes('-h') && argv[0] !== 'help') return undefined;
  return helpText(argv.find((arg) => !arg.startsWith('-') && arg !== 'help'));
}

/** A command line whose command, flags and flag values are checked: what runAdminCommand runs. */
export type AdminCommand =
  | { command: 'create-account'; balanceMicro: number; zeroDataRetention: boolean; rateLimitRpm?: number }
  | { command: 'create-key' | 'list-keys' | 'balance' | 'ledger'; accountId: string }
  | { command: 'revoke-key'; key?: string; hash?: string }
  | { command: 'top-up'; accountId: string; amountMicro: number; entry?: string }
  | { command: 'set-rate-limit'; accountId: string; rateLimitRpm: number | null }
  | { command: 'set-zdr'; accountId: string; zeroDataRetention: boolean }
  | { command: 'reconcile' };

/**
 * The command and its flags' values, or a UsageError: an unknown command or flag, a stray
 * argument, a flag given twice, a value its flag does not take. Checked before the CLI looks
 * for the stack's tables: a typo had been answered `stack_not_found`, and `--credits 1e3`
 * refused only after the stack's calls.
 */
export function commandLine(argv: string[]): AdminCommand {
  const { positionals, values, tokens } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  const [command, ...extra] = positionals;
  if (!command) throw new UsageError(USAGE);
  const takes = COMMAND_FLAGS[command];
  if (takes === undefined) throw new UsageError(`Unknown command "${command}"\n${USAGE}`);
  // Named, as an unknown flag is: `create-account --credits 5 extra`, or `--zdr true`, whose `true` is no value of a boolean flag.
  if (extra.length > 0) {
    const named = extra.map((arg) => JSON.stringify(arg)).join(', ');
    throw new UsageError(`${command} takes no argument besides its flags: unexpected argument${extra.length > 1 ? 's' : ''} ${named}: ${COMMANDS[command]!.split('\n')[0]}`);
  }
  // parseArgs keeps the last of a repeated flag: `top-up --credits 5 --credits 500` would add 500.
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once; give it once`);
    seen.add(token.name);
    if (!takes.includes(token.name as Flag)) {
      const flags = takes.map((flag) => `--${flag}`).join(', ');
      throw new UsageError(`${command} does not take --${token.name} (${flags ? `it takes ${flags}` : 'it takes no flag'}): ${COMMANDS[command]!.split('\n')[0]}`);
    }
  }
  switch (command) {
    case 'create-account':
      return {
        command,
        balanceMicro: creditsToMicro(credits(values.credits, { allowZero: true })),
        zeroDataRetention: values.zdr ?? false,
        ...(values.rpm === undefined ? {} : { rateLimitRpm: rpm(values.rpm) }),
      };
    case 'create-key':
    case 'list-keys':
    case 'balance':
    case 'ledger':
      return { command, accountId: accountOf(values.account) };
    case 'revoke-key':
      if ((values.key === undefined) === (values.hash === undefined)) throw new UsageError('revoke-key takes one of --key KEY or --hash SHA256');
      if (values.hash !== undefined && !/^[0-9a-f]{64}$/.test(values.hash)) throw new UsageError("--hash must be a key's SHA-256: 64 lowercase hex digits, as list-keys shows it");
      return { command, key: values.key, hash: values.hash };
    case 'top-up': {
      const accountId = accountOf(values.account);
      const amountMicro = creditsToMicro(credits(values.credits));
      if (values.entry !== undefined && !TOP_UP_ENTRY.test(values.entry))
        throw new UsageError(`--entry must be a top-up's entry ID (26 characters of a ULID and "#topup"), as a top-up printed it`);
      return { command, accountId, amountMicro, entry: values.entry };
    }
    case 'set-rate-limit': {
      const accountId = accountOf(values.account);
      const given = required(values.rpm, '--rpm');
      // `default`: the account's own limit removed (balance then shows null), the gateway's applies.
      return { command, accountId, rateLimitRpm: given === 'default' ? null : rpm(given, ", or default (the gateway's limit)") };
    }
    case 'set-zdr': {
      const accountId = accountOf(values.account);
      if (values.on === values.off) throw new UsageError(`set-zdr takes one of --on or --off: ${COMMANDS['set-zdr']!.split('\n')[0]}`);
      return { command, accountId, zeroDataRetention: values.on === true };
    }
    case 'reconcile':
      return { command };
    default:
      throw new UsageError(`Unknown command "${command}"\n${USAGE}`);
  }
}

/** Runs one admin command line; returns what the CLI prints as JSON. */
export async function runAdminCommand(argv: string[], deps: AdminDeps): Promise<Record<string, unknown>> {
  return runCommand(commandLine(argv), deps);
}

/** Runs a command line already checked (commandLine); returns what the CLI prints as JSON. */
export async function runCommand(line: AdminCommand, deps: AdminDeps): Promise<Record<string, unknown>> {
  switch (line.command) {
    case 'create-account': {
      const { balanceMicro, zeroDataRetention, rateLimitRpm } = line;
      await deps.beforeDating?.(true);
      return describeAccount(await deps.credits.openAccount({ balanceMicro, zeroDataRetention, rateLimitRpm }));
    }
    case 'create-key': {
      const { accountId } = line;
      if (!(await deps.accounts.get(accountId))) throw new AccountNotFoundError(accountId);
      const apiKey = generateApiKey();
      const createdAt = new Date().toISOString();
      await deps.apiKeys.put({ keyHash: hashApiKey(apiKey), accountId, keyPrefix: keyPrefix(apiKey), createdAt });
      return { apiKey, accountId, keyPrefix: keyPrefix(apiKey), createdAt, note: 'The key is shown once; only its SHA-256 and its first 8 characters are stored.' };
    }
    case 'revoke-key': {
      const key = line.key === '-' ? await keyFromStdin(deps) : line.key;
      // Dated by the store's clock: the account's list drops revocations 2 hours older than the
      // newest, so a machine hours ahead would drop, and let through again, keys revoked just now.
      await deps.beforeDating?.(false);
      const record = await revokeApiKey(deps, line.hash ?? hashApiKey(key as string), (deps.now ?? Date.now)());
      return { accountId: record.accountId, keyPrefix: record.keyPrefix, revokedAt: record.revokedAt };
    }
    case 'list-keys': {
      const { accountId } = line;
      if (!(await deps.accounts.get(accountId))) throw new AccountNotFoundError(accountId);
      const keys = await deps.apiKeys.listByAccount(accountId);
      return { accountId, keys: keys.map(({ keyHash, keyPrefix, createdAt, revokedAt }) => ({ keyHash, keyPrefix, createdAt, ...(revokedAt ? { revokedAt } : {}) })) };
    }
    case 'top-up': {
      const { accountId, amountMicro } = line;
      await deps.beforeDating?.(true);
      const entryId = line.entry ?? deps.credits.topUpEntryId();
      try {
        const { balanceMicro, applied } = await deps.credits.topUp(accountId, amountMicro, entryId, line.entry !== undefined);
        // `already`: a top-up run again whose first run's write had landed; this one added nothing.
        return { accountId, entryId, applied, balance: microToCredits(balanceMicro) };
      } catch (error) {
        // Unanswered, the write may land all the same: the operator is told which entry to run again.
        if (error instanceof Error) Object.assign(error, { entryId });
        throw error;
      }
    }
    case 'balance': {
      const { accountId } = line;
      const account = await deps.accounts.get(accountId);
      if (!account) throw new AccountNotFoundError(accountId);
      return describeAccount(account);
    }
    case 'ledger': {
      const { accountId } = line;
      const { account, entries, consistent } = await ledgerSnapshot(deps, accountId);
      const sumMicro = entries.reduce((sum, e) => sum + e.amountMicro, 0);
      // A top-up between its two writes (in the ledger, not yet marked posted in the account, or left
      // so for the reconciler where marking it failed) counts once: as the ledger's.
      const listed = new Set(entries.map((e) => e.entryId));
      const unposted = pendingEntries(account).filter((e) => !listed.has(e.entryId));
      // A request between its settle's two writes (or crashed there until the reconciler applies
      // it): its entry is in the ledger, its hold still open and its charge not yet in the balance.
      const open = account.reservations ?? {};
      const settledOpen = entries.filter((e) => (e.kind === 'settle' || e.kind === 'release') && e.requestId !== undefined && Object.hasOwn(open, e.requestId));
      return {
        accountId,
        consistent,
        balance: microToCredits(account.balanceMicro),
        reserved: microToCredits(heldMicro(account)),
        ledgerSum: microToCredits(sumMicro),
        unposted: unposted.length,
        unpostedCredits: microToCredits(unposted.reduce((sum, e) => sum + e.amountMicro, 0)),
        unpostedEntries: unposted.map((e) => ({ entryId: e.entryId, credits: microToCredits(e.amountMicro), at: new Date(e.at).toISOString() })),
        settledNotClosed: { requests: settledOpen.length, credits: microToCredits(settledOpen.reduce((sum, e) => sum + e.amountMicro, 0)) },
        entries: entries.map((e) => ({
          entryId: e.entryId,
          kind: e.kind,
          credits: microToCredits(e.amountMicro),
          at: new Date(e.at).toISOString(),
          ...(e.requestId ? { requestId: e.requestId } : {}),
          ...(e.chargedMicro !== undefined ? { charged: microToCredits(e.chargedMicro) } : {}),
          ...(e.uncollectedMicro !== undefined ? { uncollected: microToCredits(e.uncollectedMicro) } : {}),
          ...(e.estimatedMicro !== undefined ? { estimated: microToCredits(e.estimatedMicro) } : {}),
        })),
      };
    }
    case 'set-rate-limit': {
      const { accountId, rateLimitRpm } = line;
      await deps.accounts.setSettings(accountId, { rateLimitRpm });
      return { accountId, rateLimitRpm };
    }
    case 'set-zdr': {
      const { accountId, zeroDataRetention } = line;
      await deps.accounts.setSettings(accountId, { zeroDataRetention });
      return { accountId, zeroDataRetention };
    }
    case 'reconcile': {
      await deps.beforeDating?.(true);
      const outcome = await deps.credits.reconcile();
      if (outcome.failed > 0) throw new ReconcileIncompleteError(outcome);
      return outcome;
    }
  }
}

/** Credits held out of the balance by requests in flight (no ledger entry till each settles). */
function heldMicro(account: Account): number {
  return Object.values(account.reservations ?? {}).reduce((sum, r) => sum + r.amountMicro, 0);
}

function describeAccount(account: Account): Record<string, unknown> {
  return {
    accountId: account.accountId,
    balance: microToCredits(account.balanceMicro),
    reserved: microToCredits(heldMicro(account)),
    // What a 429 "still running" weighs: the requests open, and what they count of MAX_REQUESTS_IN_FLIGHT (a judged request 1, and 1 a model or judge, whichever are more).
    running: { requests: Object.keys(account.reservations ?? {}).length, counting: account.inFlightSlots ?? 0 },
    zeroDataRetention: account.zeroDataRetention,
    rateLimitRpm: account.rateLimitRpm ?? null,
    createdAt: account.createdAt,
  };
}

/** The most bytes DynamoDB takes in a partition key: an account ID past it is no account's (it had been an internal_error). */
const MAX_ACCOUNT_ID_BYTES = 2048;

function accountOf(value: string | undefined): string {
  const accountId = required(value, '--account');
  if (Buffer.byteLength(accountId) > MAX_ACCOUNT_ID_BYTES)
    throw new UsageError(`--account is ${Buffer.byteLength(accountId)} bytes, more than an account ID's ${MAX_ACCOUNT_ID_BYTES}`);
  return accountId;
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

/**
 * A plain decimal: digits, optionally a point and 1 to 6 more (micro-credits are the unit of
 * storage: more decimals cannot be represented). Number() alone would take ' ' as 0, 0x10 as 16,
 * 0b11 as 3 and 1e3 as 1000.
 */
const PLAIN_DECIMAL = /^\d+(?:\.\d{1,6})?$/;

function credits(value: string | undefined, { allowZero = false } = {}): number {
  const text = required(value, '--credits');
  const amount = PLAIN_DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(amount) || (!allowZero && amount === 0) || amount > microToCredits(MAX_BALANCE_MICRO)) {
    throw new UsageError(
      `--credits must be a ${allowZero ? 'non-negative' : 'positive'} decimal number (digits, optionally a point and at most 6 decimals), at most ${microToCredits(MAX_BALANCE_MICRO)}; got ${JSON.stringify(text)}`,
    );
  }
  return amount;
}

/** Requests a minute: plain digits (not 1e3, 0x10 or 60.0), 1 to MAX_RATE_LIMIT_RPM (what the rate window can ever count: shared/config.ts). */
function rpm(value: string, orDefault = ''): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_RATE_LIMIT_RPM) {
    throw new UsageError(
      `--rpm must be a whole number of requests a minute, digits only, from 1 to ${MAX_RATE_LIMIT_RPM} (more than API Gateway's default account throttle can bring in a minute)${orDefault}; got ${JSON.stringify(value)}`,
    );
  }
  return n;
}
