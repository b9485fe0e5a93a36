import { afterEach, expect } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import type { ModelEntry } from '../../shared/catalog/types.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import type { PromptRequest } from '../../shared/contract/types.js';
import type { CreditRates } from '../../shared/credits/credits.js';
import { estimateBreakdown } from '../../shared/credits/estimate.js';
import { planRequest } from '../../shared/plan/request-plan.js';
import type { Endpoint, ModelCall, ModelReply, ProtocolAdapter } from '../../shared/providers/types.js';
import { startFakeHttp, type HttpCall } from './fake-http.js';

/**
 * The catalog entry of an ID the test names, as the catalog declares it (at time 0, before
 * any vendor retired a model: the adapters' tests test each vendor model's own behaviour);
 * a typo fails loudly.
 */
export function catalogEntry(id: string): ModelEntry {
  const found = resolveModel(id, 0);
  if (!found) throw new Error(`no catalog entry ${id}`);
  return found;
}

/** A minimal ModelCall for a catalog model, with what the test overrides. */
export function modelCall(id: string, overrides: Partial<ModelCall> = {}, prompt = 'Compare two ways to cache HTTP responses.'): ModelCall {
  return { entry: catalogEntry(id), system: [], history: [], prompt, attachments: [], maxTokens: 4096, tuning: {}, ...overrides };
}

/** The UpstreamError a mapper throws. */
export function thrownUpstream(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}

/**
 * A vendor on loopback for each test of a `describe` block: `answering` starts it with one
 * scripted answer to every call and returns the endpoint (base URL with `/v1`, `apiKey`) that
 * reaches it; `calls` are the calls it received. It is closed after each test.
 */
export function scriptedVendor(apiKey: string): { answering(status: number, body: unknown, headers?: Record<string, string>): Promise<Endpoint>; readonly calls: HttpCall[] } {
  let vendor: Awaited<ReturnType<typeof startFakeHttp>> | undefined;
  afterEach(async () => {
    await vendor?.close();
    vendor = undefined;
  });
  return {
    async answering(status, body, headers = {}) {
      vendor = await startFakeHttp(() => ({ status, headers, body }));
      return { baseUrl: `${vendor.url}/v1`, apiKey, simulated: false };
    },
    get calls() {
      if (!vendor) throw new Error('no vendor: call answering() first');
      return vendor.calls;
    },
  };
}

/** A fake vendor's answer to one attempt: `send` for the JSON answer, `stream` for a streamed one (absent: it does not stream). */
export interface FakeVendor {
  send(call: ModelCall, endpoint: Endpoint, signal: AbortSignal): Promise<ModelReply>;
  stream?(call: ModelCall, endpoint: Endpoint, signal: AbortSignal, onDelta: (text: string) => void): Promise<ModelReply>;
}

/** A fake adapter: its `prepare` records nothing and each `send` of the prepared call asks `vendor`. */
export function fakeAdapter(vendor: FakeVendor): Pick<ProtocolAdapter, 'prepare'> {
  return {
    prepare: (call, endpoint, onDelta) => ({
      send: (signal) =>
        onDelta ? (vendor.stream?.(call, endpoint, signal, onDelta) ?? Promise.reject(new Error('this fake adapter does not stream'))) : vendor.send(call, endpoint, signal),
    }),
  };
}

/** The estimate of a request, planned as the prompt service plans it. */
export function estimateMicroCredits(request: PromptRequest, rates: CreditRates): number {
  return estimateBreakdown(planRequest(request), rates).micro;
}

/** The judge calls' share of a request's estimate. */
export function estimateJudgingMicroCredits(request: PromptRequest, rates: CreditRates): number {
  return estimateBreakdown(planRequest(request), rates).judgeCalls.micro;
}
