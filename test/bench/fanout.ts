/**
 * 2. Fan-out: 1, 8 and 32 distinct catalog models (every wire protocol among them) with
 * every upstream answering after 200 ms: the provider simulator in a process of its own,
 * every provider configured with a key and a base URL pointing at it, as real vendors
 * would be (vendors do not share the gateway's CPU). The figure
 * is the request's wall time over the slowest upstream call, which is at least that
 * 200 ms; the gateway's own per-model measure (`latencyMs` of the slowest result) is
 * shown beside it.
 */
import { allModels, type ModelEntry } from '../../shared/catalog/index.js';
import { startHost, startSimulatorProcess, UNLIMITED, type Host, type SimulatorProcess } from './children.js';
import { createClient, json } from './http-client.js';
import { median, rotate, round } from './stats.js';
import { check, type Benchmark, type Row } from './types.js';

export const UPSTREAM_LATENCY_MS = 200;
const SIZES = [1, 8, 32] as const;

/** `count` distinct models taken round-robin over the providers, so that every protocol takes part. */
export function spreadModels(count: number): string[] {
  const byProvider = new Map<string, ModelEntry[]>();
  for (const entry of allModels()) byProvider.set(entry.provider, [...(byProvider.get(entry.provider) ?? []), entry]);
  const queues = [...byProvider.values()];
  const picked: string[] = [];
  for (let i = 0; picked.length < count && queues.some((q) => q.length > 0); i++) {
    const entry = queues[i % queues.length]!.shift();
    if (entry) picked.push(entry.id);
  }
  if (picked.length < count) throw new Error(`the catalog has only ${picked.length} models, ${count} asked`);
  return picked;
}

interface Sample {
  wallMs: number;
  slowestModelMs: number;
}

export const fanout: Benchmark = {
  id: 'fanout',
  title: '2. Fan-out (200 ms upstream latency)',
  async run(context) {
    const rounds = context.smoke ? 1 : 8;
    const perRound = context.smoke ? 1 : 4;
    const warmup = context.smoke ? 1 : 2;
    const bodies = new Map(SIZES.map((n) => [n, JSON.stringify({ prompt: 'Say hello in one short sentence.', models: spreadModels(n) })]));
    let host: Host | undefined;
    let vendors: SimulatorProcess | undefined;
    const client = createClient();
    try {
      vendors = await startSimulatorProcess(UPSTREAM_LATENCY_MS);
      host = await startHost(context, 'fanout', { ...UNLIMITED, ...vendors.vendorEnv });
      const target = host;
      const send = async (n: number): Promise<Sample> => {
        const reply = await client.post(`${target.url}/api/v1/prompt`, bodies.get(n as (typeof SIZES)[number])!, { authorization: `Bearer ${target.apiKey}` });
        const answer = json(reply);
        if (reply.status !== 200) throw new Error(`fan-out ${n}: status ${reply.status}: ${reply.body.slice(0, 300)}`);
        const results = answer.results as { status: string; latencyMs: number; modelId: string; error?: { message?: string } }[];
        const failed = results.filter((r) => r.status !== 'completed');
        if (results.length !== n || failed.length > 0) {
          throw new Error(`fan-out ${n}: ${failed.length} of ${results.length} results failed: ${failed.map((r) => `${r.modelId}: ${r.error?.message}`).join('; ').slice(0, 300)}`);
        }
        return { wallMs: reply.ms, slowestModelMs: Math.max(...results.map((r) => r.latencyMs)) };
      };
      for (let i = 0; i < warmup; i++) for (const n of SIZES) await send(n);

      const samples = new Map<number, Sample[][]>(SIZES.map((n) => [n, []]));
      for (let r = 0; r < rounds; r++) {
        const round = new Map<number, Sample[]>(SIZES.map((n) => [n, []]));
        for (let i = 0; i < perRound; i++) for (const n of rotate(SIZES, r + i)) round.get(n)!.push(await send(n));
        for (const n of SIZES) samples.get(n)!.push(round.get(n)!);
      }
      const rows: Row[] = SIZES.map((n) => {
        const perRoundSamples = samples.get(n)!;
        const wall = median(perRoundSamples.map((s) => median(s.map((x) => x.wallMs))));
        const slowest = median(perRoundSamples.map((s) => median(s.map((x) => x.slowestModelMs))));
        return {
          models: n,
          wallMs: round(wall, 1),
          upstreamMs: UPSTREAM_LATENCY_MS,
          slowestModelMs: round(slowest, 1),
          ratio: round(wall / UPSTREAM_LATENCY_MS, 3),
          ratioToSlowestResult: round(wall / slowest, 3),
        };
      });
      const ratio32 = rows.find((r) => r.models === 32)?.ratio;
      return {
        status: 'ok',
        notes: [],
        method: `${rounds} rounds x ${perRound} requests per size, sizes alternating (order rotated), after ${warmup} warm-up requests per size; wall time at the client over the upstream latency (${UPSTREAM_LATENCY_MS} ms, the least any upstream call takes); median of round medians`,
        columns: [
          { key: 'models', label: 'models' },
          { key: 'wallMs', label: 'wall ms', digits: 1 },
          { key: 'upstreamMs', label: 'upstream latency ms' },
          { key: 'slowestModelMs', label: 'slowest result latencyMs', digits: 1 },
          { key: 'ratio', label: 'wall / upstream', digits: 3 },
          { key: 'ratioToSlowestResult', label: 'wall / slowest result', digits: 3 },
        ],
        rows,
        targets: [check('32 models: wall / slowest upstream call', '<=', 1.05, typeof ratio32 === 'number' ? ratio32 : null, 'x')],
      };
    } finally {
      client.close();
      await host?.close();
      await vendors?.close();
    }
  },
};
