import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { GatewayConfig } from '../config.js';
import { CreditsService } from '../credits/credits-service.js';
import { silentLog, type Log } from '../log.js';
import { AccountsRepository } from './accounts.js';
import { ApiKeysRepository } from './api-keys.js';
import { createDocumentClient } from './dynamodb.js';
import { LedgerRepository } from './ledger.js';

/** The document client the configuration names: the local store (DYNAMODB_ENDPOINT), a configured endpoint (LocalStack), or the region's DynamoDB. */
export function configuredDocumentClient(config: Pick<GatewayConfig, 'region' | 'dynamodbEndpoint' | 'awsEndpoints'>): DynamoDBDocumentClient {
  if (config.dynamodbEndpoint !== undefined) return createDocumentClient({ region: config.region, endpoint: config.dynamodbEndpoint, local: true });
  return createDocumentClient({ region: config.region, endpoint: config.awsEndpoints.dynamodb });
}

/**
 * The store's repositories and the credits service, without providers or the prompt
 * pipeline: what the authorizer, the reconciler and the admin CLI need (and bundle).
 */
export function createStore(config: GatewayConfig, options: { documentClient?: DynamoDBDocumentClient; log?: Log } = {}) {
  const documentClient = options.documentClient ?? configuredDocumentClient(config);
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
