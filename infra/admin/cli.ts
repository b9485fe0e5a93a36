// First: before any module that loads the AWS SDK.
import './quiet-sdk.js';
import { ConfigError, loadConfig, storeEnvironment } from '../../shared/config.js';
import { createStore } from '../../shared/credits/store.js';
import { TopUpEntryTakenError, TopUpTooEarlyError, topUpRunnableAt } from '../../shared/credits/credits-service.js';
import { AccountNotFoundError } from '../../shared/errors.js';
import { storeNow } from '../../shared/storage/dynamodb.js';
import { BalanceCeilingError, KeyNotFoundError, StoreUnavailableError } from '../../shared/storage/errors.js';
import { configuredStoreClient } from '../../shared/storage/store.js';
import { commandLine, helpRequested, ReconcileIncompleteError, runCommand, UsageError } from './commands.js';
import { DeployedStackError, withDeployedTables } from './deployed-tables.js';
import { withProfileRegion } from './region.js';
import { AwsAccessError } from './aws-access.js';
import { describeStore, explainStoreErrors, NoCredentialsError, NotAStoreError, TableNotFoundError } from './store-errors.js';

/**
 * The CLI's store deadlines per attempt: an operator's machine, maybe far from the region, reads
 * pages of up to 1 MB (a ledger), whole answers that the functions' 2 s (STORE_TIMEOUTS, made
 * for a Lambda beside its table) would cut on a slow link.
 */
const ADMIN_STORE_TIMEOUTS = Object.freeze({ connectMs: 5_000, answerMs: 30_000 });

/**
 * What to tell an operator whose write met a store that stopped answering: its last attempt
 * may have landed with the answer lost, and running it again would then apply it twice. By
 * the operation that failed; the other writes are safe to run again (a revocation keeps its
 * first time, a rate limit is set, a key is new each time and prints only once it is stored).
 */
const UNSURE_WRITES: Record<string, (error: Error & { entryId?: string }) => string> = {
  'accounts.topUp': ({ entryId }) =>
    `The top-up may have been applied all the same: run the same top-up again with --entry ${entryId ?? '<its entry ID>'}${entryId ? ` from ${new Date(topUpRunnableAt(entryId)).toISOString()} on` : ''}, which applies it once at most (nothing where it was applied); a top-up without --entry would add the credits a second time`,
  'accounts.create': () => 'The account may have been opened all the same, without its ID printed: running the command again opens another one',
};

/**
 * `npm run -s admin -- <command>`: prints JSON on stdout (plain text for --help); errors
 * as JSON on stderr, each code with its exit status (see USAGE). Tables: the local store's
 * (DYNAMODB_ENDPOINT), the *_TABLE variables', or else the deployed stack's
 * (GATEWAY_STACK_NAME in AWS_REGION, AWS_DEFAULT_REGION or the AWS profile's region).
 */
const ERRORS: { match: (error: unknown) => boolean; code: string; exit: number; message?: (error: Error) => string }[] = [
  { match: (e) => e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true, code: 'usage', exit: 2 },
  // A variable of the environment the CLI runs in that is not valid: the message names it.
  { match: (e) => e instanceof ConfigError, code: 'usage', exit: 2 },
  // A table name (a *_TABLE variable, the local store's defaults, a stack output) the store does not hold: the message names it and its variable.
  { match: (e) => e instanceof TableNotFoundError, code: 'usage', exit: 2 },
  // The amount the operator named is what cannot be applied.
  { match: (e) => e instanceof BalanceCeilingError, code: 'usage', exit: 2 },
  // The API's message for a missing account speaks of an API key; the operator named the account.
  { match: (e) => e instanceof AccountNotFoundError, code: 'not_found', exit: 3, message: (e) => `No account ${(e as AccountNotFoundError).accountId}` },
  { match: (e) => e instanceof KeyNotFoundError, code: 'not_found', exit: 3 },
  {
    match: (e) => e instanceof StoreUnavailableError,
    code: 'store_unavailable',
    exit: 4,
    message: (e) => {
      const unsure = UNSURE_WRITES[(e as StoreUnavailableError).operation];
      // Which store: the operator may have meant another (DYNAMODB_ENDPOINT, the stack's region).
      const called = `${e.message}, calling ${storeCalled}`;
      return unsure ? `${called}. ${unsure(e)}` : called;
    },
  },
  // An endpoint that answers, but not as DynamoDB (the gateway's own port): no store there, named.
  { match: (e) => e instanceof NotAStoreError, code: 'store_unavailable', exit: 4 },
  // TLS failed (an https endpoint that serves plain http, a certificate not trusted): the store is not reachable as named.
  {
    match: (e) => tlsFailure(e) !== undefined,
    code: 'store_unavailable',
    exit: 4,
    message: (e) => `TLS failed (${tlsFailure(e)}) calling ${storeCalled}: https to a store that serves http, or a certificate not trusted`,
  },
  { match: (e) => e instanceof DeployedStackError, code: 'stack_not_found', exit: 5 },
  // No AWS credentials: the same code whether the tables were to come from the stack (DeployedStackError) or from *_TABLE.
  { match: (e) => e instanceof NoCredentialsError, code: 'stack_not_found', exit: 5 },
  { match: (e) => e instanceof ReconcileIncompleteError, code: 'reconcile_incomplete', exit: 6 },
  // AWS refused the identity (not allowed, not valid, expired): the message names the call and what to do.
  { match: (e) => e instanceof AwsAccessError, code: 'access_denied', exit: 7 },
  // Said as a usage error: the command is right, its time not yet.
  { match: (e) => e instanceof TopUpTooEarlyError, code: 'usage', exit: 2 },
  // The entry named is another top-up's (another amount): the operator's command is what is wrong.
  { match: (e) => e instanceof TopUpEntryTakenError, code: 'usage', exit: 2 },
];

