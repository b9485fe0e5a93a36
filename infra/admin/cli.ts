import { loadConfig } from '../../shared/config.js';
import { createStore } from '../../shared/credits/store.js';
import { AccountNotFoundError } from '../../shared/errors.js';
import { KeyNotFoundError, StoreUnavailableError } from '../../shared/storage/errors.js';
import { helpRequested, runAdminCommand, UsageError } from './commands.js';
import { DeployedStackError, withDeployedTables } from './deployed-tables.js';

/** The commands that write: a store that stopped answering may have taken the write. */
const WRITES = new Set(['create-account', 'create-key', 'revoke-key', 'top-up', 'set-rate-limit']);

/**
 * `npm run -s admin -- <command>`: prints JSON on stdout (plain text for --help); errors
 * as JSON on stderr, each code with its exit status (see USAGE). Tables: the local store's
 * (DYNAMODB_ENDPOINT), the *_TABLE variables', or else the deployed stack's
 * (GATEWAY_STACK_NAME in AWS_REGION).
 */
const ERRORS: { match: (error: unknown) => boolean; code: string; exit: number; message?: (error: Error) => string }[] = [
  { match: (e) => e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true, code: 'usage', exit: 2 },
  // The API's message for a missing account speaks of an API key; the operator named the account.
  { match: (e) => e instanceof AccountNotFoundError, code: 'not_found', exit: 3, message: (e) => `No account ${(e as AccountNotFoundError).accountId}` },
  { match: (e) => e instanceof KeyNotFoundError, code: 'not_found', exit: 3 },
  {
    match: (e) => e instanceof StoreUnavailableError,
    code: 'store_unavailable',
    exit: 4,
    // A write's last attempt may have landed with its answer lost: running it again could apply it twice.
    message: (e) => (WRITES.has(argv[0] ?? '') ? `${e.message}. It may have been applied all the same: check (balance, ledger) before running it again` : e.message),
  },
  { match: (e) => e instanceof DeployedStackError, code: 'stack_not_found', exit: 5 },
];

const argv = process.argv.slice(2);
const help = helpRequested(argv);
let store: ReturnType<typeof createStore> | undefined;
try {
  if (help) {
    process.stdout.write(`${help}\n`);
  } else {
    const config = await withDeployedTables(loadConfig());
    // Against AWS (or AWS_ENDPOINT_URL), the SDK's whole credential chain: profiles, SSO, ...
    store = createStore(config);
    const result = await runAdminCommand(argv, store);
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
