/**
 * 2. Fan-out: 1, 8 and 32 distinct catalog models (every wire protocol among them) with
 * every upstream answering after 200 ms: the provider simulator in a process of its own,
 * every provider configured with a key and a base URL pointing at it, as real vendors
 * would be (vendors do not share the gateway's CPU).
 *
 * The figure is the request's wall time over the slowest upstream call. That call takes
 * more than the 200 ms the simulator waits: n calls at once queue in its process. So it
 * is measured, as benchmark 1 measures its direct path: the very calls the gateway made
 * for a request of that size (recorded by the simulator) are sent again at once, straight
 * to the simulator, from a bare keep-alive client, in the same rounds; the slowest of
 * them to answer is the slowest upstream call. Wall time over the nominal 200 ms and the
 * gateway's own per-model measure (`latencyMs` of the slowest result) are shown beside it.
 */
import { allModels, type ModelEntry } from '../../shared/catalog/index.js';
import { startHostWithVendors, VENDOR_KEY, type HostWithVendors, type RecordedCall } from './children.js';
import { createClient, gatewayPhases, json, type Client } from './http-client.js';
import { describeFigures, median, medianByName, rotate, round } from './stats.js';
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
  /** The gateway's Server-Timing phases. */
  phases: Record<string, number>;
}

/** Headers a client sets for its own connection, not part of the call. */
const CONNECTION_HEADERS = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'expect']);

/** Sends recorded upstream calls all at once from `client`; the time until the last has answered. */
async function sendDirect(client: Client, baseUrl: string, calls: readonly RecordedCall[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    calls.map(async (call) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(call.headers)) {
        if (value === undefined || CONNECTION_HEADERS.has(name)) continue;
        // The simulator records keys redacted; the bench configured every provider with VENDOR_KEY.
        headers[name] = value !== '[redacted]' ? value : name === 'authorization' ? `Bearer ${VENDOR_KEY}` : VENDOR_KEY;
      }
      const reply = await client.post(`${baseUrl}${call.path}`, typeof call.body === 'string' ? call.body : JSON.stringify(call.body), headers);
      if (reply.status !== 200) throw new Error(`direct ${call.path}: status ${reply.status}: ${reply.body.slice(0, 300)}`);
    }),
  );
  return performance.now() - started;
}

