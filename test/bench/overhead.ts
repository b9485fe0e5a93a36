/**
 * 1. Gateway overhead: one-model requests to a zero-latency OpenAI-compatible upstream on
 * loopback, directly, through our local host (authorizer, rate limit, credits, prompt
 * log and all) and through Portkey (`x-portkey-provider: openai` with
 * `x-portkey-custom-host` at the same upstream). Requests alternate between the paths
 * one by one (order rotated each round); each round's p50 and p99 per path, minus the
 * direct path's in the same round, is that round's added latency; the figure is the
 * median over the rounds.
 */
import { startHost, startUpstream, UNLIMITED, type Host, type Upstream } from './children.js';
import { createClient, gatewayPhases, json, type Client } from './http-client.js';
import type { ParseCounts, StoreCall } from '../../infra/local/store.js';
import { processCpuMs, threadCpuMs } from './cpu.js';
import { countCriticalPath, type CriticalPath } from './critical-path.js';
import { startStoreAlone, type StoreAlone } from './store-alone.js';
import { ensurePortkey, startPortkey, type Portkey } from './portkey.js';
import { describeFigures, median, medianByName, percentile, rotateBothWays, round } from './stats.js';
import { check, type Benchmark, type Row } from './types.js';

/** A Groq model: the openai-chat protocol, routed to the upstream by GROQ_API_KEY + GROQ_BASE_URL. */
export const OVERHEAD_MODEL = 'fam_i-gpt-oss-20b';
/** The vendor's name of OVERHEAD_MODEL, as a direct caller would send it. */
const UPSTREAM_MODEL = 'openai/gpt-oss-20b';
const CHAT_BODY = JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'Say hello' }] });
const PROMPT_BODY = JSON.stringify({ prompt: 'Say hello', models: [OVERHEAD_MODEL] });

type PathId = 'direct' | 'gateway' | 'portkey';
interface Path {
  id: PathId;
  label: string;
  client: Client;
  send(client: Client): Promise<number>;
}

