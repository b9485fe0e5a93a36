/**
 * The local host (`startLocalHost`, as `npm start` runs it) in a child process of its own,
 * so that the load generator and the upstream do not share its event loop, and so that
 * its memory and CPU are its own. Configured by the environment children.ts gives it;
 * answers the few requests a benchmark needs over IPC.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { startLocalHost } from '../../infra/local/host.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';
import { loadConfig } from '../../shared/config.js';
import { threadCpuMs } from './cpu.js';

export type HostRequest =
  | { op: 'resetSimulator' }
  | { op: 'openAccount'; balanceMicro: number }
  | { op: 'balance'; accountId: string }
  | { op: 'ledgerSum'; accountId: string }
  | { op: 'simulatorCalls' }
  | { op: 'usageStart' }
  | { op: 'usageStop' }
  | { op: 'storeCalls' }
  | { op: 'storeParses' }
  | { op: 'close' };

export interface HostReady {
  type: 'ready';
  url: string;
  apiKey: string;
  accountId: string;
  simulatorUrl: string;
}

/** Peak memory while sampling, the CPU time the process used meanwhile, and how busy its two threads were. */
export interface HostUsage {
  peakRssBytes: number;
  peakHeapUsedBytes: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  wallMs: number;
  /** CPU time of the gateway's thread (the main one, the store's thread apart), ms; null off Linux. */
  gatewayThreadCpuMs: number | null;
  /** Share of the time (0 to 1) the gateway's thread (the main one) was busy. */
  gatewayThreadBusy: number;
  /** Share of the time (0 to 1) the embedded store's thread was busy. */
  storeThreadBusy: number;
}

const SAMPLE_EVERY_MS = 50;

const host = await startLocalHost(loadConfig(process.env), { simulatorLatencyMs: Number(process.env.BENCH_SIMULATOR_LATENCY_MS ?? 0) });

let sampler:
  | {
      timer: NodeJS.Timeout;
      peakRss: number;
      peakHeap: number;
      cpu: NodeJS.CpuUsage;
      threadCpu: number | null;
      started: number;
      gateway: EventLoopUtilization;
      store: EventLoopUtilization;
    }
  | undefined;
function sample(): void {
  if (!sampler) return;
  const { rss, heapUsed } = process.memoryUsage();
  sampler.peakRss = Math.max(sampler.peakRss, rss);
  sampler.peakHeap = Math.max(sampler.peakHeap, heapUsed);
}

async function answer(request: HostRequest): Promise<unknown> {
  switch (request.op) {
    case 'resetSimulator':
      host.simulator.reset();
      return null;
    case 'openAccount': {
      const account = await host.gateway.credits.openAccount({ balanceMicro: request.balanceMicro });
      const apiKey = generateApiKey();
      await host.gateway.apiKeys.put({ keyHash: hashApiKey(apiKey), accountId: account.accountId, keyPrefix: keyPrefix(apiKey), createdAt: new Date().toISOString() });
      return { accountId: account.accountId, apiKey };
    }
    case 'balance': {
      // Once every answered request has written what follows its answer.
      await host.settled();
      const account = await host.gateway.accounts.get(request.accountId);
      return account ? { balanceMicro: account.balanceMicro, reservations: Object.keys(account.reservations ?? {}).length } : null;
    }
    case 'ledgerSum':
      return host.gateway.credits.ledgerSum(request.accountId);
    case 'simulatorCalls':
      return host.simulator.calls().map(({ provider, model, at }) => ({ provider, model, at }));
    case 'usageStart': {
      if (sampler) clearInterval(sampler.timer);
      sampler = {
        timer: setInterval(sample, SAMPLE_EVERY_MS),
        peakRss: 0,
        peakHeap: 0,
        cpu: process.cpuUsage(),
        threadCpu: threadCpuMs(process.pid),
        started: performance.now(),
        gateway: performance.eventLoopUtilization(),
        store: host.store.utilization(),
      };
      sample();
      return null;
    }
    case 'usageStop': {
      if (!sampler) throw new Error('usageStop without usageStart');
      sample();
      clearInterval(sampler.timer);
      const cpu = process.cpuUsage(sampler.cpu);
      const usage: HostUsage = {
        peakRssBytes: sampler.peakRss,
        peakHeapUsedBytes: sampler.peakHeap,
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        wallMs: performance.now() - sampler.started,
        gatewayThreadCpuMs: sampler.threadCpu === null ? null : threadCpuMs(process.pid)! - sampler.threadCpu,
        gatewayThreadBusy: performance.eventLoopUtilization(sampler.gateway).utilization,
        storeThreadBusy: performance.eventLoopUtilization(host.store.utilization(), sampler.store).utilization,
      };
      sampler = undefined;
      return usage;
    }
    case 'storeCalls':
      // Once every answered request has written what follows its answer.
      await host.settled();
      return host.store.calls();
    case 'storeParses':
      return host.store.parses();
    case 'close':
      await host.close();
      // A clean exit, so that --cpu-prof writes its profile.
      setImmediate(() => process.exit(0));
      return null;
  }
}

process.on('message', (message: { id: number; request: HostRequest }) => {
  answer(message.request).then(
    (value) => process.send?.({ id: message.id, ok: true, value }),
    (error: unknown) => process.send?.({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));

const ready: HostReady = { type: 'ready', url: host.url, apiKey: host.demo.apiKey, accountId: host.demo.accountId, simulatorUrl: host.simulator.url };
process.send?.(ready);
