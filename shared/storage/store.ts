import type { AwsCredentials } from '../aws/sigv4.js';
import type { GatewayConfig } from '../config.js';
import { CreditsService } from '../credits/credits-service.js';
import { silentLog, type Log } from '../log.js';
import { AccountsRepository } from './accounts.js';
import { ApiKeysRepository } from './api-keys.js';
import { createDocumentClient, type DocumentClient } from './dynamodb.js';
import { LedgerRepository } from './ledger.js';

/**
 * The store's repositories and the credits service, without providers or the prompt
 * pipeline: what the authorizer, the reconciler and the admin CLI need (and bundle).
 */
export function createStore(
  config: GatewayConfig,
  options: { documentClient?: DocumentClient; credentials?: () => Promise<AwsCredentials>; log?: Log } = {},
) {
  const documentClient =
    options.documentClient ??
    createDocumentClient({ region: config.region, endpoint: config.dynamodbEndpoint, credentials: options.credentials ?? config.envCredentials });
  const accounts = new AccountsRepository(documentClient, config.tables.accounts);
  const ledger = new LedgerRepository(documentClient, config.tables.ledger);
  return {
    documentClient,
    accounts,
    ledger,
    apiKeys: new ApiKeysRepository(documentClient, config.tables.apiKeys),
    credits: new CreditsService(accounts, ledger, options.log ?? silentLog),
  };
}

export type Store = ReturnType<typeof createStore>;
