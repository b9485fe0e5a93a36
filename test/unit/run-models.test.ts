import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import { runModels, type FanOutOptions } from '../../shared/compare/run-models.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { chargeCall, chargedUsd } from '../../shared/pricing/charge.js';
import { UpstreamError, type PartialReply } from '../../shared/providers/errors.js';
import type { ModelReply, ProtocolAdapter } from '../../shared/providers/types.js';
import { gate } from '../support/gate.js';
import { fakeAdapter, type FakeVendor } from '../support/model-calls.js';
import { planCall } from '../../shared/compare/model-call.js';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import { providerCost } from '../../shared/pricing/cost.js';
import { fromMessagesResponse } from '../../shared/providers/anthropic-messages/response.js';
import { fromConverseResponse } from '../../shared/providers/bedrock-converse/response.js';
import { fromGenerateContentResponse } from '../../shared/providers/gemini-generate-content/response.js';
import { dialectFor } from '../../shared/providers/openai-chat/dialects.js';
import { fromChatResponse } from '../../shared/providers/openai-chat/response.js';

/** Runs "Hi." on `models`, every call through `adapter` (or a fake vendor) with `apiKey`, with the deadline 60 s away unless `options` says otherwise. */
function runThrough(models: string[], adapter: FakeVendor | Pick<ProtocolAdapter, 'prepare' | 'loading'>, options: Partial<FanOutOptions> = {}, apiKey = 'k') {
  const request = validatePromptRequest({ prompt: 'Hi.', models });
  const prepared = 'prepare' in adapter ? adapter : fakeAdapter(adapter);
  return runModels(
    request.models.map((model) => planCall(request, model)),
    {
      route: () => ({ adapter: prepared, endpoint: { baseUrl: 'http://unused', apiKey, simulated: false } }),
      deadlineAt: Date.now() + 60_000,
      ...options,
    },
  );
}

describe('Function: runModels, time-of-day pricing', () => {
  it('prices a DeepSeek call by when its answering attempt began, not its first', async () => {
    // Monday 2026-11-23: the first attempt at 03:59:59 (peak) is refused; the retry at 04:00:00 (off-peak) answers.
    const clock = vi.spyOn(Date, 'now');
    let now = Date.UTC(2026, 10, 23, 3, 59, 59);
    clock.mockImplementation(() => now);
    const usage = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 8_000, reasoningTokens: 0 };
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
      // Off-peak: half of 0.000132 + 0.03168 USD (1.32 and 3.96 USD per million at peak).
      expect(result!.providerCost).toBe(0.015906);
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

describe("Function: runModels, a call the request's deadline stopped", () => {
  const usage = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  /** A vendor that holds each attempt until the deadline stops it, then fails as node:http does, with `partial` where a stream had one. */
  const holdsUntilStopped = (partial?: PartialReply) => ({
    send: (_call: unknown, _endpoint: unknown, signal: AbortSignal) =>
      new Promise<never>((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'The model did not answer before the request deadline', partial ? { partial } : {})), {
          once: true,
        });
      }),
  });

  it('charges a whole answer stopped at its vendor the estimate of its input, failed with timeout, and says why', async () => {
    const [result] = await runThrough(['fam_c-5.4'], holdsUntilStopped(), { deadlineAt: Date.now() + 20 });
    expect(result).toMatchObject({ status: 'failed', output: '', tokensIn: 0, tokensOut: 0, providerCost: null, error: { code: 'timeout' } });
    // What the vendor read, estimated from the text: the same estimate a call without usage and without output is charged.
    const request = validatePromptRequest({ prompt: 'Hi.', models: ['fam_c-5.4'] });
    const expected = chargeCall(planCall(request, request.models[0]!).call, undefined, '', Date.now());
    expect(expected.kind).toBe('estimated');
    expect(result!.estimatedCost).toBe(expected.kind === 'estimated' ? expected.estimatedCost : Number.NaN);
    expect(result!.estimatedCost).toBeGreaterThan(0);
    expect(result!.warnings?.join(' ')).toMatch(/Cost unavailable: the request's deadline stopped the call before its vendor reported usage/);
    expect(chargedUsd([result!]).usd).toBe(result!.estimatedCost);
  });

  it('charges a stream stopped before any text the usage its vendor had reported (its input)', async () => {
    const [result] = await runThrough(
      ['fam_c-5.4'],
      { ...holdsUntilStopped({ output: '', usage }), stream: holdsUntilStopped({ output: '', usage }).send },
      {
        deadlineAt: Date.now() + 20,
        onDelta: () => undefined,
      },
    );
    expect(result).toMatchObject({ status: 'failed', tokensIn: 100, tokensOut: 0, error: { code: 'timeout' } });
    expect(result!.providerCost).toBe(providerCost(resolveModel('fam_c-5.4')!.prices, usage));
    expect(result!.providerCost).toBeGreaterThan(0);
  });

  it('says the deadline stopped a stream whose text had gone out, when its vendor had reported no usage', async () => {
    const [result] = await runThrough(
      ['fam_c-5.4'],
      {
        ...holdsUntilStopped(),
        stream: (call, endpoint, signal, onDelta) => {
          onDelta('Partial answer');
          return holdsUntilStopped({ output: 'Partial answer' }).send(call, endpoint, signal);
        },
      },
      { deadlineAt: Date.now() + 20, onDelta: () => undefined },
    );
    expect(result).toMatchObject({ status: 'failed', providerCost: null, error: { code: 'timeout' } });
    // It had said "the vendor sent no usable usage", as of a call that completed.
    expect(result!.warnings?.join(' ')).toMatch(/Cost unavailable: the request's deadline stopped the call before its vendor reported usage/);
  });

  it('sends nothing, and charges nothing, where the deadline has passed before the attempt (its timer not fired yet)', async () => {
    let sent = 0;
    const [result] = await runThrough(
      ['fam_c-5.4'],
      {
        send: async () => {
          sent++;
          return { output: 'late', usage, warnings: [] };
        },
      },
      { deadlineAt: Date.now() - 1 },
    );
    expect(sent).toBe(0);
    expect(result).toMatchObject({ status: 'failed', providerCost: 0, tokensIn: 0, error: { code: 'timeout' } });
    expect(result!.estimatedCost).toBeUndefined();
  });

  it('charges nothing for a call stopped by the deadline before its request reached the vendor (its connection not made)', async () => {
    const adapter = {
      send: (_call: unknown, _endpoint: unknown, signal: AbortSignal) =>
        new Promise<never>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'The model did not answer before the request deadline', { unbilled: true })), { once: true });
        }),
    };
    const [result] = await runThrough(['fam_c-5.4'], adapter, { deadlineAt: Date.now() + 20 });
    expect(result).toMatchObject({ status: 'failed', providerCost: 0, tokensIn: 0, error: { code: 'timeout' } });
    expect(result!.estimatedCost).toBeUndefined();
  });

  it('charges nothing for a call its caller cancelled before its request reached the vendor', async () => {
    const caller = new AbortController();
    const adapter = {
      send: async () => Promise.reject(new Error('send must not be called when streaming')),
      stream: (_call: unknown, _endpoint: unknown, signal: AbortSignal) =>
        new Promise<never>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'aborted', { unbilled: true })), { once: true });
          setImmediate(() => caller.abort());
        }),
    };
    const [result] = await runThrough(['fam_c-5.4'], adapter, { onDelta: () => undefined, signal: caller.signal, disconnectGraceMs: 0 });
    expect(result).toMatchObject({ status: 'cancelled', providerCost: 0, error: { code: 'cancelled' } });
    expect(result!.estimatedCost).toBeUndefined();
  });

  it('charges nothing for a call whose retry would wait past the deadline: no attempt is at the vendor when it fails', async () => {
    let attempts = 0;
    const adapter = {
      send: async () => {
        attempts++;
        throw new UpstreamError('upstream_rate_limited', 'slow down', { upstreamStatus: 429, retryable: true, retryAfterMs: 60_000 });
      },
    };
    const [result] = await runThrough(['fam_c-5.4'], adapter, { deadlineAt: Date.now() + 50, retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 } });
    expect(attempts).toBe(1);
    expect(result).toMatchObject({ status: 'failed', providerCost: 0, tokensIn: 0 });
    expect(result!.estimatedCost).toBeUndefined();
  });
});

