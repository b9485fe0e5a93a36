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
 * full jitter, or the vendor's Retry-After when it sent one. A wait ends, failing the call,
 * when any of `signals` aborts (a list, not one AbortSignal.any: that costs about 8 µs a call,
 * and a request of 32 models makes 32 calls right after its reserve, most of them never waiting).
 */
export async function withRetry<T>(
  attempt: (n: number) => Promise<T>,
  options: { policy?: RetryPolicy; deadlineAt: number; signals: readonly AbortSignal[]; random?: () => number },
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
      await sleep(wait, options.signals);
    }
  }
}

function sleep(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signals.some((signal) => signal.aborted)) return reject(new UpstreamError('timeout', 'The model did not answer before the request deadline'));
    const stopListening = () => {
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
    };
    const timer = setTimeout(() => {
      stopListening();
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      stopListening();
      reject(new UpstreamError('timeout', 'The model did not answer before the request deadline'));
    };
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
  });
}
