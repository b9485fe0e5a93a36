import type { GatewayConfig } from '../config.js';
import { AccountsRepository } from './accounts.js';
import { ApiKeysRepository } from './api-keys.js';
import type { AwsTimeouts } from '../http/aws-handler.js';
import { createStoreClient, type StoreClient } from './dynamodb.js';
import { LedgerRepository } from './ledger.js';

/**
 * The store client the configuration names: the local store (DYNAMODB_ENDPOINT), a configured
 * endpoint (LocalStack), or the region's DynamoDB; with STORE_TIMEOUTS unless `timeouts` are given.
 */
export function configuredStoreClient(config: Pick<GatewayConfig, 'region' | 'dynamodbEndpoint' | 'awsEndpoints'>, timeouts?: AwsTimeouts): StoreClient {
  if (config.dynamodbEndpoint !== undefined) return createStoreClient({ region: config.region, endpoint: config.dynamodbEndpoint, local: true, timeouts });
  return createStoreClient({ region: config.region, endpoint: config.awsEndpoints.dynamodb, timeouts });
}

/** The repositories of accounts, API keys and the ledger over one store client: what the authorizer needs (and bundles). */
export function createRepositories(config: GatewayConfig, options: { storeClient?: StoreClient } = {}) {
  const storeClient = options.storeClient ?? configuredStoreClient(config);
  return {
    storeClient,
    accounts: new AccountsRepository(storeClient.items, config.tables.accounts),
    ledger: new LedgerRepository(storeClient.items, config.tables.ledger),
    apiKeys: new ApiKeysRepository(storeClient.documents, config.tables.apiKeys),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
