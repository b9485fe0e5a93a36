import { UpstreamError } from './errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 4_000 };

/**
 * Calls `attempt` until it succeeds, fails with a non-retryable error, runs out of
 * attempts, or the next wait would pass the deadline. Waits are capped exponential with
 * full jitter, or the vendor's Retry-After when it sent one.
 */
export async function withRetry<T>(
  attempt: (n: number) => Promise<T>,
  options: { policy?: RetryPolicy; deadlineAt: number; signal: AbortSignal; random?: () => number },
): Promise<{ value: T; attempts: number }> {
  const policy = options.policy ?? DEFAULT_RETRY;
  const random = options.random ?? Math.random;
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (error) {
      if (!(error instanceof UpstreamError) || !error.retryable || n >= policy.maxAttempts) throw error;
      const backoff = random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
      const wait = error.details.retryAfterMs ?? backoff;
      if (Date.now() + wait >= options.deadlineAt) throw error;
      await sleep(wait, options.signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new UpstreamError('timeout', 'The model did not answer before the request deadline'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new UpstreamError('timeout', 'The model did not answer before the request deadline'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
