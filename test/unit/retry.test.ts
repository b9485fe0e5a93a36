import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { UpstreamError, parseRetryAfter } from '../../shared/providers/errors.js';
import { withRetry } from '../../shared/providers/retry.js';

describe('Function: withRetry', () => {
  const retryable = (retryAfterMs?: number) => new UpstreamError('upstream_error', 'busy', { upstreamStatus: 503, retryable: true, retryAfterMs });
  const signal = new AbortController().signal;

  it('stops after three attempts in all', async () => {
    const attempt = vi.fn(async () => {
      throw retryable(0);
    });
    await expect(withRetry(attempt, { deadlineAt: Date.now() + 10_000, signals: [signal] })).rejects.toThrow('busy');
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it('does not retry a 4xx', async () => {
    const attempt = vi.fn(async () => {
      throw new UpstreamError('upstream_error', 'bad', { upstreamStatus: 400 });
    });
    await expect(withRetry(attempt, { deadlineAt: Date.now() + 10_000, signals: [signal] })).rejects.toThrow('bad');
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('gives up rather than wait past the deadline for Retry-After', async () => {
    const attempt = vi.fn(async () => {
      throw retryable(60_000);
    });
    await expect(withRetry(attempt, { deadlineAt: Date.now() + 1_000, signals: [signal] })).rejects.toThrow('busy');
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('waits the Retry-After the vendor sent, then succeeds', async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const promise = withRetry(
        async () => {
          calls++;
          if (calls === 1) throw retryable(2_000);
          return 'ok';
        },
        { deadlineAt: Date.now() + 10_000, signals: [signal] },
      );
      await vi.advanceTimersByTimeAsync(1_999);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      await expect(promise).resolves.toEqual({ value: 'ok', attempts: 2 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('ends a wait when any of its signals aborts, and leaves no listener on them once a wait has passed', async () => {
    const deadline = new AbortController();
    const caller = new AbortController();
    let attempts = 0;
    const busy = async () => {
      attempts++;
      // The second signal (the caller gone) aborts while the first attempt's wait runs.
      if (attempts === 1) setImmediate(() => caller.abort());
      throw new UpstreamError('upstream_overloaded', 'busy', { retryable: true, retryAfterMs: 60_000 });
    };
    await expect(withRetry(busy, { deadlineAt: Date.now() + 120_000, signals: [deadline.signal, caller.signal] })).rejects.toMatchObject({ code: 'timeout' });
    expect(attempts).toBe(1);

    const quiet = [new AbortController().signal, new AbortController().signal];
    let tries = 0;
    const once = async () => {
      if (++tries === 1) throw new UpstreamError('upstream_overloaded', 'busy', { retryable: true, retryAfterMs: 1 });
      return 'ok';
    };
    expect(await withRetry(once, { deadlineAt: Date.now() + 10_000, signals: quiet })).toEqual({ value: 'ok', attempts: 2 });
    for (const signal of quiet) expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('draws full-jitter backoff below the exponential cap', async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const promise = withRetry(
        async () => {
          if (++calls < 3) throw retryable();
          return calls;
        },
        { deadlineAt: Date.now() + 10_000, signals: [signal], random: () => 0.5, policy: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 4_000 } },
      );
      await vi.advanceTimersByTimeAsync(100); // 0.5 x 200
      expect(calls).toBe(2);
      await vi.advanceTimersByTimeAsync(200); // 0.5 x 400
      await expect(promise).resolves.toEqual({ value: 3, attempts: 3 });
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ['2', 2000],
    ['0.5', 500],
    ['Thu, 01 Jan 2026 00:00:03 GMT', 3000],
    ['Thursday, 01-Jan-26 00:00:03 GMT', 3000],
    ['Thu Jan  1 00:00:03 2026', 3000],
    ['soon', undefined],
    [null, undefined],
    // Neither form: the backoff paces the retry (read as numbers or dates, the first would have been no wait at all).
    ['-5', undefined],
    ['0x2', undefined],
    ['1e3', undefined],
    ['2026-01-01T00:00:03Z', undefined],
  ])('parses Retry-After %j', (value, ms) => {
    expect(parseRetryAfter(value, Date.parse('Thu, 01 Jan 2026 00:00:00 GMT'))).toBe(ms);
  });

  it('reads an asctime date, which names no zone, as GMT whatever the machine runs in (HTTP dates are GMT)', () => {
    const zone = process.env.TZ;
    try {
      for (const tz of ['America/New_York', 'Asia/Tokyo']) {
        process.env.TZ = tz;
        // Read in the machine's zone, it had been 5 hours later in New York, and past already in Tokyo.
        for (const date of ['Thu Jan  1 00:00:03 2026', 'Thu Jan 1 00:00:03 2026', 'Thu, 01 Jan 2026 00:00:03', 'Thursday, 01-Jan-26 00:00:03', 'Thu, 01 Jan 2026 00:00:03.000']) {
          expect(parseRetryAfter(date, Date.parse('Thu, 01 Jan 2026 00:00:00 GMT')), `${tz} ${date}`).toBe(3000);
        }
        // A day without a time: its midnight, GMT (already past here: no wait).
        expect(parseRetryAfter('Thu, 01 Jan 2026', Date.parse('Thu, 01 Jan 2026 00:00:00 GMT')), tz).toBe(0);
        expect(parseRetryAfter('Fri, 02 Jan 2026', Date.parse('Thu, 01 Jan 2026 00:00:00 GMT')), tz).toBe(86_400_000);
        // A zone named is kept: an offset, a zone's name, a zone and an offset (each had been read as GMT too, hours off).
        for (const date of ['Thu, 01 Jan 2026 09:00:03 +0900', 'Thu, 01 Jan 2026 09:00:03 +09:00', 'Wed, 31 Dec 2025 19:00:03 EST', 'Thu, 01 Jan 2026 01:00:03 UTC+1']) {
          expect(parseRetryAfter(date, Date.parse('Thu, 01 Jan 2026 00:00:00 GMT')), `${tz} ${date}`).toBe(3000);
        }
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
