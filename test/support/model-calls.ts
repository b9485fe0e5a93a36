import { afterEach, expect } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import type { ModelEntry } from '../../shared/catalog/types.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import type { Endpoint, ModelCall, ProtocolAdapter } from '../../shared/providers/types.js';
import { startFakeHttp, type HttpCall } from './fake-http.js';

/** The catalog entry of an ID the test names; a typo fails loudly. */
export function catalogEntry(id: string): ModelEntry {
  const found = resolveModel(id);
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

/** The `stream` of a fake adapter whose test only ever sends. */
export const notStreamed: ProtocolAdapter['stream'] = () => Promise.reject(new Error('this fake adapter does not stream'));
