import { loadConfig } from '../../shared/config.js';
import { createStore } from '../../shared/gateway.js';
import { AccountMissingError } from '../../shared/storage/accounts.js';
import { KeyNotFoundError } from '../../shared/storage/api-keys.js';
import { runAdminCommand, UsageError } from './commands.js';

/** `npm run admin -- <command>`: prints JSON on stdout; errors as JSON on stderr with exit code 1 (2 for usage). */
const config = loadConfig();
const store = createStore(config);
try {
  const result = await runAdminCommand(process.argv.slice(2), store);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const known = usage || error instanceof AccountMissingError || error instanceof KeyNotFoundError;
  const message = known ? (error as Error).message : `${(error as Error).name}: ${(error as Error).message}`;
  process.stderr.write(`${JSON.stringify({ error: { code: usage ? 'usage' : (error as Error).name, message } }, null, 2)}\n`);
  process.exitCode = usage ? 2 : 1;
} finally {
  store.documentClient.destroy();
}
