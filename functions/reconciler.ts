import { loadConfig } from '../shared/config.js';
import type { CreditsService } from '../shared/credits/credits-service.js';
import { createStore } from '../shared/credits/store.js';
import { lazy } from '../shared/lazy.js';
import { logger } from './logger.js';

/**
 * Scheduled (EventBridge): posts ledger entries a crash left unposted (once POSTING_DELAY_MS
 * old, past any retry of their write); closes reservations
 * older than RESERVATION_TIMEOUT_MS with the settle their request wrote before it crashed,
 * or else releases them. Safe to overlap with itself.
 */
export function createReconciler(credits: () => CreditsService) {
  return async (): Promise<{ accounts: number; posted: number; completed: number; released: number }> => {
    const outcome = await credits().reconcile();
    logger.info('Reconciled', outcome);
    return outcome;
  };
}

export const handler = createReconciler(lazy(() => createStore(loadConfig(), { log: logger }).credits));
