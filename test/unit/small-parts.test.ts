import { notStreamed } from '../support/model-calls.js';
import { describe, expect, it, vi } from 'vitest';
import { bearerKey, generateApiKey, hashApiKey } from '../../shared/auth/keys.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { runModels, type FanOutOptions } from '../../shared/compare/run-models.js';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { creditsToMicro, microToCredits, usdToMicroCredits } from '../../shared/credits/credits.js';
import { estimateMicroCredits } from '../../shared/credits/estimate.js';
import { parseServerTiming, ServerTiming } from '../../shared/http/server-timing.js';
import { ulid } from '../../shared/ids.js';
import { chargedUsd } from '../../shared/pricing/charge.js';
import { providerCost } from '../../shared/pricing/cost.js';
import { UpstreamError, parseRetryAfter } from '../../shared/providers/errors.js';
import { withRetry } from '../../shared/providers/retry.js';
import type { ProtocolAdapter } from '../../shared/providers/types.js';
import { gate } from '../support/gate.js';

describe('Module: keys', () => {
  it('issues distinct keys and stores them as SHA-256 hex', () => {
    const a = generateApiKey();
    expect(a).not.toBe(generateApiKey());
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Bearer', undefined],
    ['Bearer  ', undefined],
    ['Token mcg_aaaaaaaaaaaaaaaaaaaa', undefined],
    ['Bearer mcg_aaaaaaaaaaaaaaaaaaaa extra', undefined],
    ['Bearer short', undefined],
    [`Bearer ${'a'.repeat(257)}`, undefined],
    ['Bearer mcg_aaaaaaaaaaaaaaaaaaaa', 'mcg_aaaaaaaaaaaaaaaaaaaa'],
    ['bearer mcg_aaaaaaaaaaaaaaaaaaaa', 'mcg_aaaaaaaaaaaaaaaaaaaa'],
  ])('reads the key of %j', (header, key) => {
    expect(bearerKey(header)).toBe(key);
  });
});

describe('Function: ulid', () => {
  it('sorts by time and never repeats', () => {
    const early = ulid(1_700_000_000_000);
    const late = ulid(1_700_000_000_001);
    expect(early < late).toBe(true);
    expect(early).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(Array.from({ length: 1000 }, () => ulid(5))).size).toBe(1000);
  });
});

