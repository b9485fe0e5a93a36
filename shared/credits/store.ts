import type { GatewayConfig } from '../config.js';
import { silentLog, type Log } from '../log.js';
import type { StoreClient } from '../storage/dynamodb.js';
import { createRepositories } from '../storage/store.js';
import { CreditsService } from './credits-service.js';

/**
 * The store's repositories and the credits service over them, without providers or the
 * prompt pipeline: what the reconciler and the admin CLI need (and bundle).
 */
export function createStore(config: GatewayConfig, options: { storeClient?: StoreClient; log?: Log; now?: () => number } = {}) {
  const repositories = createRepositories(config, options);
  return { ...repositories, credits: new CreditsService(repositories.accounts, repositories.ledger, options.log ?? silentLog, options.now) };
}

export type Store = ReturnType<typeof createStore>;
