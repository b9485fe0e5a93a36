import { loadConfig } from '../../shared/config.js';
import { createStore } from '../../shared/storage/store.js';
import { AccountMissingError } from '../../shared/storage/accounts.js';
import { KeyNotFoundError } from '../../shared/storage/api-keys.js';
import { runAdminCommand, UsageError } from './commands.js';
import { DeployedStackError, withDeployedTables } from './deployed-tables.js';

/**
 * `npm run admin -- <command>`: prints JSON on stdout; errors as JSON on stderr with exit
 * code 1 (2 for usage). Tables: the local store's (DYNAMODB_ENDPOINT), the *_TABLE
 * variables', or else the deployed stack's (GATEWAY_STACK_NAME in AWS_REGION).
 */
let store: ReturnType<typeof createStore> | undefined;
try {
  const config = await withDeployedTables(loadConfig());
  // Against AWS (or AWS_ENDPOINT_URL), the SDK's whole credential chain: profiles, SSO, ...
  store = createStore(config);
  const result = await runAdminCommand(process.argv.slice(2), store);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const known = usage || error instanceof AccountMissingError || error instanceof KeyNotFoundError || error instanceof DeployedStackError;
  const message = known ? (error as Error).message : `${(error as Error).name}: ${(error as Error).message}`;
  process.stderr.write(`${JSON.stringify({ error: { code: usage ? 'usage' : (error as Error).name, message } }, null, 2)}\n`);
  process.exitCode = usage ? 2 : 1;
} finally {
  store?.documentClient.destroy();
}