describe('Function: providerCost', () => {
  it('prices each observed token class at its own price', () => {
    const prices = { input: 2.5, cachedInput: 0.25, cacheWrite: 3.125, output: 15, takenOn: '2026-11-22' };
    // 1000 uncached x 2.5 + 200 cached x 0.25 + 100 written x 3.125 + 500 out x 15, per million.
    expect(providerCost(prices, { inputTokens: 1300, cachedInputTokens: 200, cacheWriteTokens: 100, outputTokens: 500, reasoningTokens: 100 })).toBe(0.0103625);
  });

  it('charges cached tokens at the input price when a model has no cache price', () => {
    const prices = { input: 1, cachedInput: null, cacheWrite: null, output: 2, takenOn: '2026-11-22' };
    expect(providerCost(prices, { inputTokens: 10, cachedInputTokens: 10, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 })).toBe(0.00001);
  });

  it('prices a request above the long-context threshold at the long-context rates, all its tokens', () => {
    const prices = {
      input: 2,
      cachedInput: 0.2,
      cacheWrite: null,
      output: 12,
      longContext: { aboveInputTokens: 200_000, input: 4, cachedInput: 0.4, cacheWrite: null, output: 18 },
      takenOn: '2026-11-22',
    };
    const usage = (inputTokens: number) => ({ inputTokens, cachedInputTokens: 100_000, cacheWriteTokens: 0, outputTokens: 1_000, reasoningTokens: 0 });
    // At the threshold: base rates. 100,000 x 2 + 100,000 x 0.2 + 1,000 x 12, per million.
    expect(providerCost(prices, usage(200_000))).toBe(0.232);
    // One token above: every token at the long-context rates. 100,001 x 4 + 100,000 x 0.4 + 1,000 x 18.
    expect(providerCost(prices, usage(200_001))).toBe(0.458004);
  });

  it("prices a call started outside a time-of-day vendor's peak hours at its off-peak rates, and at peak rates without a time", () => {
    const prices = {
      input: 1.32,
      cachedInput: 0.044,
      cacheWrite: null,
      output: 3.96,
      offPeak: {
        peakHoursUtc: [
          [1, 4],
          [6, 10],
        ] as const,
        peakDaysUtc: [1, 2, 3, 4, 5],
        factor: 0.5,
      },
      takenOn: '2026-11-22',
    };
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 500_000, cacheWriteTokens: 0, outputTokens: 1_000_000, reasoningTokens: 0 };
    const peak = 0.66 + 0.022 + 3.96;
    expect(providerCost(prices, usage)).toBe(peak);
    // Monday 2026-11-23.
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 1, 0, 0))).toBe(peak);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 9, 59, 59))).toBe(peak);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 4, 0, 0))).toBe(peak / 2);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 10, 0, 0))).toBe(peak / 2);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 23, 0, 59, 59))).toBe(peak / 2);
    // Friday peak; Saturday and Sunday off-peak all day.
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 27, 2, 0, 0))).toBe(peak);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 28, 2, 0, 0))).toBe(peak / 2);
    expect(providerCost(prices, usage, Date.UTC(2026, 10, 22, 7, 0, 0))).toBe(peak / 2);
  });

  it('prices a catalog model to the last digit', () => {
    const entry = resolveModel('fam_c-5.4')!;
    const usage = { inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 82, reasoningTokens: 0 };
    expect(providerCost(entry.prices, usage)).toBe((7 * entry.prices.input + 82 * entry.prices.output) / 1e6);
  });
});

describe('Module: credits', () => {
  it('converts USD to integer micro-credits with CREDITS_PER_USD and MARKUP', () => {
    expect(usdToMicroCredits(0.0012475, { creditsPerUsd: 100, markup: 1 })).toBe(124_750);
    expect(usdToMicroCredits(0.01, { creditsPerUsd: 100, markup: 1.2 })).toBe(1_200_000);
    expect(microToCredits(124_750)).toBe(0.12475);
    expect(creditsToMicro(50)).toBe(50_000_000);
  });
});

describe('Function: loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, dynamodbPort: 8000, creditsPerUsd: 100, markup: 1, simulateProviders: false, requestDeadlineMs: 25_000 });
    expect(config.providers.openai).toEqual({ apiKey: undefined, baseUrl: undefined });
  });

  it('reads provider keys and base URLs', () => {
    const config = loadConfig({ GROQ_API_KEY: 'k', GROQ_BASE_URL: 'https://example.test/openai/v1/', SIMULATE_PROVIDERS: '1' });
    expect(config.providers.groq).toEqual({ apiKey: 'k', baseUrl: 'https://example.test/openai/v1' });
    expect(config.simulateProviders).toBe(true);
  });

  it.each([
    ['PORT', 'abc'],
    ['MARKUP', '0'],
    ['REQUEST_DEADLINE_MS', '5'],
    ['CREDITS_PER_USD', '-1'],
  ])('rejects %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });
});