describe('Function: runModels, sent once ready', () => {
  const MODELS = ['fam_k-8b', 'fam_h-micro', 'fam_a-haiku-4-5'];
  const usage = { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 };

  /** An adapter that records which calls it prepared and which it sent, each send answered by `answer`. */
  function recording(answer: () => Promise<ModelReply>) {
    const prepared: string[] = [];
    const sent: string[] = [];
    const adapter: Pick<ProtocolAdapter, 'prepare'> = {
      prepare: (call) => {
        prepared.push(call.entry.id);
        return {
          send: () => {
            sent.push(call.entry.id);
            return answer();
          },
        };
      },
    };
    return { adapter, prepared, sent };
  }

  const SIX = ['fam_k-8b', 'fam_h-micro', 'fam_a-haiku-4-5', 'fam_c-5.4', 'fam_g-small', 'fam_l'];

  /** An adapter each prepare of which takes 5 ms by the (mocked) clock, over the 8 ms slice after two, recorded in `events`. */
  function slowPreparing() {
    let clock = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const events: string[] = [];
    const adapter: Pick<ProtocolAdapter, 'prepare'> = {
      prepare: (call) => {
        clock += 5;
        events.push(`prepare ${call.entry.id}`);
        return { send: async () => ({ output: 'ok', usage, warnings: [] }) };
      },
    };
    return { adapter, events };
  }

  /** Every call completed, prepared in its order, and the other request ran between two preparations. */
  function expectPreparedInTurns(results: { status: string }[], events: string[]) {
    expect(results.map((r) => r.status)).toEqual(SIX.map(() => 'completed'));
    const other = events.indexOf('another request');
    expect(other).toBeGreaterThan(0);
    expect(other).toBeLessThan(events.length - 1);
    // The calls are still prepared in their order.
    expect(events.filter((e) => e !== 'another request')).toEqual(SIX.map((id) => `prepare ${id}`));
  }

  it('prepares calls that take long (a 5 MiB prompt each) over several turns of the event loop, so that other work runs between them', async () => {
    const { adapter, events } = slowPreparing();
    setImmediate(() => events.push('another request'));
    const results = await runThrough(SIX, adapter);
    vi.restoreAllMocks();

    expectPreparedInTurns(results, events);
  });

  it('prepares calls that take long in turns too when they are prepared once `ready` resolves (`prepareOnceReady`)', async () => {
    const { adapter, events } = slowPreparing();
    const ready = gate();
    const running = runThrough(SIX, adapter, { ready: ready.opened, prepareOnceReady: true });
    await new Promise((resolve) => setImmediate(resolve));
    setImmediate(() => events.push('another request'));
    ready.open();
    const results = await running;
    vi.restoreAllMocks();

    expectPreparedInTurns(results, events);
  });

  it("prepares a process's first calls in turns too, when their adapter's code is still loading", async () => {
    let clock = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const events: string[] = [];
    let loaded = false;
    const load = new Promise<void>((resolve) => setTimeout(resolve, 1)).then(() => {
      loaded = true;
    });
    // As shared/providers/adapters.ts does: a call prepared while the code loads is prepared once it has loaded.
    const adapter: Pick<ProtocolAdapter, 'prepare' | 'loading'> = {
      loading: () => (loaded ? undefined : load),
      prepare: (call) => {
        const work = () => {
          clock += 5;
          events.push(`prepare ${call.entry.id}`);
        };
        if (loaded) work();
        else void load.then(work);
        return { send: async () => ({ output: 'ok', usage, warnings: [] }) };
      },
    };
    void load.then(() => setImmediate(() => events.push('another request')));
    const models = SIX;
    await runThrough(models, adapter);
    vi.restoreAllMocks();

    const other = events.indexOf('another request');
    expect(other).toBeGreaterThan(0);
    expect(other).toBeLessThan(events.length - 1);
  });

  it('prepares every call at once, sends none before `ready` resolves, and times each from then', async () => {
    let clock = 1_000;
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const { adapter, prepared, sent } = recording(async () => {
      clock += 20;
      return { output: 'ok', usage, warnings: [] };
    });
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

  it('sends nothing and retries nothing when `ready` rejects: every call fails', async () => {
    const { adapter, prepared, sent: attempts } = recording(() => Promise.reject(new UpstreamError('upstream_unreachable', 'sent although not ready', { retryable: true })));
    const results = await runThrough(MODELS, adapter, {
      retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
      ready: Promise.reject(new Error('402: not reserved')),
    });
    expect(results.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    expect(prepared).toEqual(MODELS);
    expect(attempts).toEqual([]);
  });

  it('with `prepareOnceReady`, prepares nothing while `ready` is awaited, and nothing at all when it rejects', async () => {
    const { adapter, prepared, sent } = recording(async () => ({ output: 'ok', usage, warnings: [] }));
    const ready = gate();
    const running = runThrough(MODELS, adapter, { ready: ready.opened, prepareOnceReady: true });
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(prepared).toEqual([]);
    ready.open();
    expect((await running).map((r) => r.status)).toEqual(MODELS.map(() => 'completed'));
    expect(prepared).toEqual(MODELS);
    expect(sent).toEqual(MODELS);

    // The caller gone while the reserve was in flight: nothing prepared, every call cancelled, free.
    const left = recording(async () => ({ output: 'ok', usage, warnings: [] }));
    const caller = new AbortController();
    const waiting = gate();
    const gone = runThrough(MODELS, left.adapter, { ready: waiting.opened, prepareOnceReady: true, onDelta: () => undefined, signal: caller.signal, disconnectGraceMs: 0 });
    caller.abort();
    waiting.open();
    expect((await gone).map((r) => [r.status, r.providerCost])).toEqual(MODELS.map(() => ['cancelled', 0]));
    expect(left.prepared).toEqual([]);

    const refused = recording(async () => ({ output: 'ok', usage, warnings: [] }));
    const results = await runThrough(MODELS, refused.adapter, { ready: Promise.reject(new Error('402: not reserved')), prepareOnceReady: true });
    expect(results.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    expect(refused.prepared).toEqual([]);
  });
});

describe('Function: runModels, streamed (an event-stream caller)', () => {
  const usage = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 500, reasoningTokens: 0 };
  const reply = (output: string) => ({ output, usage, warnings: [] });
  /** A vendor that streams 'Hel', whose caller then leaves, and that ends only when stopped, with `partial`. */
  const leftAfterHel = (caller: AbortController, partial: PartialReply) => ({
    send: async () => reply('unused'),
    stream: (_call: unknown, _endpoint: unknown, signal: AbortSignal, onDelta: (text: string) => void) =>
      new Promise<never>((_resolve, reject) => {
        onDelta('Hel');
        signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'aborted', { partial })));
        caller.abort();
      }),
  });

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

  it('sends a streamed reply whose text came only at its end (a refusal) as one delta, so that the deltas joined are its output', async () => {
    const heard: string[] = [];
    const adapter = {
      send: async () => Promise.reject(new Error('send must not be called when streaming')),
      stream: async () => reply("I'm sorry, I can't help with that."),
    };
    const [result] = await runThrough(['fam_c-5.4'], adapter, { onDelta: (_index, text) => heard.push(text) });
    expect(heard.join('')).toBe("I'm sorry, I can't help with that.");
    expect(result!.output).toBe(heard.join(''));
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
    let caller = new AbortController();
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
    const [observed] = await runThrough(['fam_c-5.4'], stopped(usage), { onDelta: () => undefined, signal: caller.signal, disconnectGraceMs: 0 });
    expect(observed).toMatchObject({ status: 'cancelled', output: '', tokensIn: 100, tokensOut: 500, error: { code: 'cancelled' } });
    expect(observed!.providerCost).toBeGreaterThan(0);

    caller = new AbortController();
    const [estimated] = await runThrough(['fam_c-5.4'], stopped(undefined), { onDelta: () => undefined, signal: caller.signal, disconnectGraceMs: 0 });
    expect(estimated).toMatchObject({ status: 'cancelled', providerCost: null, estimatedCost: expect.any(Number) });
    expect(estimated!.estimatedCost).toBeGreaterThan(0);
    // The estimate says why: the caller left, not a vendor that sent no usage.
    expect(estimated!.warnings?.join(' ')).toMatch(/^Cost unavailable: the caller disconnected and the call was stopped before its vendor reported usage/);
    // Charged like a completed call; a failed one costs nothing.
    expect(chargedUsd([observed!, estimated!]).usd).toBe(observed!.providerCost! + estimated!.estimatedCost!);
    expect(chargedUsd([{ status: 'failed', providerCost: 0 }]).usd).toBe(0);
  });

  it('charges a stopped call without usage the input its vendor reported and the reasoning it streamed, where its text says less', async () => {
    const caller = new AbortController();
    const vendor = leftAfterHel(caller, { output: 'Hel', hints: { inputTokens: 3_000, unseenOutputTokens: 400 } });
    const [result] = await runThrough(['fam_c-5.4'], vendor, { onDelta: () => undefined, signal: caller.signal, disconnectGraceMs: 0 });
    expect(result).toMatchObject({ status: 'cancelled', providerCost: null });
    const request = validatePromptRequest({ prompt: 'Hi.', models: ['fam_c-5.4'] });
    const { call } = planCall(request, request.models[0]!);
    const estimate = (hints = {}) => (chargeCall(call, undefined, 'Hel', Date.now(), hints) as { estimatedCost: number }).estimatedCost;
    // The input its vendor reported (up to what the call's text can count) and 400 tokens of reasoning beside 'Hel'.
    expect(result!.estimatedCost).toBe(estimate({ inputTokens: 3_000, unseenOutputTokens: 400 }));
    expect(result!.estimatedCost).toBeGreaterThan(estimate() + (400 * resolveModel('fam_c-5.4')!.prices.output) / 1e6 - 1e-12);
  });

  it('charges a streamed call that broke off after its text went out what it had used, failed; one that broke off before, nothing', async () => {
    // The vendor streams some text, then an error event (overloaded), with or without a usage block by then.
    const breaksOff = (text: string, partialUsage?: typeof usage) => ({
      send: async () => reply('unused'),
      stream: async (_call: unknown, _endpoint: unknown, _signal: AbortSignal, onDelta: (text: string) => void): Promise<never> => {
        if (text) onDelta(text);
        throw new UpstreamError('upstream_overloaded', 'Overloaded', { partial: { output: text, ...(partialUsage ? { usage: partialUsage } : {}) } });
      },
    });
    const deltas: string[] = [];
    const streaming = { onDelta: (_index: number, text: string) => void deltas.push(text), retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };

    const [observed] = await runThrough(['fam_c-5.4'], breaksOff('A long answer, cut off', usage), streaming);
    const [estimated] = await runThrough(['fam_c-5.4'], breaksOff('A long answer, cut off'), streaming);
    const [silent] = await runThrough(['fam_c-5.4'], breaksOff(''), streaming);

    expect(deltas).toEqual(['A long answer, cut off', 'A long answer, cut off']);
    expect(observed).toMatchObject({ status: 'failed', output: '', tokensIn: 100, tokensOut: 500, error: { code: 'upstream_overloaded' } });
    expect(observed!.providerCost).toBeGreaterThan(0);
    expect(estimated).toMatchObject({ status: 'failed', providerCost: null, estimatedCost: expect.any(Number) });
    expect(estimated!.estimatedCost).toBeGreaterThan(0);
    expect(silent).toMatchObject({ status: 'failed', providerCost: 0 });
    expect(chargedUsd([observed!, estimated!, silent!]).usd).toBe(observed!.providerCost! + estimated!.estimatedCost!);
  });

  it('lets a call whose vendor ends just after its caller left end, forwarding nothing more, charged its final usage (hidden reasoning included)', async () => {
    // OpenAI Responses and xAI report usage only in their final event: the caller leaves once the whole text is out.
    const caller = new AbortController();
    const final = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1_500, reasoningTokens: 1_400 };
    const vendor = {
      send: async () => reply('unused'),
      stream: async (_call: unknown, _endpoint: unknown, signal: AbortSignal, onDelta: (text: string) => void) => {
        onDelta('The whole answer');
        caller.abort();
        onDelta('.');
        // The final event is read on a later turn of the event loop: a call stopped at once never gets it.
        await new Promise((resolve) => setImmediate(resolve));
        if (signal.aborted) throw new UpstreamError('timeout', 'aborted', { partial: { output: 'The whole answer.' } });
        return { output: 'The whole answer.', usage: final, warnings: [] };
      },
    };
    const forwarded: string[] = [];
    const [result] = await runThrough(['fam_c-5.4'], vendor, { onDelta: (_index, text) => void forwarded.push(text), signal: caller.signal });
    expect(forwarded).toEqual(['The whole answer']);
    expect(result).toMatchObject({ status: 'completed', output: 'The whole answer.', tokensIn: 100, tokensOut: 1_500, usage: { reasoningTokensOut: 1_400 } });
    expect(result!.providerCost).toBe(providerCost(resolveModel('fam_c-5.4')!.prices, final));
  });

  it("stops a call its caller left at the request's deadline when that comes before the grace has passed", async () => {
    const caller = new AbortController();
    const hangs = leftAfterHel(caller, { output: 'Hel' });
    const started = Date.now();
    const [result] = await runThrough(['fam_c-5.4'], hangs, { onDelta: () => undefined, signal: caller.signal, deadlineAt: started + 50 });
    expect(result).toMatchObject({ status: 'cancelled', providerCost: null, estimatedCost: expect.any(Number), error: { code: 'cancelled' } });
  });

  it('charges nothing for a call its caller cancelled while it waited to retry an attempt the vendor refused', async () => {
    // The vendor refuses the first attempt (429, retry in 5 s); the caller leaves during the wait.
    const caller = new AbortController();
    let attempts = 0;
    const refusedThenLeft = {
      send: async () => {
        attempts++;
        // Once this refusal has reached the retry's wait (a macrotask later).
        setTimeout(() => caller.abort(), 0);
        throw new UpstreamError('rate_limited', 'slow down', { upstreamStatus: 429, retryable: true, retryAfterMs: 5_000 });
      },
    };

    const [result] = await runThrough(['fam_c-5.4'], refusedThenLeft, { signal: caller.signal, disconnectGraceMs: 0 });

    expect(attempts).toBe(1);
    expect(result).toMatchObject({ status: 'cancelled', output: '', tokensIn: 0, tokensOut: 0, providerCost: 0, error: { code: 'cancelled' } });
    expect(result!.estimatedCost).toBeUndefined();
    expect(chargedUsd([result!]).usd).toBe(0);
  });
});

