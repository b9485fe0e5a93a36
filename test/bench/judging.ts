/**
 * 3. Judging: 4 models and 2 judges (2 x 4 x 3 = 24 judge calls) through the local
 * workflow, with known upstream latencies: every generating model answers after
 * GENERATION_MS, every judge call after JUDGE_MS, from the provider simulator in a process
 * of its own (as for the fan-out: vendors run on other machines, not on the gateway's
 * thread). The best a two-stage comparison can do is GENERATION_MS + JUDGE_MS (all models
 * at once, then all judge calls at once); the figure is the wall time over that. Skipped,
 * with the reason, while the gateway answers `judges` with 501 (judging not available yet).
 */
import { resolveModel } from '../../shared/catalog/index.js';
import { startHostWithVendors, type HostWithVendors } from './children.js';
import { createClient, json } from './http-client.js';
import { median, round } from './stats.js';
import { check, type Benchmark } from './types.js';

export const JUDGING_MODELS = ['fam_b-3.1-pro', 'fam_d-4.3', 'fam_g-large', 'fam_i-gpt-oss-120b'] as const;
export const JUDGES = ['fam_c-5.4', 'fam_a-sonnet-4-6'] as const;
const GENERATION_MS = 200;
const JUDGE_MS = 300;
const EXPECTED_JUDGE_CALLS = JUDGES.length * JUDGING_MODELS.length * (JUDGING_MODELS.length - 1);

function upstreamModel(id: string): string {
  const entry = resolveModel(id);
  if (!entry) throw new Error(`judging benchmark: ${id} is not in the catalog`);
  return entry.upstreamModel;
}

export const judging: Benchmark = {
  id: 'judging',
  title: '3. Judging (4 models, 2 judges, 24 judge calls)',
  async run(context) {
    const rounds = context.smoke ? 1 : 6;
    const perRound = context.smoke ? 1 : 3;
    const body = JSON.stringify({ prompt: 'Name one prime number and say why it is prime.', models: JUDGING_MODELS, judges: JUDGES });
    const method = `${rounds} rounds x ${perRound} requests after 1 warm-up; generating models answer after ${GENERATION_MS} ms, judge calls after ${JUDGE_MS} ms (the provider simulator in its own process); wall time at the client over ${GENERATION_MS} + ${JUDGE_MS} ms; median of round medians`;
    let started: HostWithVendors | undefined;
    const client = createClient();
    try {
      started = await startHostWithVendors(context, 'judging', 0);
      const { host: target, vendors: simulator } = started;
      for (const id of JUDGING_MODELS) await simulator.setLatency(GENERATION_MS, { model: upstreamModel(id) });
      for (const id of JUDGES) await simulator.setLatency(JUDGE_MS, { model: upstreamModel(id) });
      const judgeModels = new Set<string>(JUDGES.map(upstreamModel));
      // Everything it keeps: the count of judge calls is compared before and after one request.
      const judgeCalls = async () => (await simulator.lastCalls(0)).filter((c) => judgeModels.has(c.model)).length;

      const send = async () => {
        const reply = await client.post(`${target.url}/api/v1/prompt`, body, { authorization: `Bearer ${target.apiKey}` });
        return { reply, answer: reply.body ? json(reply) : undefined };
      };

      const callsBefore = await judgeCalls();
      const probe = await send();
      if (probe.reply.status === 501) {
        return {
          status: 'skipped',
          notes: [`not available yet: the gateway answers judges with 501 (${probe.answer?.error?.code ?? 'no code'}); this benchmark runs as soon as judging lands`],
          method,
          columns: [],
          rows: [],
          targets: [check('wall / (generation + judge latency)', '<=', 1.1, null, 'x')],
        };
      }
      if (probe.reply.status !== 200) throw new Error(`judging: status ${probe.reply.status}: ${probe.reply.body.slice(0, 300)}`);
      const madeCalls = (await judgeCalls()) - callsBefore;
      const evaluations = Array.isArray(probe.answer?.evaluations) ? probe.answer.evaluations.length : 0;
      const notes: string[] = [];
      if (madeCalls !== EXPECTED_JUDGE_CALLS) notes.push(`expected ${EXPECTED_JUDGE_CALLS} judge calls a request, the simulator saw ${madeCalls}`);
      const failedResults = (probe.answer?.results ?? []).filter((r: { status: string }) => r.status !== 'completed').length;
      if (failedResults > 0) notes.push(`${failedResults} model results failed`);

      const samples: number[][] = [];
      for (let r = 0; r < rounds; r++) {
        const roundSamples: number[] = [];
        for (let i = 0; i < perRound; i++) {
          const { reply } = await send();
          if (reply.status !== 200) throw new Error(`judging: status ${reply.status}: ${reply.body.slice(0, 300)}`);
          roundSamples.push(reply.ms);
        }
        samples.push(roundSamples);
      }
      const wall = median(samples.map(median));
      const ideal = GENERATION_MS + JUDGE_MS;
      const ratio = round(wall / ideal, 3);
      return {
        status: 'ok',
        notes,
        method,
        columns: [
          { key: 'models', label: 'models' },
          { key: 'judges', label: 'judges' },
          { key: 'judgeCalls', label: 'judge calls' },
          { key: 'evaluations', label: 'evaluations' },
          { key: 'wallMs', label: 'wall ms', digits: 1 },
          { key: 'idealMs', label: 'generation + judge ms' },
          { key: 'ratio', label: 'wall / (generation + judge)', digits: 3 },
        ],
        rows: [{ models: JUDGING_MODELS.length, judges: JUDGES.length, judgeCalls: madeCalls, evaluations, wallMs: round(wall, 1), idealMs: ideal, ratio }],
        targets: [check('wall / (generation + judge latency)', '<=', 1.1, ratio, 'x')],
      };
    } finally {
      client.close();
      await started?.close();
    }
  },
};
