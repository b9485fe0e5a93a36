/**
 * Store round trips on a request's critical path, counted from the store's side: one-model
 * requests one at a time to a host whose provider is its own simulator; the store's thread
 * records when each of its requests arrived, the simulator when the gateway's call did.
 * The store requests that arrived before the provider call are the ones the caller waited
 * for before the first provider byte; the rest ran beside the provider call or after the
 * answer (settle, ledger, prompt log). The first request, which fills the host's caches
 * (API key, account), is counted apart.
 */
import type { StoreCall } from '../../infra/local/store.js';
import type { Host } from './children.js';
import { median } from './stats.js';

export interface CriticalPath {
  /** Store requests before the provider call, per request: median and highest. */
  beforeProviderMedian: number;
  beforeProviderMax: number;
  /**
   * Store requests before the provider call of the first request, which is not in the median
   * and highest: the host's caches are empty (the key and account reads an authorizer makes
   * again every 30 s) and the account has no rate window open for this minute, which every
   * account's first request of a minute meets (the reserve assumes the window is open).
   */
  coldBeforeProvider: number;
  /** Its operations, in order. */
  coldOperations: string[];
  /** Every store request a request made, its answer's writes included: median. */
  totalMedian: number;
  /** The operations before the provider call, in order, of the last request (the first fills the host's caches). */
  beforeProvider: string[];
  /** Every operation of the last request, in order. */
  all: string[];
}

export async function countCriticalPath(host: Host, body: string, requests: number): Promise<CriticalPath> {
  const before: number[] = [];
  const total: number[] = [];
  let last: { beforeProvider: string[]; all: string[] } | undefined;
  let cold: string[] = [];
  for (let i = 0; i <= requests; i++) {
    await host.call<StoreCall[]>({ op: 'storeCalls' });
    const calledBefore = (await host.call<{ at: number }[]>({ op: 'simulatorCalls' })).length;
    const reply = await fetch(`${host.url}/api/v1/prompt`, { method: 'POST', body, headers: { authorization: `Bearer ${host.apiKey}`, 'content-type': 'application/json' } });
    if (reply.status !== 200) throw new Error(`critical path: status ${reply.status}: ${(await reply.text()).slice(0, 300)}`);
    await reply.arrayBuffer();
    // Waits until the host has written everything that follows the answer.
    const calls = await host.call<StoreCall[]>({ op: 'storeCalls' });
    const simulated = await host.call<{ at: number }[]>({ op: 'simulatorCalls' });
    const providerAt = simulated[calledBefore]?.at;
    if (providerAt === undefined) throw new Error('critical path: the request made no provider call');
    const early = calls.filter((call) => call.at < providerAt);
    if (i === 0) {
      cold = early.map((call) => call.operation);
      continue;
    }
    before.push(early.length);
    total.push(calls.length);
    last = { beforeProvider: early.map((call) => call.operation), all: calls.map((call) => call.operation) };
  }
  return {
    coldBeforeProvider: cold.length,
    coldOperations: cold,
    beforeProviderMedian: median(before),
    beforeProviderMax: Math.max(...before),
    totalMedian: median(total),
    beforeProvider: last?.beforeProvider ?? [],
    all: last?.all ?? [],
  };
}
