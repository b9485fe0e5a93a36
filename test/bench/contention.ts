/**
 * 6. Credit contention: N concurrent requests (200) on one fresh account whose balance
 * covers only some of their estimates at once, one-model requests to the zero-latency
 * upstream. Throughput, and the correctness counts: every request answered 200 or 402
 * (nothing else), no reservation left open, the final balance equal to the ledger's sum,
 * never negative, and equal to the opening balance less what the 200s say they charged.
 */
import { startHost, startUpstream, UNLIMITED, type Host, type Upstream } from './children.js';
import { createClient, json } from './http-client.js';
import { median, round } from './stats.js';
import { OVERHEAD_MODEL } from './overhead.js';
import { check, type Benchmark, type Row } from './types.js';

/** How many estimates the opening balance covers at once. */
const COVERED_ESTIMATES = 50;
const BODY = JSON.stringify({ prompt: 'Say hello', models: [OVERHEAD_MODEL] });

export const contention: Benchmark = {
  id: 'contention',
  title: '6. Credit contention (concurrent requests on one account)',
  async run(context) {
    const rounds = context.smoke ? 1 : 3;
    const concurrent = context.smoke ? 20 : 200;
    const covered = context.smoke ? 5 : COVERED_ESTIMATES;
    let upstream: Upstream | undefined;
    let host: Host | undefined;
    const client = createClient();
    const fresh: ReturnType<typeof createClient>[] = [];
    try {
      upstream = await startUpstream();
      host = await startHost(context, 'contention', { ...UNLIMITED, GROQ_API_KEY: 'gsk_bench', GROQ_BASE_URL: `${upstream.url}/v1` });
      const target = host;
      const post = (apiKey: string) => client.post(`${target.url}/api/v1/prompt`, BODY, { authorization: `Bearer ${apiKey}` });

      // The estimate of one request, from a 402 on an account that holds almost nothing.
      const probe = await target.call<{ accountId: string; apiKey: string }>({ op: 'openAccount', balanceMicro: 1 });
      const refusal = await post(probe.apiKey);
      if (refusal.status !== 402) throw new Error(`contention: expected 402 on an empty account, got ${refusal.status}: ${refusal.body.slice(0, 200)}`);
      const estimateMicro = Math.round(Number(json(refusal).estimatedCreditsRequired) * 1e6);
      if (!(estimateMicro > 0)) throw new Error(`contention: no estimate in the 402: ${refusal.body.slice(0, 200)}`);
      for (let i = 0; i < 3; i++) await post(target.apiKey); // warm the request path

      const rows: Row[] = [];
      let others = 0;
      let mismatches = 0;
      let negatives = 0;
      let chargeMismatches = 0;
      let openReservations = 0;
      for (let r = 0; r < rounds; r++) {
        const openingMicro = estimateMicro * covered;
        const account = await target.call<{ accountId: string; apiKey: string }>({ op: 'openAccount', balanceMicro: openingMicro });
        // New connections each round, none of them idle from the round before.
        const roundClient = createClient();
        fresh.push(roundClient);
        const started = performance.now();
        const replies = await Promise.all(
          Array.from({ length: concurrent }, () => roundClient.post(`${target.url}/api/v1/prompt`, BODY, { authorization: `Bearer ${account.apiKey}` })),
        );
        roundClient.close();
        const wallMs = performance.now() - started;
        const ok = replies.filter((reply) => reply.status === 200);
        const refused = replies.filter((reply) => reply.status === 402).length;
        const other = replies.length - ok.length - refused;
        const chargedMicro = ok.reduce((sum, reply) => sum + Math.round(Number(json(reply).creditsUsed) * 1e6), 0);
        const state = await target.call<{ balanceMicro: number; reservations: number } | null>({ op: 'balance', accountId: account.accountId });
        const ledgerMicro = await target.call<number>({ op: 'ledgerSum', accountId: account.accountId });
        const balanceMicro = state?.balanceMicro ?? Number.NaN;
        others += other;
        if (balanceMicro !== ledgerMicro) mismatches++;
        if (balanceMicro < 0) negatives++;
        if (openingMicro - balanceMicro !== chargedMicro) chargeMismatches++;
        openReservations += state?.reservations ?? 0;
        rows.push({
          round: r + 1,
          requests: concurrent,
          wallMs: round(wallMs, 1),
          rps: round((concurrent * 1000) / wallMs, 0),
          ok: ok.length,
          refused402: refused,
          other,
          openingCredits: openingMicro / 1e6,
          balanceCredits: balanceMicro / 1e6,
          ledgerCredits: ledgerMicro / 1e6,
          chargedCredits: chargedMicro / 1e6,
          balanceIsLedger: balanceMicro === ledgerMicro ? 'yes' : 'NO',
        });
      }
      const medianRps = round(median(rows.map((row) => row.rps as number)), 0);
      return {
        status: 'ok',
        notes: [`one request's estimate: ${estimateMicro / 1e6} credits; each round's fresh account opens with ${covered} estimates; median throughput ${medianRps} requests/s`],
        method: `${rounds} rounds, each ${concurrent} requests sent at once (one connection each) on a fresh account; throughput = requests / wall time; balance and ledger read from the store once every answered request has settled`,
        columns: [
          { key: 'round', label: 'round' },
          { key: 'requests', label: 'requests' },
          { key: 'wallMs', label: 'wall ms', digits: 1 },
          { key: 'rps', label: 'requests/s' },
          { key: 'ok', label: '200' },
          { key: 'refused402', label: '402' },
          { key: 'other', label: 'other' },
          { key: 'openingCredits', label: 'opening', digits: 6 },
          { key: 'balanceCredits', label: 'final balance', digits: 6 },
          { key: 'ledgerCredits', label: 'ledger sum', digits: 6 },
          { key: 'chargedCredits', label: 'sum of creditsUsed', digits: 6 },
          { key: 'balanceIsLedger', label: 'balance = ledger' },
        ],
        rows,
        targets: [
          check('answers other than 200 or 402', '<=', 0, others, 'requests'),
          check('rounds whose final balance differs from the ledger sum', '<=', 0, mismatches, 'rounds'),
          check('rounds ending with a negative balance', '<=', 0, negatives, 'rounds'),
          check('rounds where opening - final balance differs from the creditsUsed answered', '<=', 0, chargeMismatches, 'rounds'),
          check('reservations left open', '<=', 0, openReservations, 'reservations'),
        ],
      };
    } finally {
      for (const c of fresh) c.close();
      client.close();
      await host?.close();
      await upstream?.close();
    }
  },
};
