import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { GatewayConfig } from '../config.js';
import { AccountsRepository } from './accounts.js';
import { ApiKeysRepository } from './api-keys.js';
import { createDocumentClient } from './dynamodb.js';
import { LedgerRepository } from './ledger.js';

/** The document client the configuration names: the local store (DYNAMODB_ENDPOINT), a configured endpoint (LocalStack), or the region's DynamoDB. */
export function configuredDocumentClient(config: Pick<GatewayConfig, 'region' | 'dynamodbEndpoint' | 'awsEndpoints'>): DynamoDBDocumentClient {
  if (config.dynamodbEndpoint !== undefined) return createDocumentClient({ region: config.region, endpoint: config.dynamodbEndpoint, local: true });
  return createDocumentClient({ region: config.region, endpoint: config.awsEndpoints.dynamodb });
}

/** The repositories of accounts, API keys and the ledger over one document client: what the authorizer needs (and bundles). */
export function createRepositories(config: GatewayConfig, options: { documentClient?: DynamoDBDocumentClient } = {}) {
  const documentClient = options.documentClient ?? configuredDocumentClient(config);
  return {
    documentClient,
    accounts: new AccountsRepository(documentClient, config.tables.accounts),
    ledger: new LedgerRepository(documentClient, config.tables.ledger),
    apiKeys: new ApiKeysRepository(documentClient, config.tables.apiKeys),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;
