/**
 * The embedded store's own ceiling for benchmark 4: the writes one request makes (the
 * reserve with its ledger entry, then the settle and the prompt log side by side), made
 * through the gateway's repositories to the store as the local host runs it (dynalite in a
 * worker thread, called in process), with no gateway, HTTP or provider in the way. The
 * host cannot answer more requests a second than its store can take their writes.
 */
import { performance } from 'node:perf_hooks';
import { startEmbeddedStore, storeClient } from '../../infra/local/store.js';
import { loadConfig } from '../../shared/config.js';
import { ulid } from '../../shared/ids.js';
import { PromptLogsRepository } from '../../shared/storage/prompt-logs.js';
import { createStore } from '../../shared/storage/store.js';
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
  close(): Promise<void>;
}

export async function startStoreAlone(): Promise<StoreAlone> {
  const embedded = await startEmbeddedStore({ port: 0 });
  const config = loadConfig({});
  const documentClient = await storeClient(embedded, config.tables);
  const { credits } = createStore(config, { documentClient });
  const promptLogs = new PromptLogsRepository(documentClient, config.tables.promptLogs);
  const { accountId } = await credits.openAccount({ balanceMicro: 1e15 });

  // What a one-model request of benchmark 4 writes, in the order PromptService writes it.
  const oneRequest = async () => {
    const promptLogId = ulid();
    const open = await credits.reserve(accountId, promptLogId, 50_000, Number.MAX_SAFE_INTEGER);
    await Promise.all([
      credits.settle(open, 20),
      promptLogs.put(
        {
          promptLogId,
          accountId,
          createdAt: new Date().toISOString(),
          zeroDataRetention: false,
          models: [{ modelId: OVERHEAD_MODEL, status: 'completed', tokensIn: 9, tokensOut: 12, latencyMs: 1, providerCost: 0.0000021 }],
          judges: [],
          creditsUsedMicro: 20,
        },
        { prompt: 'Say hello', outputs: [{ modelId: OVERHEAD_MODEL, output: 'Hello! How can I help you today?' }] },
      ),
    ]);
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
    async close() {
      documentClient.destroy();
      await embedded.close();
    },
  };
}
