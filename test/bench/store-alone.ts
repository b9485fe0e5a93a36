/**
 * The embedded store's own ceiling for benchmark 4: the writes one request makes (the
 * reserve, then the settle, its entry and the close, and the prompt log side by side), made
 * through the gateway's repositories to the store as the local host runs it (dynalite in a
 * worker thread, called in process), with no gateway, HTTP or provider in the way. The
 * host cannot answer more requests a second than its store can take their writes.
 */
import { performance } from 'node:perf_hooks';
import { startEmbeddedStore, connectStore, type StoreCall } from '../../infra/local/store.js';
import { toPromptLog } from '../../shared/orchestrator/prompt-log.js';
import type { ModelResult } from '../../shared/compare/result.js';
import { loadConfig } from '../../shared/config.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { estimateBreakdown } from '../../shared/credits/estimate.js';
import { planRequest } from '../../shared/plan/request-plan.js';
import { ulid } from '../../shared/ids.js';
import { PromptLogsRepository } from '../../shared/storage/prompt-logs.js';
import { createStore } from '../../shared/credits/store.js';
import { OVERHEAD_MODEL } from './overhead.js';

export interface StoreAloneRun {
  /** Requests' writes completed per second. */
  rps: number;
  /** Share of the time (0 to 1) the store's thread was busy. */
  storeBusy: number;
}

export interface StoreAlone {
  /** Makes requests' writes from `connections` concurrent loops for `seconds` (or `amount` requests in all). */
  run(connections: number, limit: { seconds: number } | { amount: number }): Promise<StoreAloneRun>;
  /** The requests its store received since the last call, as the store's thread saw them. */
  storeCalls(): Promise<StoreCall[]>;
  close(): Promise<void>;
}

export async function startStoreAlone(): Promise<StoreAlone> {
  const embedded = await startEmbeddedStore({ port: 0 });
  const config = loadConfig({});
  const storeClient = await connectStore(embedded, config.tables);
  const { credits } = createStore(config, { storeClient });
  const promptLogs = new PromptLogsRepository(storeClient.items, config.tables.promptLogs);
  const { accountId } = await credits.openAccount({ balanceMicro: 1e15 });

  // What a one-model request of benchmark 4 writes, built and written as PromptService does.
  const request = validatePromptRequest({ prompt: 'Say hello', models: [OVERHEAD_MODEL] });
  const estimateMicro = estimateBreakdown(planRequest(request), config).micro;
  const result: ModelResult = {
    modelId: OVERHEAD_MODEL,
    status: 'completed',
    output: 'Hello from the benchmark upstream.',
    tokensIn: 9,
    tokensOut: 12,
    latencyMs: 1,
    providerCost: 0.0000021,
  };
  const chargedMicro = 20;
  const oneRequest = async () => {
    const promptLogId = ulid();
    const receivedAt = Date.now();
    const open = await credits.reserve(accountId, promptLogId, estimateMicro, { limitPerMinute: Number.MAX_SAFE_INTEGER, inFlight: Number.MAX_SAFE_INTEGER });
    const { meta, content } = toPromptLog({ promptLogId, accountId, request, results: [result], evaluations: [], chargedMicro, zeroDataRetention: false, receivedAt });
    await Promise.all([credits.settle(open, chargedMicro), promptLogs.put(meta, content)]);
  };

  return {
    async run(connections, limit) {
      const startedAt = performance.now();
      const endsAt = 'seconds' in limit ? startedAt + limit.seconds * 1000 : Infinity;
      let left = 'amount' in limit ? limit.amount : Infinity;
      let done = 0;
      const before = embedded.utilization();
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (left-- > 0 && performance.now() < endsAt) {
            await oneRequest();
            done++;
          }
        }),
      );
      const seconds = (performance.now() - startedAt) / 1000;
      return { rps: done / seconds, storeBusy: performance.eventLoopUtilization(embedded.utilization(), before).utilization };
    },
    storeCalls: () => embedded.calls(),
    async close() {
      storeClient.destroy();
      await embedded.close();
    },
  };
}