describe('Function: runModels, an answer of no text', () => {
  const empty = async (): Promise<ModelReply> => ({
    output: '',
    usage: { inputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
    finishReason: 'stop',
    warnings: [],
  });

  it.each([
    ['whole', {}],
    ['streamed', { onDelta: () => undefined }],
  ])('says so, %s, whatever its protocol, and is charged its usage', async (_name, options) => {
    const [result] = await runThrough(['fam_e-gpt-oss-120b'], { send: empty, stream: empty }, options);
    expect(result).toMatchObject({ status: 'completed', output: '', warnings: ['The model answered without text'] });
    expect(result!.providerCost).toBeGreaterThan(0);
  });

  it('says so of an answer of whitespace only, which it keeps as its output (it had said nothing)', async () => {
    const [result] = await runThrough(['fam_e-gpt-oss-120b'], {
      send: async () => ({ ...(await empty()), output: ' \n\u0085', usage: { inputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1 } }),
    });
    expect(result).toMatchObject({ status: 'completed', output: ' \n\u0085', warnings: ['The model answered without text'] });
  });

  it('says the limit, not this, where the answer ended at maxTokens with no text', async () => {
    const [result] = await runThrough(['fam_e-gpt-oss-120b'], { send: async () => ({ ...(await empty()), finishReason: 'length', cutAtMaxTokens: true }) });
    expect(result!.warnings).not.toContain('The model answered without text');
    expect(result!.warnings!.join(' ')).toContain('maxTokens');
  });
});

describe('Function: runModels, a Gemini answer whose usage cannot be believed', () => {
  const UNSHOWN = 'which its vendor bills and does not show, is not charged';
  const answer = (usageMetadata?: object) => () =>
    fromGenerateContentResponse({ candidates: [{ content: { parts: [{ text: 'Hello there.' }] }, finishReason: 'STOP' }], ...(usageMetadata ? { usageMetadata } : {}) });

  it('charges the thoughts its vendor counted, and does not say they were left out', async () => {
    // A total that disagrees with its parts: the block is not believed, its thoughts count is.
    const [result] = await runThrough(['fam_b-3.1-pro'], {
      send: async () => answer({ promptTokenCount: 20, candidatesTokenCount: 3, thoughtsTokenCount: 2000, totalTokenCount: 2100 })(),
    });
    expect(result!.estimatedCost).toBe(providerCost(resolveModel('fam_b-3.1-pro')!.prices, { inputTokens: 20, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2004 }));
    expect(result!.warnings!.join(' ')).not.toContain(UNSHOWN);
  });

  it('says the thoughts were left out where no count of them came', async () => {
    const [result] = await runThrough(['fam_b-3.1-pro'], { send: async () => answer()() });
    expect(result!.warnings!.join(' ')).toContain(UNSHOWN);
  });
});

describe('Function: runModels, an answer its vendor withheld after generating it, or that held no text to show', () => {
  // Each vendor's answer as its reader maps it: blocked, or without text, with the usage the vendor billed for it.
  type Billed = { inputTokens: number; outputTokens: number; reasoningTokens?: number };
  const withheld: [string, string, () => ModelReply, Billed, ('upstream_blocked' | 'upstream_malformed_response')?][] = [
    [
      'Gemini RECITATION after 2,000 tokens of thinking',
      'fam_b-3.1-pro',
      () =>
        fromGenerateContentResponse({
          candidates: [{ content: { parts: [] }, finishReason: 'RECITATION' }],
          usageMetadata: { promptTokenCount: 20, thoughtsTokenCount: 2_000, totalTokenCount: 2_020 },
        }),
      { inputTokens: 20, outputTokens: 2_000, reasoningTokens: 2_000 },
    ],
    [
      'Bedrock content_filtered',
      'fam_h-pro',
      () =>
        fromConverseResponse(
          {
            output: { message: { role: 'assistant', content: [{ text: '' }] } },
            stopReason: 'content_filtered',
            usage: { inputTokens: 20, outputTokens: 3_000, totalTokens: 3_020 },
          },
          false,
        ),
      { inputTokens: 20, outputTokens: 3_000 },
    ],
    [
      'Bedrock guardrail_intervened',
      'fam_h-pro',
      () =>
        fromConverseResponse({ output: { message: { role: 'assistant', content: [] } }, stopReason: 'guardrail_intervened', usage: { inputTokens: 20, outputTokens: 900 } }, false),
      { inputTokens: 20, outputTokens: 900 },
    ],
    [
      'a chat answer filtered away whole (Mistral content_filter)',
      'fam_g-large',
      () =>
        fromChatResponse(
          { choices: [{ message: { content: null }, finish_reason: 'content_filter' }], usage: { prompt_tokens: 20, completion_tokens: 3_000, total_tokens: 3_020 } },
          dialectFor('mistral'),
        ),
      { inputTokens: 20, outputTokens: 3_000 },
    ],
    [
      'a Gemini prompt blocked, its input counted',
      'fam_b-3.1-pro',
      () => fromGenerateContentResponse({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 20, totalTokenCount: 20 } }),
      { inputTokens: 20, outputTokens: 0, reasoningTokens: 0 },
    ],
    [
      'Gemini LANGUAGE with no text after 900 tokens of thinking',
      'fam_b-3.1-pro',
      () =>
        fromGenerateContentResponse({
          candidates: [{ content: { role: 'model' }, finishReason: 'LANGUAGE' }],
          usageMetadata: { promptTokenCount: 20, thoughtsTokenCount: 900, totalTokenCount: 920 },
        }),
      { inputTokens: 20, outputTokens: 900, reasoningTokens: 900 },
      'upstream_malformed_response',
    ],
    [
      'Bedrock malformed_model_output',
      'fam_h-pro',
      () =>
        fromConverseResponse(
          { output: { message: { role: 'assistant', content: [] } }, stopReason: 'malformed_model_output', usage: { inputTokens: 20, outputTokens: 700, totalTokens: 720 } },
          false,
        ),
      { inputTokens: 20, outputTokens: 700 },
      'upstream_malformed_response',
    ],
    [
      'a chat answer of a tool call and no content (Groq)',
      'fam_j3-32b',
      () =>
        fromChatResponse(
          {
            choices: [{ message: { content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
            usage: { prompt_tokens: 20, completion_tokens: 300, total_tokens: 320 },
          },
          dialectFor('groq'),
        ),
      { inputTokens: 20, outputTokens: 300 },
      'upstream_malformed_response',
    ],
  ];

  it.each(withheld)('%s: fails, charged the usage its vendor billed, its token classes shown', async (_name, model, answer, billed, code = 'upstream_blocked') => {
    const [result] = await runThrough([model], { send: async () => answer() });
    const usage = { cachedInputTokens: 0, cacheWriteTokens: 0, ...billed };
    expect(result).toMatchObject({ status: 'failed', output: '', tokensIn: 20, tokensOut: billed.outputTokens, error: { code } });
    expect(result!.providerCost).toBe(providerCost(resolveModel(model)!.prices, usage));
    // Only the vendor that reports its reasoning apart (Gemini) gets a count of it.
    const reasoning = billed.reasoningTokens === undefined ? {} : { reasoningTokensOut: billed.reasoningTokens };
    expect(result!.usage).toEqual({ cachedTokensIn: 0, cacheWriteTokensIn: 0, ...reasoning });
    expect(chargedUsd([result!]).usd).toBeGreaterThan(0);
  });

  it('charges nothing for a blocked answer whose vendor reported no usage, as before', async () => {
    const [result] = await runThrough(['fam_b-3.1-pro'], { send: async () => fromGenerateContentResponse({ candidates: [{ content: { parts: [] }, finishReason: 'SAFETY' }] }) });
    expect(result).toMatchObject({ status: 'failed', providerCost: 0, error: { code: 'upstream_blocked' } });
    expect(result).not.toHaveProperty('usage');
  });
});

describe('Function: runModels, an answer whose usage block cannot be believed', () => {
  /** What `tokensOut` output tokens and no to 100 input tokens cost on `model`: the estimate lies between (its input is the prompt's, "Hi."). */
  const costs = (model: string, tokensOut: number) =>
    [0, 100].map((inputTokens) =>
      providerCost(resolveModel(model)!.prices, { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: tokensOut, reasoningTokens: 0 }),
    );

  const charged: [string, string, () => ModelReply, 'completed' | 'failed', number][] = [
    [
      'Gemini RECITATION after thinking, its total not the sum of its parts',
      'fam_b-3.1-pro',
      () =>
        fromGenerateContentResponse({
          candidates: [{ content: { parts: [] }, finishReason: 'RECITATION' }],
          usageMetadata: { promptTokenCount: 20, thoughtsTokenCount: 2_000, totalTokenCount: 2_021 },
        }),
      'failed',
      2_000,
    ],
    [
      'Bedrock content_filtered, its output not a count',
      'fam_h-pro',
      () =>
        fromConverseResponse({ output: { message: { role: 'assistant', content: [] } }, stopReason: 'content_filtered', usage: { inputTokens: 20, outputTokens: 'lots' } }, false),
      'failed',
      0,
    ],
    [
      'a chat answer filtered away whole after reasoning, its completion count negative',
      'fam_g-large',
      () =>
        fromChatResponse(
          {
            choices: [{ message: { content: null, reasoning_content: 'step '.repeat(2_000) }, finish_reason: 'content_filter' }],
            usage: { prompt_tokens: 20, completion_tokens: -1, total_tokens: 19 },
          },
          dialectFor('mistral'),
        ),
      'failed',
      2_500,
    ],
    [
      'an Anthropic answer after thinking, its output count not a number',
      'fam_a-opus-4-6',
      () =>
        fromMessagesResponse({
          type: 'message',
          content: [
            { type: 'thinking', thinking: 'step '.repeat(2_000), signature: 's' },
            { type: 'text', text: 'Yes' },
          ],
          stop_reason: 'end_turn',
          usage: { input_tokens: 20, output_tokens: 'lots' },
        }),
      'completed',
      2_500 + 1,
    ],
    [
      'a Gemini answer after thinking, its total not the sum of its parts',
      'fam_b-3.1-pro',
      () =>
        fromGenerateContentResponse({
          candidates: [{ content: { parts: [{ text: 'Yes' }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 1, thoughtsTokenCount: 3_000, totalTokenCount: 999 },
        }),
      'completed',
      3_000 + 1,
    ],
  ];

  it.each([
    ['Gemini, MAX_TOKENS', 'fam_b-3.1-pro', { candidates: [{ content: { parts: [] }, finishReason: 'MAX_TOKENS' }] }],
    ['Anthropic, max_tokens', 'fam_a-opus-4-6', { type: 'message', content: [], stop_reason: 'max_tokens' }],
    ['a chat answer, length', 'fam_g-large', { choices: [{ message: { content: '' }, finish_reason: 'length' }] }],
  ])('%s without usage: charged the output limit it ended at, what its vendor billed, thinking it did not show included', async (_name, model, body) => {
    const request = validatePromptRequest({ prompt: 'Hi.', models: [model] });
    const limit = ADAPTERS[resolveModel(model)!.protocol].sentOutputLimit(planCall(request, request.models[0]!).call);
    const reply = () =>
      model.startsWith('fam_b') ? fromGenerateContentResponse(body) : model.startsWith('fam_a') ? fromMessagesResponse(body) : fromChatResponse(body, dialectFor('mistral'));
    const [result] = await runThrough([model], { send: async () => reply() });
    expect(result).toMatchObject({ status: 'completed', providerCost: null });
    const [least, most] = costs(model, limit);
    expect(result!.estimatedCost).toBeGreaterThanOrEqual(least!);
    expect(result!.estimatedCost).toBeLessThanOrEqual(most!);
  });

  it.each(charged)('%s: charged the estimate with the input and the thinking it showed', async (_name, model, answer, status, tokensOut) => {
    const [result] = await runThrough([model], { send: async () => answer() });
    expect(result).toMatchObject({ status, tokensIn: 0, tokensOut: 0, providerCost: null });
    const [least, most] = costs(model, tokensOut);
    expect(result!.estimatedCost).toBeGreaterThanOrEqual(least!);
    expect(result!.estimatedCost).toBeLessThanOrEqual(most!);
    expect(result!.warnings).toContainEqual(expect.stringMatching(/^Cost unavailable: /));
    expect(chargedUsd([result!]).usd).toBe(result!.estimatedCost);
  });
});

describe("Function: runModels, the request's output budget", () => {
  const usage = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 500, reasoningTokens: 0 };
  const MODELS = ['fam_c-5.4', 'fam_a-sonnet-4-6', 'fam_b-3.1-pro'];
  const CUT = /^The output was cut at its part of the gateway's limit of \d+ bytes of output a request \(every model together: a share of half of it for each model/;

  it("cuts the whole answers that pass it, each keeping its call's share, each charged all the vendor billed", async () => {
    const adapter = { send: async () => ({ output: 'x'.repeat(40), usage, warnings: [] }) };
    // 100 bytes, 4 calls: 12 each held for it, 52 free (the first takes 28 of them, the second the other 24).
    const results = await runThrough([...MODELS, 'fam_g-large'], adapter, { outputLimitBytes: 100 });
    expect(results.map((r) => r.output.length)).toEqual([40, 36, 12, 12]);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(results[0]!.warnings).toBeUndefined();
    expect(results[1]!.warnings).toEqual([expect.stringMatching(CUT)]);
    expect(results[2]!.warnings).toEqual([expect.stringMatching(CUT)]);
    expect(results[3]!.warnings).toEqual([expect.stringMatching(CUT)]);
    for (const result of results) expect(result).toMatchObject({ tokensIn: 100, tokensOut: 500, providerCost: expect.any(Number) });
  });

  it('holds 16 MiB of outputs by default: of three answers of 8 MiB, the last keeps its share of half of it', async () => {
    const eight = 'y'.repeat(8 * 1024 * 1024);
    const adapter = { send: async () => ({ output: eight, usage, warnings: [] }) };
    const results = await runThrough(MODELS, adapter);
    const share = Math.floor((8 * 1024 * 1024) / 3);
    expect(results.map((r) => r.output.length)).toEqual([eight.length, 16 * 1024 * 1024 - eight.length - share, share]);
    expect(results[2]!.warnings).toContainEqual(expect.stringMatching(/limit of 16 MiB/));
  });

  it('stops a streamed call where its part of the budget runs out, its deltas joined its output and charged the text received; the next call still has its share', async () => {
    const deltas: string[][] = [[], []];
    const stopped: boolean[] = [];
    // Opened once the first model's stream is over (stopped where the budget ran out, if it works).
    const firstDone = gate();
    const adapter = {
      send: async () => Promise.reject(new Error('send must not be called when streaming')),
      stream: (call: { entry: { id: string } }, _endpoint: unknown, signal: AbortSignal, onDelta: (text: string) => void) =>
        new Promise<ModelReply>((resolve, reject) => {
          // The first model streams 30 bytes a delta, past any limit; the second starts once the first's stream is over.
          const first = call.entry.id === 'fam_c-5.4';
          signal.addEventListener('abort', () => {
            stopped.push(first);
            reject(new UpstreamError('timeout', 'aborted', { partial: { output: first ? 'a'.repeat(90) : 'b'.repeat(10) } }));
          });
          const send = () => {
            for (let i = 0; i < 3 && !signal.aborted; i++) onDelta((first ? 'a' : 'b').repeat(first ? 30 : 10));
            if (!signal.aborted) resolve({ output: 'unused', usage, warnings: [] });
          };
          if (first) {
            send();
            firstDone.open();
          } else void firstDone.opened.then(send);
        }),
    };
    // 50 bytes, 2 calls: 12 each held for it, 26 free: the first stops at 38, the second at its 12.
    const results = await runThrough(['fam_c-5.4', 'fam_a-sonnet-4-6'], adapter, {
      outputLimitBytes: 50,
      onDelta: (index, text) => deltas[index]!.push(text),
    });
    // Both stopped where their parts ran out (each pushes whether it was the first).
    expect(stopped).toEqual([true, false]);
    expect(deltas[0]!.join('')).toBe('a'.repeat(38));
    expect(deltas[1]!.join('')).toBe('b'.repeat(12));
    expect(results[0]).toMatchObject({ status: 'completed', output: 'a'.repeat(38), providerCost: null, warnings: [expect.any(String), expect.stringMatching(CUT)] });
    expect(results[1]).toMatchObject({ status: 'completed', output: 'b'.repeat(12), providerCost: null, warnings: [expect.any(String), expect.stringMatching(CUT)] });
    // Charged the estimate of all 90 characters the vendor sent, not only the 50 that went out.
    const estimateOf50 = (await runThrough(['fam_c-5.4'], { send: async () => ({ output: 'a'.repeat(50), warnings: [] }) }))[0]!.estimatedCost!;
    expect(results[0]!.estimatedCost).toBeGreaterThan(estimateOf50);
  });
});

describe("Function: runModels, the output budget's edges", () => {
  const usage = { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 500, reasoningTokens: 0 };
  const KEY = 'sk-secret-0123456789abcdef';
  const CUT = /^The output was cut/;

  /** runModels over "Hi." to `models`, every call through `prepare`, with the key KEY. */
  function runWithKey(models: string[], prepare: ProtocolAdapter['prepare'], options: Partial<FanOutOptions> = {}) {
    return runThrough(models, { prepare }, options, KEY);
  }

  it('redacts an echoed key before it cuts a whole answer, so that no cut leaves the start of the key', async () => {
    const [result] = await runWithKey(['fam_c-5.4'], () => ({ send: async () => ({ output: `0123456789 ${KEY} end`, usage, warnings: [] }) }), { outputLimitBytes: 17 });
    expect(result!.output).toBe('0123456789 [redac');
    expect(result!.output).not.toContain('sk-');
  });

  it('sends no start of a key a streamed call was cut in, and answers what went out', async () => {
    const deltas: string[] = [];
    const [result] = await runWithKey(
      ['fam_c-5.4'],
      (_call, _endpoint, onDelta) => ({
        send: (signal) =>
          new Promise<ModelReply>((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'aborted', { partial: { output: `0123456789 ${KEY} end` } })));
            onDelta!('0123456789 ');
            onDelta!(KEY);
          }),
      }),
      { outputLimitBytes: 31, onDelta: (_index, text) => deltas.push(text) },
    );
    expect(deltas.join('')).not.toContain('sk-secret');
    expect(result).toMatchObject({ status: 'completed', output: deltas.join('') });
    expect(result!.warnings).toContainEqual(expect.stringMatching(CUT));
  });

  it("keeps the warnings of mapping a streamed call it stopped at the budget, as the call's reply would have had them", async () => {
    const [result] = await runWithKey(
      ['fam_c-5.4'],
      (_call, _endpoint, onDelta) => ({
        warnings: ['maxTokens 1 is below the minimum; 16 was sent'],
        send: (signal) =>
          new Promise<ModelReply>((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'aborted', { partial: { output: 'x'.repeat(40) } })));
            onDelta!('x'.repeat(40));
          }),
      }),
      { outputLimitBytes: 10, onDelta: () => undefined },
    );
    expect(result!.warnings).toEqual(['maxTokens 1 is below the minimum; 16 was sent', expect.any(String), expect.stringMatching(CUT)]);
  });

  it('reports a streamed call whose caller left before its text passed the budget as cancelled, not cut', async () => {
    const caller = new AbortController();
    const [result] = await runWithKey(
      ['fam_c-5.4'],
      (_call, _endpoint, onDelta) => ({
        send: (signal) =>
          new Promise<ModelReply>((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(new UpstreamError('timeout', 'aborted', { partial: { output: 'x'.repeat(110), usage } })));
            onDelta!('x'.repeat(10));
            caller.abort();
            onDelta!('x'.repeat(100));
          }),
      }),
      { outputLimitBytes: 50, onDelta: () => undefined, signal: caller.signal, disconnectGraceMs: 0 },
    );
    expect(result).toMatchObject({ status: 'cancelled', output: '', error: { code: 'cancelled' }, tokensOut: 500 });
  });

  it("leaves no listener of a streamed call on the request's signal once the call has ended", async () => {
    const added = new Map<AbortSignal, number>();
    const add = vi.spyOn(AbortSignal.prototype, 'addEventListener');
    add.mockImplementation(function (this: AbortSignal, ...args: Parameters<AbortSignal['addEventListener']>) {
      if (args[0] === 'abort') added.set(this, (added.get(this) ?? 0) + 1);
      return EventTarget.prototype.addEventListener.apply(this, args as Parameters<EventTarget['addEventListener']>);
    });
    try {
      await runWithKey(
        ['fam_c-5.4', 'fam_a-sonnet-4-6'],
        (_call, _endpoint, onDelta) => ({
          send: async () => {
            onDelta!('Hello');
            return { output: 'Hello', usage, warnings: [] };
          },
        }),
        {
          onDelta: () => undefined,
        },
      );
    } finally {
      add.mockRestore();
    }
    // The request's signal heard one listener per streamed call; none is left.
    const shared = [...added].filter(([, count]) => count === 2).map(([signal]) => signal);
    expect(shared).toHaveLength(1);
    expect(getEventListeners(shared[0]!, 'abort')).toEqual([]);
  });
});