/** The code of a TLS connection that failed (Node's or OpenSSL's), on the error or its causes. */
function tlsFailure(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (code === 'EPROTO' || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return code;
  }
  return undefined;
}

/** An account that never exists: its read only carries the store's clock back. */
const CLOCK_READ_ACCOUNT = 'acct_clock-read';
/** A ledger entry of it, which never exists either: its read says the ledger's table is there. */
const CLOCK_READ_ENTRY = 'clock-read';

/** Standard input (`revoke-key --key -`), up to `most` characters: what is past them is not read. */
async function readStdin(most: number): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin.setEncoding('utf8')) {
    text += chunk;
    if (text.length >= most) break;
  }
  process.stdin.destroy();
  return text.slice(0, most);
}

// A reader that closed the pipe (`| head`) has what it wanted: no stack trace on stderr for it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const argv = process.argv.slice(2);
const help = helpRequested(argv);
let store: ReturnType<typeof createStore> | undefined;
/** Where the store calls go (describeStore), once the configuration is read. */
let storeCalled = 'the store';
try {
  if (help) {
    process.stdout.write(`${help}\n`);
  } else {
    // The command line first: a typo is a usage error, whatever the store or the stack.
    const line = commandLine(argv);
    const config = await withDeployedTables(await withProfileRegion(loadConfig(storeEnvironment())));
    // Against AWS (or AWS_ENDPOINT_URL), the SDK's whole credential chain: profiles, SSO, ...
    const storeClient = configuredStoreClient(config, ADMIN_STORE_TIMEOUTS);
    // A missing table, an endpoint that is not a store, no credentials: said as what to set, not as the SDK's error.
    explainStoreErrors(storeClient, config);
    storeCalled = describeStore(config);
    // Entries dated and ages judged by the store's clock, not this machine's, which may be off
    // by more than the reconciler's delays (18 minutes): a clock behind would let a
    // top-up be posted while a retry of its write may still land, one ahead would release the
    // reservations of requests still running. One read first (once the command line is
    // valid), for the SDK to hear that clock.
    const now = () => storeNow(storeClient);
    store = createStore(config, { storeClient, now });
    const { accounts, ledger } = store;
    const result = await runCommand(line, {
      ...store,
      now,
      beforeDating: async (writesLedger) => {
        // The ledger's table read beside the clock's, for a command that writes entries: misnamed, it had
        // been said nowhere (the balance changed, the entry left unposted, a reconcile told to run again).
        await Promise.all([accounts.get(CLOCK_READ_ACCOUNT), writesLedger ? ledger.get(CLOCK_READ_ACCOUNT, CLOCK_READ_ENTRY) : undefined]);
      },
      readStdin,
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  }
} catch (error) {
  const known = ERRORS.find((kind) => kind.match(error));
  const message = known ? (known.message?.(error as Error) ?? (error as Error).message) : `${(error as Error).name}: ${(error as Error).message}`;
  process.stderr.write(`${JSON.stringify({ error: { code: known?.code ?? 'internal_error', message } }, null, 2)}\n`);
  process.exitCode = known?.exit ?? 1;
} finally {
  store?.storeClient.destroy();
}