export const fanout: Benchmark = {
  id: 'fanout',
  title: '2. Fan-out (200 ms upstream latency)',
  async run(context) {
    const rounds = context.smoke ? 1 : 8;
    const perRound = context.smoke ? 1 : 4;
    // Enough for the steady state, as benchmark 1's 300 requests: after 2 pairs per size, the
    // measured requests still ran partly before V8 had optimised the request path (1.035
    // against 1.026 at 32 models, in back-to-back runs).
    const warmup = context.smoke ? 1 : 20;
    const bodies = new Map(SIZES.map((n) => [n, JSON.stringify({ prompt: 'Say hello in one short sentence.', models: spreadModels(n) })]));
    let started: HostWithVendors | undefined;
    const client = createClient();
    const direct = createClient();
    try {
      started = await startHostWithVendors(context, 'fanout', UPSTREAM_LATENCY_MS);
      const { host: target, vendors } = started;
      const send = async (n: number): Promise<Sample> => {
        const reply = await client.post(`${target.url}/api/v1/prompt`, bodies.get(n as (typeof SIZES)[number])!, { authorization: `Bearer ${target.apiKey}` });
        const answer = json(reply);
        if (reply.status !== 200) throw new Error(`fan-out ${n}: status ${reply.status}: ${reply.body.slice(0, 300)}`);
        const results = answer.results as { status: string; latencyMs: number; modelId: string; error?: { message?: string } }[];
        const failed = results.filter((r) => r.status !== 'completed');
        if (results.length !== n || failed.length > 0) {
          throw new Error(
            `fan-out ${n}: ${failed.length} of ${results.length} results failed: ${failed
              .map((r) => `${r.modelId}: ${r.error?.message}`)
              .join('; ')
              .slice(0, 300)}`,
          );
        }
        return { wallMs: reply.ms, slowestModelMs: Math.max(...results.map((r) => r.latencyMs)), phases: gatewayPhases(reply) };
      };
      // The upstream calls of one request per size, as the simulator received them.
      const recorded = new Map<number, RecordedCall[]>();
      for (const n of SIZES) {
        await send(n);
        const calls = await vendors.lastCalls(n);
        if (calls.length !== n) throw new Error(`fan-out ${n}: the simulator recorded ${calls.length} calls`);
        recorded.set(n, calls);
      }
      const sendDirectly = (n: number) => sendDirect(direct, vendors.url, recorded.get(n)!);
      type Pair = { gateway: Sample; directMs: number };
      // Gateway and direct back to back; which goes first alternates.
      const pair = async (n: number, gatewayFirst: boolean): Promise<Pair> => {
        if (gatewayFirst) {
          const gateway = await send(n);
          return { gateway, directMs: await sendDirectly(n) };
        }
        const directMs = await sendDirectly(n);
        return { gateway: await send(n), directMs };
      };
      for (let i = 0; i < warmup; i++) for (const n of SIZES) await pair(n, i % 2 === 0);

      const samples = new Map<number, Pair[][]>(SIZES.map((n) => [n, []]));
      for (let r = 0; r < rounds; r++) {
        const round = new Map<number, Pair[]>(SIZES.map((n) => [n, []]));
        for (let i = 0; i < perRound; i++) for (const n of rotate(SIZES, r + i)) round.get(n)!.push(await pair(n, (r + i) % 2 === 0));
        for (const n of SIZES) samples.get(n)!.push(round.get(n)!);
      }
      const rows: Row[] = SIZES.map((n) => {
        const perRoundSamples = samples.get(n)!;
        const wall = median(perRoundSamples.map((s) => median(s.map((x) => x.gateway.wallMs))));
        const slowest = median(perRoundSamples.map((s) => median(s.map((x) => x.gateway.slowestModelMs))));
        const directMs = median(perRoundSamples.map((s) => median(s.map((x) => x.directMs))));
        return {
          models: n,
          wallMs: round(wall, 1),
          directMs: round(directMs, 1),
          slowestModelMs: round(slowest, 1),
          ratio: round(wall / directMs, 3),
          ratioToNominal: round(wall / UPSTREAM_LATENCY_MS, 3),
          ratioToSlowestResult: round(wall / slowest, 3),
        };
      });
      const ratio32 = rows.find((r) => r.models === 32)?.ratio;
      const notes = SIZES.map(
        (n) =>
          `Gateway phases, ${n} model${n === 1 ? '' : 's'} (its Server-Timing header; median over the measured requests): ${describeFigures(
            medianByName(
              samples
                .get(n)!
                .flat()
                .map((x) => x.gateway.phases),
            ),
          )}; outside = wall time at the client minus total`,
      );
      return {
        status: 'ok',
        notes,
        method: `${rounds} rounds x ${perRound} requests per size, sizes alternating (order rotated), each request paired with a direct send of the same upstream calls (the gateway's calls for one request of that size, recorded by the simulator, sent again at once from a bare keep-alive client; which goes first alternates), after ${warmup} warm-up pairs per size; slowest upstream call = the direct send's time until its last answer; upstream latency ${UPSTREAM_LATENCY_MS} ms; median of round medians`,
        columns: [
          { key: 'models', label: 'models' },
          { key: 'wallMs', label: 'wall ms', digits: 1 },
          { key: 'directMs', label: 'slowest upstream call ms (direct)', digits: 1 },
          { key: 'slowestModelMs', label: 'slowest result latencyMs', digits: 1 },
          { key: 'ratio', label: 'wall / slowest upstream call', digits: 3 },
          { key: 'ratioToNominal', label: `wall / ${UPSTREAM_LATENCY_MS} ms`, digits: 3 },
          { key: 'ratioToSlowestResult', label: 'wall / slowest result', digits: 3 },
        ],
        rows,
        targets: [check('32 models: wall / slowest upstream call', '<=', 1.03, typeof ratio32 === 'number' ? ratio32 : null, 'x')],
      };
    } finally {
      client.close();
      direct.close();
      await started?.close();
    }
  },
};
