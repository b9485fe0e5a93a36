import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PromptService } from './compare/prompt-service.js';
import type { GatewayConfig } from './config.js';
import { silentLog, type Log } from './log.js';
import { createRouter, type RouterOptions } from './providers/router.js';
import { AccountsRepository } from './storage/accounts.js';
import { ApiKeysRepository } from './storage/api-keys.js';
import { createDocumentClient } from './storage/client.js';
import { PromptLogsRepository } from './storage/prompt-logs.js';

/** Everything a handler needs, built once per process (per Lambda cold start). */
export interface Gateway {
  config: GatewayConfig;
  documentClient: DynamoDBDocumentClient;
  accounts: AccountsRepository;
  apiKeys: ApiKeysRepository;
  promptLogs: PromptLogsRepository;
  prompts: PromptService;
}

export interface GatewayOptions extends RouterOptions {
  documentClient?: DynamoDBDocumentClient;
  log?: Log;
}

export function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Gateway {
  const documentClient = options.documentClient ?? createDocumentClient({ region: config.region, endpoint: config.dynamodbEndpoint });
  const accounts = new AccountsRepository(documentClient, config.tables.accounts);
  const apiKeys = new ApiKeysRepository(documentClient, config.tables.apiKeys);
  const promptLogs = new PromptLogsRepository(documentClient, config.tables.promptLogs);
  const prompts = new PromptService({
    config,
    accounts,
    promptLogs,
    route: createRouter(config, options),
    log: options.log ?? silentLog,
  });
  return { config, documentClient, accounts, apiKeys, promptLogs, prompts };
}