export const overhead: Benchmark = {
  id: 'overhead',
  title: '1. Gateway overhead (one model, zero-latency upstream)',
  async run(context) {
    const warmup = context.smoke ? 5 : 300;
    const rounds = context.smoke ? 2 : 10;
    const perRound = context.smoke ? 5 : 500;
    const warmupBlock = context.smoke ? 5 : 400;
    const perBlock = context.smoke ? 5 : 1000;
    const blockRounds = context.smoke ? 2 : 5;
    const notes: string[] = [];
    let upstream: Upstream | undefined;
    let host: Host | undefined;
    let portkey: Portkey | undefined;
    let storeAlone: StoreAlone | undefined;
    const paths: Path[] = [];
    /** The gateway's Server-Timing phases of every measured (not warm-up) request. */
    const phases: Record<string, number>[] = [];
    let measuring = false;
    try {
      upstream = await startUpstream();
      const upstreamUrl = upstream.url;
      host = await startHost(context, 'overhead', { ...UNLIMITED, GROQ_API_KEY: 'gsk_bench', GROQ_BASE_URL: `${upstreamUrl}/v1` });
      const gatewayHost = host;
      const availability = await ensurePortkey(context);
      if (availability.ok) {
        try {
          portkey = await startPortkey();
        } catch (error) {
          notes.push(`Portkey not compared: ${(error as Error).message.split('\n')[0]}`);
        }
      } else {
        notes.push(`Portkey not compared: ${availability.reason}`);
      }

      paths.push({
        id: 'direct',
        label: 'direct to the upstream',
        client: createClient({ maxSockets: 1 }),
        send: async (client) => expectOk(await client.post(`${upstreamUrl}/v1/chat/completions`, CHAT_BODY, { authorization: 'Bearer sk-bench' }), 'direct'),
      });
      paths.push({
        id: 'gateway',
        label: 'this gateway (local host)',
        client: createClient({ maxSockets: 1 }),
        send: async (client) => {
          const reply = await client.post(`${gatewayHost.url}/api/v1/prompt`, PROMPT_BODY, { authorization: `Bearer ${gatewayHost.apiKey}` });
          expectOk(reply, 'gateway');
          if (measuring) phases.push(gatewayPhases(reply));
          return reply.ms;
        },
      });
      if (portkey) {
        const portkeyUrl = portkey.url;
        paths.push({
          id: 'portkey',
          label: `Portkey ${availability.ok ? availability.version : ''}`.trim(),
          client: createClient({ maxSockets: 1 }),
          send: async (client) =>
            expectOk(
              await client.post(`${portkeyUrl}/v1/chat/completions`, CHAT_BODY, {
                authorization: 'Bearer sk-bench',
                'x-portkey-provider': 'openai',
                'x-portkey-custom-host': `${upstreamUrl}/v1`,
              }),
              'portkey',
            ),
        });
      }

      // The gateway really went to the upstream (not the simulator), and answered with its text.
      const probe = json(await paths[1]!.client.post(`${gatewayHost.url}/api/v1/prompt`, PROMPT_BODY, { authorization: `Bearer ${gatewayHost.apiKey}` }));
      const result = probe.results?.[0];
      if (result?.status !== 'completed' || !String(result.output).includes('benchmark upstream')) {
        throw new Error(`the gateway did not reach the benchmark upstream: ${JSON.stringify(probe).slice(0, 300)}`);
      }

      for (let i = 0; i < warmup; i++) for (const path of paths) await path.send(path.client);
      measuring = true;

      const samples: Record<PathId, number[][]> = { direct: [], gateway: [], portkey: [] };
      for (let r = 0; r < rounds; r++) {
        const order = rotateBothWays(paths, r);
        const round: Record<PathId, number[]> = { direct: [], gateway: [], portkey: [] };
        for (let i = 0; i < perRound; i++) for (const path of order) round[path.id].push(await path.send(path.client));
        for (const path of paths) samples[path.id].push(round[path.id]);
      }

      // Back to back: a block of consecutive requests to one path, then the next (order
      // rotated per round), after WARMUP_BLOCK requests to each; no idle time between a
      // gateway's own requests to finish what follows each answer. CPU per request of the
      // gateway's thread (its store's thread apart), its answers' writes included, and of
      // Portkey's whole process, over each block.
      //
      // The floor: the same requests' store writes through the same SDK client and store
      // (dynalite in a thread of its own), with no gateway around them, one at a time; CPU of
      // this process's main thread (idle otherwise meanwhile). A block of them in each round,
      // before its paths' blocks, so that the machine's drift over the run weighs on both alike
      // (measured once after every round, the ratio to it swung from 1.24 to 1.65 between two
      // runs of the same code).
      const floorStore = await startStoreAlone();
      storeAlone = floorStore;
      const floorCpu: number[] = [];
      const floorCalls: number[] = [];
      for (const path of paths) for (let i = 0; i < warmupBlock; i++) await path.send(path.client);
      await floorStore.run(1, { amount: warmupBlock });
      await floorStore.storeCalls();
      const blocks: Record<PathId, number[][]> = { direct: [], gateway: [], portkey: [] };
      const cpu: { gateway: number[]; portkey: number[]; portkeyMain: number[]; storeCalls: number[] } = { gateway: [], portkey: [], portkeyMain: [], storeCalls: [] };
      for (let r = 0; r < blockRounds; r++) {
        const started = threadCpuMs(process.pid);
        await floorStore.run(1, { amount: perBlock });
        if (started !== null) floorCpu.push((threadCpuMs(process.pid)! - started) / perBlock);
        // Read each block (the store keeps its last 10,000 requests).
        floorCalls.push((await floorStore.storeCalls()).length / perBlock);
        for (const path of rotateBothWays(paths, r)) {
          const block: number[] = [];
          if (path.id === 'gateway') {
            await gatewayHost.call({ op: 'storeCalls' });
            await gatewayHost.usageStart();
          }
          const portkeyCpu = path.id === 'portkey' && portkey ? processCpuMs(portkey.pid) : null;
          const portkeyMain = path.id === 'portkey' && portkey ? threadCpuMs(portkey.pid) : null;
          for (let i = 0; i < perBlock; i++) block.push(await path.send(path.client));
          if (path.id === 'gateway') {
            // Waits for the block's answers' writes, which count in its CPU.
            const calls = await gatewayHost.call<StoreCall[]>({ op: 'storeCalls' });
            const usage = await gatewayHost.usageStop();
            if (usage.gatewayThreadCpuMs !== null) cpu.gateway.push(usage.gatewayThreadCpuMs / perBlock);
            cpu.storeCalls.push(calls.length / perBlock);
          }
          if (portkeyCpu !== null && portkey) cpu.portkey.push((processCpuMs(portkey.pid)! - portkeyCpu) / perBlock);
          if (portkeyMain !== null && portkey) cpu.portkeyMain.push((threadCpuMs(portkey.pid)! - portkeyMain) / perBlock);
          blocks[path.id].push(block);
        }
      }
      const parses = await gatewayHost.call<ParseCounts>({ op: 'storeParses' });
      const floor = { cpuMs: median(floorCpu), storeCalls: median(floorCalls) };
      await floorStore.close();
      storeAlone = undefined;

      // Store round trips before the provider call, counted at the store (a host of its own, its simulator as the provider).
      const simulated = await startHost(context, 'critical-path', { ...UNLIMITED });
      let critical: CriticalPath;
      try {
        critical = await countCriticalPath(simulated, PROMPT_BODY, context.smoke ? 3 : 20);
      } finally {
        await simulated.close();
      }

      const stat = (id: PathId, p: number) => (samples[id].length ? median(samples[id].map((s) => percentile(s, p))) : null);
      const added = (id: PathId, p: number) => (samples[id].length ? median(samples[id].map((s, r) => percentile(s, p) - percentile(samples.direct[r]!, p))) : null);
      const ours = { p50: added('gateway', 50), p99: added('gateway', 99) };
      const theirs = { p50: added('portkey', 50), p99: added('portkey', 99) };
      const ratio = (a: number | null, b: number | null) => (a === null || b === null || b <= 0 ? null : round(a / b, 2));
      // A path that did not run (Portkey not installed) has no row; the notes say why.
      const ran = (['direct', 'gateway', 'portkey'] as const).filter((id) => paths.some((p) => p.id === id));
      const rows: Row[] = ran.map((id) => {
        const path = paths.find((p) => p.id === id);
        return {
          path: path?.label ?? id,
          p50: nullableRound(stat(id, 50), 3),
          p99: nullableRound(stat(id, 99), 3),
          addedP50: id === 'direct' ? 0 : nullableRound(added(id, 50), 3),
          addedP99: id === 'direct' ? 0 : nullableRound(added(id, 99), 3),
          ratioP50: id === 'gateway' ? ratio(ours.p50, theirs.p50) : id === 'portkey' && path ? 1 : null,
          ratioP99: id === 'gateway' ? ratio(ours.p99, theirs.p99) : id === 'portkey' && path ? 1 : null,
        };
      });
      const blockAdded = (id: PathId, p: number) => (blocks[id].length ? median(blocks[id].map((b, r) => percentile(b, p) - percentile(blocks.direct[r]!, p))) : null);
      const back = { p50: blockAdded('gateway', 50), p99: blockAdded('gateway', 99) };
      const backTheirs = { p50: blockAdded('portkey', 50), p99: blockAdded('portkey', 99) };
      for (const [index, row] of rows.entries()) {
        const id = ran[index]!;
        row.backAddedP50 = id === 'direct' ? 0 : nullableRound(blockAdded(id, 50), 3);
        row.backAddedP99 = id === 'direct' ? 0 : nullableRound(blockAdded(id, 99), 3);
        row.backRatioP50 = id === 'gateway' ? ratio(back.p50, backTheirs.p50) : id === 'portkey' ? 1 : null;
        row.backRatioP99 = id === 'gateway' ? ratio(back.p99, backTheirs.p99) : id === 'portkey' ? 1 : null;
        row.cpuMs = id === 'gateway' && cpu.gateway.length ? round(median(cpu.gateway), 3) : id === 'portkey' && cpu.portkey.length ? round(median(cpu.portkey), 3) : null;
      }
      const gatewayCpu = cpu.gateway.length ? median(cpu.gateway) : null;
      const portkeyCpuMs = cpu.portkey.length ? median(cpu.portkey) : null;
      const portkeyMainMs = cpu.portkeyMain.length ? median(cpu.portkeyMain) : null;
      const floorRatio = gatewayCpu !== null && floor.cpuMs > 0 ? round(gatewayCpu / floor.cpuMs, 2) : null;
      notes.push(
        `CPU per request: gateway thread ${fmt(gatewayCpu)} ms (${round(median(cpu.storeCalls), 2)} store requests each, counted at the store), floor ${fmt(floorCpu.length ? floor.cpuMs : null)} ms (${round(floor.storeCalls, 2)} store requests each; test/bench/store-alone.ts, this process's main thread, a block in each round), Portkey's process ${fmt(portkeyCpuMs)} ms; gateway / floor ${floorRatio ?? 'n/a'}, gateway / Portkey ${ratio(gatewayCpu, portkeyCpuMs) ?? 'n/a'}; main thread against main thread (Portkey's ${fmt(portkeyMainMs)} ms, its V8 helper threads apart as the gateway's are): ${ratio(gatewayCpu, portkeyMainMs) ?? 'n/a'}`,
      );
      notes.push(
        `Store round trips before the provider call, counted at the store (${context.smoke ? 3 : 20} one-model requests, one at a time, to a host with its simulator): median ${critical.beforeProviderMedian}, highest ${critical.beforeProviderMax} (${critical.beforeProvider.join(', ') || 'none'}), on the first request, with the host's caches empty and the account's rate window for this minute not yet open: ${critical.coldBeforeProvider} (${critical.coldOperations.join(', ')}); all store requests of a request: median ${critical.totalMedian} (${critical.all.join(', ')})`,
      );
      notes.push(
        `The store's parses of expressions in the gateway's host: ${parses.remembered} of ${parses.remembered + parses.parsed} from what it remembered (infra/local/parse-memo.cjs)`,
      );
      notes.push(
        `Gateway phases (its Server-Timing header; median over the measured requests): ${describeFigures(medianByName(phases))}; outside = wall time at the client minus total`,
      );
      return {
        status: 'ok',
        notes,
        method: `interleaved: ${rounds} rounds x ${perRound} sequential requests per path (one keep-alive connection each), paths alternating request by request, order rotated per round and reversed every other round, after ${warmup} warm-up requests per path; back to back: then ${warmupBlock} warm-up requests per path, and ${blockRounds} rounds of one block of ${perBlock} consecutive requests per path (order rotated per round and reversed every other round); added = path minus direct in the same round; median of the round figures; CPU per request over each block (gateway: its main thread from /proc/<pid>/task/<pid>/schedstat, once its answers' writes are done; Portkey: its process's utime + stime from /proc/<pid>/stat; the floor: this process's main thread over a block of store-alone requests in each round), median of the blocks`,
        columns: [
          { key: 'path', label: 'path' },
          { key: 'p50', label: 'p50 ms', digits: 3 },
          { key: 'p99', label: 'p99 ms', digits: 3 },
          { key: 'addedP50', label: 'added p50 ms', digits: 3 },
          { key: 'addedP99', label: 'added p99 ms', digits: 3 },
          { key: 'ratioP50', label: 'ratio to Portkey p50', digits: 2 },
          { key: 'ratioP99', label: 'ratio to Portkey p99', digits: 2 },
          { key: 'backAddedP50', label: 'back to back: added p50 ms', digits: 3 },
          { key: 'backAddedP99', label: 'back to back: added p99 ms', digits: 3 },
          { key: 'backRatioP50', label: 'back to back: ratio to Portkey p50', digits: 2 },
          { key: 'backRatioP99', label: 'back to back: ratio to Portkey p99', digits: 2 },
          { key: 'cpuMs', label: 'CPU ms per request', digits: 3 },
        ],
        rows,
        targets: [
          check("added p50 at or below Portkey's (same run)", '<=', nullableRound(theirs.p50, 3), nullableRound(ours.p50, 3), 'ms'),
          check("added p99 at or below Portkey's (same run)", '<=', nullableRound(theirs.p99, 3), nullableRound(ours.p99, 3), 'ms'),
          check("added p50 at or below Portkey's, back to back", '<=', nullableRound(backTheirs.p50, 3), nullableRound(back.p50, 3), 'ms'),
          check("added p99 at or below Portkey's, back to back", '<=', nullableRound(backTheirs.p99, 3), nullableRound(back.p99, 3), 'ms'),
          check('gateway thread CPU per request over the floor', '<=', 1.5, floorRatio, 'x'),
          check("gateway thread CPU per request at or below Portkey's process", '<=', nullableRound(portkeyCpuMs, 3), nullableRound(gatewayCpu, 3), 'ms'),
          check('store round trips before the provider call (highest)', '<=', 1, critical.beforeProviderMax, ''),
        ],
      };
    } finally {
      for (const path of paths) path.client.close();
      await portkey?.close();
      await storeAlone?.close();
      await host?.close();
      await upstream?.close();
    }
  },
};

function expectOk(reply: { status: number; body: string; ms: number }, path: string): number {
  if (reply.status !== 200) throw new Error(`${path}: status ${reply.status}: ${reply.body.slice(0, 300)}`);
  return reply.ms;
}

function fmt(value: number | null): string {
  return value === null ? 'n/a' : value.toFixed(3);
}

function nullableRound(value: number | null, digits: number): number | null {
  return value === null || !Number.isFinite(value) ? null : round(value, digits);
}