describe('Function: withRetry', () => {
  const retryable = (retryAfterMs?: number) => new UpstreamError('upstream_error', 'busy', { upstreamStatus: 503, retryable: true, retryAfterMs });
  const signal = new AbortController().signal;

  it('stops after three attempts in all', async () => {
    const attempt = vi.fn(async () => {
      throw retryable(0);
    });
    await expect(withRetry(attempt, { deadlineAt: Date.now() + 10_000, signal })).rejects.toThrow('busy');
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it('does not retry a 4xx', async () => {
    const attempt = vi.fn(async () => {
      throw new UpstreamError('upstream_error', 'bad', { upstreamStatus: 400 });
    });
    await expect(withRetry(attempt, { deadlineAt: Date.now() + 10_000, signal })).rejects.toThrow('bad');
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('gives up rather than wait past the deadline for Retry-After', async () => {
    const attempt = vi.fn(async () => {
      throw retryable(60_000);
    });
    await expect(withRetry(attempt, { deadlineAt: Date.now() + 1_000, signal })).rejects.toThrow('busy');
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
        { deadlineAt: Date.now() + 10_000, signal },
      );
      await vi.advanceTimersByTimeAsync(1_999);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      await expect(promise).resolves.toEqual({ value: 'ok', attempts: 2 });
    } finally {
      vi.useRealTimers();
    }
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
        { deadlineAt: Date.now() + 10_000, signal, random: () => 0.5, policy: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 4_000 } },
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
    ['soon', undefined],
    [null, undefined],
  ])('parses Retry-After %j', (value, ms) => {
    expect(parseRetryAfter(value, Date.parse('Thu, 01 Jan 2026 00:00:00 GMT'))).toBe(ms);
  });
});

describe('Function: cacheAuthorizer', () => {
  it('reuses an Allow decision for the same Authorization value until the TTL passes, and never caches a refusal', async () => {
    const { cacheAuthorizer } = await import('../../infra/local/server.js');
    const clock = { now: 1_000 };
    let calls = 0;
    let allow = true;
    const authorizer = cacheAuthorizer(
      async () => {
        calls++;
        if (!allow) throw new Error('Unauthorized');
        return { principalId: 'acct', policyDocument: { Version: '2012-10-17', Statement: [] } };
      },
      30_000,
      () => clock.now,
    );
    const event = (token: string) => ({ type: 'TOKEN' as const, authorizationToken: token, methodArn: 'arn' });
    await authorizer(event('Bearer a'));
    await authorizer(event('Bearer a'));
    expect(calls).toBe(1);
    allow = false; // revoked: the cached decision stands until the TTL, as in API Gateway
    clock.now += 29_999;
    await expect(authorizer(event('Bearer a'))).resolves.toMatchObject({ principalId: 'acct' });
    clock.now += 1;
    await expect(authorizer(event('Bearer a'))).rejects.toThrow('Unauthorized');
    await expect(authorizer(event('Bearer b'))).rejects.toThrow('Unauthorized');
    expect(calls).toBe(3);
  });
});

describe('Class: ServerTiming', () => {
  it('answers each phase once it ended, a failed one included, then the total', async () => {
    const timing = new ServerTiming();
    await timing.measure('reserve', async () => 1);
    await expect(timing.measure('models', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const header = timing.header();
    expect(header).toMatch(/^reserve;dur=\d+\.\d, models;dur=\d+\.\d, total;dur=\d+\.\d$/);
    expect(Object.keys(parseServerTiming(header))).toEqual(['reserve', 'models', 'total']);
  });

  it('reads durations back by name, skipping entries without one', () => {
    expect(parseServerTiming('reserve;dur=1.25, cache;desc="hit", models;dur=200, models;dur=9')).toEqual({ reserve: 1.25, models: 200 });
    expect(parseServerTiming(undefined)).toEqual({});
  });
});

describe('Function: estimateMicroCredits with cache breakpoints', () => {
  const RATES = { creditsPerUsd: 100, markup: 1 };
  const request = (system: unknown, prompt: string, history?: unknown) =>
    validatePromptRequest({ prompt, system_prompt: system, ...(history ? { history } : {}), models: ['fam_a-sonnet-4-6'], generation_settings: { maxTokens: 16 } });
  const marked = (text: string) => [{ type: 'text', text, cache_control: { type: 'ephemeral' } }];

  it('prices the prefix up to the last breakpoint at the cache-write price (1.25 times input on Anthropic), and no more', () => {
    const document = 'x'.repeat(40_000); // 10,000 tokens as the estimate counts them
    const plain = estimateMicroCredits(request(document, 'Summarise.'), RATES);
    const cached = estimateMicroCredits(request(marked(document), 'Summarise.'), RATES);
    // 10,000 tokens x (3.75 - 3) USD per million x 100 credits per USD.
    expect(cached - plain).toBe(750_000);
    // A long prompt after a tiny marked block is not written to cache: it stays at the input price.
    const longPrompt = 'y'.repeat(400_000);
    expect(estimateMicroCredits(request(marked('Be brief.'), longPrompt), RATES) - estimateMicroCredits(request('Be brief.', longPrompt), RATES)).toBeLessThan(1_000);
    // A breakpoint in the history covers the system prompt and the turns up to it.
    const history = [
      { role: 'user', content: 'z'.repeat(4_000), cache_control: { type: 'ephemeral' } },
      { role: 'assistant', content: 'w'.repeat(4_000) },
    ];
    const withHistory = estimateMicroCredits(request(document, 'Go on.', history), RATES);
    const withoutMark = estimateMicroCredits(
      request(
        document,
        'Go on.',
        history.map(({ role, content }) => ({ role, content })),
      ),
      RATES,
    );
    expect(withHistory - withoutMark).toBe(Math.round((10_000 + 1_000 + 4) * 0.75 * 100));
  });

  it('reserves a request above a long-context threshold at the long-context rates', () => {
    const long = (models: string[]) =>
      validatePromptRequest({
        prompt: 'x'.repeat(480_000),
        history: [
          { role: 'user', content: 'y'.repeat(480_000) },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'z'.repeat(240_000) },
        ],
        models,
        generation_settings: { maxTokens: 16 },
      });
    // About 300,000 input tokens as the estimate counts them: gpt-5.4 at $5 a million above 272K, not $2.50.
    expect(estimateMicroCredits(long(['fam_c-5.4']), RATES)).toBeGreaterThan(300_000 * 5 * 100);
    expect(estimateMicroCredits(long(['fam_a-sonnet-4-6']), RATES)).toBeLessThan(301_000 * 3 * 100 + 16 * 15 * 100);
  });

  it('counts a token for every character that is not ASCII: Chinese text is about a token a character, not 4 characters a token', () => {
    const estimate = (text: string) => estimateMicroCredits(validatePromptRequest({ prompt: `Q${text}`, models: ['fam_c-5.4'], generation_settings: { maxTokens: 16 } }), RATES);
    const base = estimate('123');
    // 400 ASCII characters: 100 tokens; 400 Chinese characters: 400 tokens (at $2.50 a million, 100 credits a USD).
    // Q + 3 ASCII characters is one token; Q + 403 ASCII characters is 101, Q + 3 ASCII + 400 Chinese 401.
    expect(estimate(`123${'a'.repeat(400)}`) - base).toBe(100 * 2.5 * 100);
    expect(estimate(`123${'文'.repeat(400)}`) - base).toBe(400 * 2.5 * 100);
    // 480,000 Chinese characters (under the 500,000-character prompt limit) are above gpt-5.4's 272K long-context threshold.
    expect(estimate('文'.repeat(480_000))).toBeGreaterThan(480_000 * 5 * 100);
  });

  it('leaves models whose cache writes cost no more than input at the input price', () => {
    const body = (system: unknown) => validatePromptRequest({ prompt: 'Hi.', system_prompt: system, models: ['fam_c-5.4'] });
    expect(estimateMicroCredits(body(marked('x'.repeat(40_000))), RATES)).toBe(estimateMicroCredits(body('x'.repeat(40_000)), RATES));
  });
});

/** Runs "Hi." on `models`, every call through `adapter`, with the deadline 60 s away unless `options` says otherwise. */
function runThrough(models: string[], adapter: Pick<ProtocolAdapter, 'send'> & Partial<Pick<ProtocolAdapter, 'stream'>>, options: Partial<FanOutOptions> = {}) {
  return runModels(validatePromptRequest({ prompt: 'Hi.', models }), {
    route: () => ({ adapter: { stream: notStreamed, ...adapter }, endpoint: { baseUrl: 'http://unused', apiKey: 'k' } as never }),
    deadlineAt: Date.now() + 60_000,
    ...options,
  });
}

describe('Function: runModels, time-of-day pricing', () => {
  it('prices a DeepSeek call by when its answering attempt began, not its first', async () => {
    // Monday 2026-11-23: the first attempt at 03:59:59 (peak) is refused; the retry at 04:00:00 (off-peak) answers.
    const clock = vi.spyOn(Date, 'now');
    let now = Date.UTC(2026, 10, 23, 3, 59, 59);
    clock.mockImplementation(() => now);
    const usage = { inputTokens: 100_000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 8_000, reasoningTokens: 0 };
    let attempts = 0;
    const adapter = {
      send: async () => {
        attempts++;
        if (attempts === 1) {
          now = Date.UTC(2026, 10, 23, 4, 0, 0);
          throw new UpstreamError('rate_limited', 'slow down', { upstreamStatus: 429, retryable: true });
        }
        return { output: 'ok', usage, warnings: [] };
      },
    };
    try {
      const [result] = await runThrough(['fam_f-v4-pro'], adapter, { deadlineAt: now + 60_000, retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 } });
      expect(attempts).toBe(2);
      // Off-peak: half of 0.132 + 0.03168 USD (1.32 and 3.96 USD per million at peak).
      expect(result!.providerCost).toBe(0.08184);
    } finally {
      clock.mockRestore();
    }
  });
});

describe('Function: runModels, one deadline signal', () => {
  it('gives every model the same signal, aborted at the deadline, without a listener-leak warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const signals = new Set<AbortSignal>();
    const adapter = {
      // Each call listens for the abort, as node:http does, and fails when it fires.
      send: (_call: unknown, _endpoint: unknown, signal: AbortSignal) =>
        new Promise<never>((_resolve, reject) => {
          signals.add(signal);
          signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'deadline')), { once: true });
        }),
    };
    try {
      const models = [
        'fam_c-5.4',
        'fam_a-opus-4-7',
        'fam_b-3.1-pro',
        'fam_d-4.3',
        'fam_e-glm-4.7',
        'fam_f-v4-pro',
        'fam_g-large',
        'fam_h-pro',
        'fam_i-gpt-oss-120b',
        'fam_c-4o',
        'fam_a-haiku-4-5',
        'fam_f-v4-flash',
      ];
      const results = await runThrough(models, adapter, { deadlineAt: Date.now() + 20 });
      expect(results.map((r) => r.error?.code)).toEqual(models.map(() => 'timeout'));
      expect(signals.size).toBe(1);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('Function: runModels, sent once ready', () => {
  const MODELS = ['fam_k-8b', 'fam_h-micro', 'fam_a-haiku-4-5'];
  const usage = { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 };

  it('prepares every call at once, sends none before `ready` resolves, and times each from then', async () => {
    let clock = 1_000;
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const prepared: string[] = [];
    const sent: string[] = [];
    const adapter = {
      send: async (call: { entry: { id: string } }, _endpoint: unknown, _signal: AbortSignal, ready?: Promise<void>) => {
        prepared.push(call.entry.id);
        await ready;
        sent.push(call.entry.id);
        clock += 20;
        return { output: 'ok', usage, warnings: [] };
      },
    };
    const ready = gate();
    try {
      const running = runThrough(MODELS, adapter, { ready: ready.opened });
      await new Promise((resolve) => setImmediate(resolve));
      expect(prepared).toEqual(MODELS);
      expect(sent).toEqual([]);
      // The reserve took 500 ms: not the models' latency.
      clock += 500;
      ready.open();
      const results = await running;
      expect(sent).toEqual(MODELS);
      expect(results.map((r) => r.status)).toEqual(MODELS.map(() => 'completed'));
      // The three answered within 60 ms of the opening (20 ms each, one after the other), not 560 ms of the start.
      expect(Math.max(...results.map((r) => r.latencyMs))).toBeLessThanOrEqual(60);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('sends nothing and retries nothing when `ready` rejects: every call fails on an aborted signal', async () => {
    const attempts: string[] = [];
    const signals: AbortSignal[] = [];
    const adapter = {
      send: async (call: { entry: { id: string } }, _endpoint: unknown, signal: AbortSignal, ready?: Promise<void>) => {
        attempts.push(call.entry.id);
        signals.push(signal);
        // Failing in a way withRetry would retry, were the signal not aborted first.
        await ready?.catch(() => {
          throw new UpstreamError('upstream_unreachable', 'not sent', { retryable: true });
        });
        throw new Error('sent although not ready');
      },
    };
    const results = await runThrough(MODELS, adapter, {
      retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
      ready: Promise.reject(new Error('402: not reserved')),
    });
    expect(results.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    expect(attempts).toEqual(MODELS);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
  });
});

describe('Function: runModels, streamed (an event-stream caller)', () => {
  const usage = { inputTokens: 1_000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 500, reasoningTokens: 0 };
  const reply = (output: string) => ({ output, usage, warnings: [] });

  it("streams through the adapter's stream() when it has one, each piece as it comes", async () => {
    const heard: string[] = [];
    const adapter = {
      send: async () => Promise.reject(new Error('send must not be called when streaming')),
      stream: async (_call: unknown, _endpoint: unknown, _signal: AbortSignal, onDelta: (text: string) => void) => {
        onDelta('Hel');
        onDelta('');
        onDelta('lo!');
        return reply('Hello!');
      },
    };
    await runThrough(['fam_c-5.4'], adapter, { onDelta: (_index, text) => heard.push(text) });
    expect(heard).toEqual(['Hel', 'lo!']);
  });

  it('does not retry an attempt that failed after some of its text went out', async () => {
    let attempts = 0;
    const adapter = {
      send: async () => reply('unused'),
      stream: async (_call: unknown, _endpoint: unknown, _signal: AbortSignal, onDelta: (text: string) => void) => {
        attempts++;
        onDelta('Hel');
        throw new UpstreamError('upstream_overloaded', 'Overloaded', { upstreamStatus: 529, retryable: true });
      },
    };
    const [result] = await runThrough(['fam_c-5.4'], adapter, { onDelta: () => undefined, retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 } });
    expect(attempts).toBe(1);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'upstream_overloaded' } });
  });

  it('charges a call its caller cancelled the partial usage the vendor reported, and the estimate where none arrived', async () => {
    const caller = new AbortController();
    const stopped = (partialUsage: typeof usage | undefined) => ({
      send: async () => reply('unused'),
      stream: (_call: unknown, _endpoint: unknown, signal: AbortSignal, onDelta: (text: string) => void) =>
        new Promise<never>((_resolve, reject) => {
          onDelta('Hel');
          const stop = () => reject(new UpstreamError('timeout', 'aborted', { partial: { output: 'Hel', ...(partialUsage ? { usage: partialUsage } : {}) } }));
          if (signal.aborted) stop();
          signal.addEventListener('abort', stop);
          caller.abort();
        }),
    });
    const [observed] = await runThrough(['fam_c-5.4'], stopped(usage), { onDelta: () => undefined, signal: caller.signal });
    expect(observed).toMatchObject({ status: 'cancelled', output: '', tokensIn: 1_000, tokensOut: 500, error: { code: 'cancelled' } });
    expect(observed!.providerCost).toBeGreaterThan(0);

    const [estimated] = await runThrough(['fam_c-5.4'], stopped(undefined), { onDelta: () => undefined, signal: caller.signal });
    expect(estimated).toMatchObject({ status: 'cancelled', providerCost: null, estimatedCost: expect.any(Number) });
    expect(estimated!.estimatedCost).toBeGreaterThan(0);
    // Charged like a completed call; a failed one costs nothing.
    expect(chargedUsd([observed!, estimated!]).usd).toBe(observed!.providerCost! + estimated!.estimatedCost!);
    expect(chargedUsd([{ status: 'failed', providerCost: 0 }]).usd).toBe(0);
  });
});