describe("Function: runModels, a vendor's words about the gateway's own account", () => {
  const fail = (error: UpstreamError) => ({
    send: async () => {
      throw error;
    },
  });
  it.each([
    [
      new UpstreamError('upstream_error', 'Insufficient Balance for org-OPERATORorg1234567890ab', { upstreamStatus: 402 }),
      "The gateway's account with this provider cannot pay for the call: the gateway's operator must top it up",
    ],
    [
      new UpstreamError('upstream_error', 'Incorrect API key provided', { upstreamStatus: 401 }),
      "The provider refused the gateway's key for this model: the gateway's operator must replace it",
    ],
    // Inside a stream (its 200): a rate limit by its code.
    [
      new UpstreamError('upstream_rate_limited', 'Used 29412 of 30000', { upstreamStatus: 200 }),
      "The provider is limiting the gateway's calls to this model just now; retry later",
    ],
    // OpenAI's 429 for an account out of quota: spent credit, not a limit.
    [
      new UpstreamError('upstream_rate_limited', 'You exceeded your current quota', { upstreamStatus: 429, creditSpent: true }),
      "The gateway's account with this provider cannot pay for the call: the gateway's operator must top it up",
    ],
    // Bedrock's model still loading answers 429 too: not a limit of the gateway's account, its words kept.
    [new UpstreamError('upstream_error', 'Model is not ready', { upstreamStatus: 429 }), 'Model is not ready'],
  ])('%s answers %j', async (error, message) => {
    const [result] = await runThrough(['fam_c-5.4'], fail(error), { retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } });
    expect(result!.error).toEqual({ code: error.code, message, upstreamStatus: error.details.upstreamStatus });
  });
});

describe("Function: runModels, a vendor's words in a warning", () => {
  // A Mistral key has no prefix to know it by: only as the key the call was sent with.
  const KEY = 'Zq8mRtY2vLk9PwX4nB7cD1fG5hJ3sA6e';
  const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

  it.each([
    ['a chat finish_reason', 'fam_g-small', () => fromChatResponse({ choices: [{ message: { content: 'Hi' }, finish_reason: KEY }], usage }, dialectFor('mistral'))],
    [
      'a Gemini finishReason',
      'fam_b-3.1-pro',
      () =>
        fromGenerateContentResponse({
          candidates: [{ content: { parts: [{ text: 'Hi' }] }, finishReason: KEY }],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 },
        }),
    ],
  ])('never repeats the key it was sent in %s a lying vendor set to it, as error messages do not', async (_name, model, answer) => {
    const [result] = await runThrough([model], { send: async () => answer() }, {}, KEY);
    expect(result!.status).toBe('completed');
    expect(JSON.stringify(result)).not.toContain(KEY);
    expect(result!.warnings).toContainEqual(expect.stringContaining('[redacted]'));
  });
});
