import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { MAX_BALANCE_MICRO, microToCredits } from '../pricing/micro-credits.js';

/**
 * The store could not be reached or would not answer now: throttling that outlasted the
 * SDK's retries, a network failure or timeout, a 5xx. Worth a 503 with Retry-After, not a
 * 500: the caller may retry, and a request it stops has charged nothing (a reservation
 * whose write did land is released by the reconciler).
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  /** Whether the store said "too many requests", rather than failing or staying silent. */
  readonly throttled: boolean;
  constructor(
    /** The repository operation, e.g. `accounts.reserve`. */
    readonly operation: string,
    cause: unknown,
  ) {
    const code = (cause as { code?: unknown })?.code;
    super(`The store did not complete ${operation}: ${(cause as Error)?.name ?? 'unknown error'}${typeof code === 'string' ? ` (${code})` : ''}`, { cause });
    this.throttled = isThrottling(cause);
  }
}

function isThrottling(error: unknown): boolean {
  return typeof error === 'object' && error !== null && isThrottlingError(error as Parameters<typeof isThrottlingError>[0]);
}

/** The SDK's own classification (the one its retry strategy uses): throttling, transient network or service failures, 5xx. */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const sdkError = error as Parameters<typeof isTransientError>[0];
  return isThrottlingError(sdkError) || isTransientError(sdkError) || isServerError(sdkError);
}

/** Concurrent requests changed the account under every reserve attempt: nothing was held. */
export class AccountContendedError extends Error {
  override name = 'AccountContendedError';
  constructor(readonly accountId: string) {
    super(`The reserve on ${accountId} kept losing to concurrent requests`);
  }
}

/** The write's condition did not hold; the caller decides what that means. */
export class ConditionFailedError extends Error {
  override name = 'ConditionFailedError';
}

export class KeyNotFoundError extends Error {
  override name = 'KeyNotFoundError';
  constructor(options?: { cause?: unknown }) {
    super('No such API key', options);
  }
}

/** A top-up that would take the balance past MAX_BALANCE_MICRO: nothing was added. */
export class BalanceCeilingError extends Error {
  override name = 'BalanceCeilingError';
  constructor(
    readonly accountId: string,
    readonly balanceMicro: number,
  ) {
    super(`The top-up would take the balance of ${accountId} past the most an account holds (${microToCredits(MAX_BALANCE_MICRO)} credits)`);
  }
}
