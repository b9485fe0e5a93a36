import { loadConfig } from '../shared/config.js';
import type { CreditsService, ReconcileOutcome } from '../shared/credits/credits-service.js';
import { createStore } from '../shared/credits/store.js';
import { lazy } from '../shared/lazy.js';
import { logger } from './logger.js';

/**
 * Scheduled (EventBridge): posts ledger entries a crash left unposted (once POSTING_DELAY_MS
 * old, past any late attempt of their write); closes reservations
 * older than RESERVATION_TIMEOUT_MS with the settle their request wrote before it crashed,
 * or else releases them; drops closed requests' IDs past CLOSED_KEPT_MS. Safe to overlap with itself. An account whose writes fail does not
 * stop the others; the invocation then fails after them all.
 */
export function createReconciler(credits: () => CreditsService) {
  return async (): Promise<ReconcileOutcome> => {
    const outcome = await credits().reconcile();
    logger.info('Reconciled', outcome);
    // Every other account was reconciled; the invocation still fails, so that the function's errors show it.
    if (outcome.failed > 0)
      throw new Error(`Reconcile failed for ${outcome.failed} of ${outcome.accounts} accounts (${(outcome.failedAccounts ?? []).join(', ')}); the next run tries again`);
    return outcome;
  };
}

export const handler = createReconciler(lazy(() => createStore(loadConfig(), { log: logger }).credits));
