import { beforeEach, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import type { JudgeBehaviour } from '../../infra/local/simulator/judges.js';
import { resolveModel } from '../../shared/catalog/index.js';
import type { JudgingStatistics } from '../../shared/judging/statistics.js';
import type { Evaluation, RankingEntry } from '../../shared/judging/types.js';
import { chatCompletionAnswer } from '../support/fixtures.js';
import { post, useTestHost } from '../support/local.js';

/**
 * Each judge statistic through the local host, against simulator judges told how to behave
 * (consistent, position-biased, length-biased, self-preferring): every figure would come out
 * otherwise if it were computed wrong.
 */
const testHost = useTestHost();
let host: LocalHost;
beforeEach(() => {
  host = testHost();
});

const CONTESTANTS = ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'];

interface Judged {
  results: { modelId: string; output: string; tokensOut: number; usage?: { reasoningTokensOut?: number } }[];
  evaluations: Evaluation[];
  ranking: RankingEntry[];
  judgeStatistics: JudgingStatistics;
}

/** A judged request whose judges behave as told (keyed by judge ID). */
async function judge(behaviours: Record<string, JudgeBehaviour>, models = CONTESTANTS): Promise<Judged> {
  for (const [id, behaviour] of Object.entries(behaviours)) host.simulator.setJudge({ model: resolveModel(id)!.upstreamModel, behaviour });
  const answer = await post(host, { prompt: 'Explain HTTP caching in two sentences.', models, judges: Object.keys(behaviours) });
  expect(answer.status).toBe(200);
  return answer.body as Judged;
}

const statsOf = (body: Judged, judgeModelId: string) => body.judgeStatistics.judges.find((j) => j.judgeModelId === judgeModelId)!;

describe('Judge statistics against judges that behave as told', () => {
  it('two consistent judges: every pair consistent, position A half the time, full agreement', async () => {
    const body = await judge({ 'fam_f-v4-pro': 'consistent', 'fam_g-large': 'consistent' });
    expect(body.evaluations.every((e) => e.status === 'completed' && e.consistent && e.winner !== 'tie')).toBe(true);
    for (const id of ['fam_f-v4-pro', 'fam_g-large']) {
      expect(statsOf(body, id)).toMatchObject({ pairs: 3, positionConsistency: 1, calls: 6, chosePositionA: 0.5, decisive: 1 });
    }
    const [pair] = body.judgeStatistics.agreement!.judgePairs;
    expect(pair).toMatchObject({ judges: ['fam_f-v4-pro', 'fam_g-large'], pairs: 3, agreement: 1 });
    expect([1, null]).toContain(pair!.cohensKappa);
    expect(body.judgeStatistics.agreement!.fleissKappa).toBeNull();
    // Decisive, consistent verdicts give the models different strengths.
    expect(new Set(body.ranking.map((r) => r.strength)).size).toBe(3);
  });

  it('a position-biased judge and a length-biased one: consistency 0 against 1, position A always, the longer answer always, no agreement', async () => {
    const body = await judge({ 'fam_f-v4-pro': 'position-a', 'fam_g-large': 'longer' });
    expect(statsOf(body, 'fam_f-v4-pro')).toMatchObject({ positionConsistency: 0, chosePositionA: 1, decisive: 1 });
    expect(statsOf(body, 'fam_g-large')).toMatchObject({ positionConsistency: 1, longerWon: 1, decisive: 1 });
    // The biased judge's pairs all end in ties, the other's never: no agreement, and none beyond chance.
    expect(body.judgeStatistics.agreement!.judgePairs[0]).toMatchObject({ pairs: 3, agreement: 0, cohensKappa: 0 });
    // The longer answer wins each of the length judge's pairs.
    const length = Object.fromEntries(body.results.map((r) => [r.modelId, r.output.length]));
    for (const e of body.evaluations.filter((e) => e.judgeModelId === 'fam_g-large')) {
      expect(e.winner).toBe(length[e.modelA]! > length[e.modelB]! ? e.modelA : e.modelB);
    }
  });

  it("three judges: Fleiss' kappa over the pairs all of them judged", async () => {
    const body = await judge({ 'fam_f-v4-pro': 'consistent', 'fam_g-large': 'consistent', 'fam_d-4.3': 'position-a' });
    const agreement = body.judgeStatistics.agreement!;
    expect(agreement.judgePairs).toHaveLength(3);
    expect(agreement.fleissPairs).toBe(3);
    // Two raters always agree, the third always says tie while they never do: agreement well below perfect.
    expect(agreement.fleissKappa).not.toBeNull();
    expect(agreement.fleissKappa!).toBeLessThan(0.5);
  });

  it('a judge that prefers itself is flagged, wins its own pairs, and is left out of the ranking where an independent judge judged them', async () => {
    const body = await judge({ 'fam_c-5.4': 'self', 'fam_f-v4-pro': 'consistent' });
    const own = body.evaluations.filter((e) => e.judgeModelId === 'fam_c-5.4' && (e.modelA === 'fam_c-5.4' || e.modelB === 'fam_c-5.4'));
    expect(own).toHaveLength(2);
    for (const e of own) {
      expect(e).toMatchObject({ selfPreference: { modelId: 'fam_c-5.4', relation: 'same-model' }, winner: 'fam_c-5.4', consistent: true, inRanking: false });
    }
    expect(body.evaluations.filter((e) => e.inRanking)).toHaveLength(4);
    const counted = Object.fromEntries(body.ranking.map((r) => [r.modelId, r.evaluations]));
    expect(counted).toEqual({ 'fam_c-5.4': 2, 'fam_a-opus-4-6': 3, 'fam_b-3.1-pro': 3 });
  });

  it("carries both outputs' lengths on every evaluation: what the judges read, without the reasoning a vendor counted apart", async () => {
    const body = await judge({ 'fam_f-v4-pro': 'longer' });
    const byModel = Object.fromEntries(body.results.map((r) => [r.modelId, { tokens: r.tokensOut - (r.usage?.reasoningTokensOut ?? 0), characters: r.output.length }]));
    // Gemini reports its thinking apart, and the simulator's thinks: its lengths count fewer tokens than its tokensOut.
    const gemini = body.results.find((r) => r.modelId === 'fam_b-3.1-pro')!;
    expect(gemini.usage?.reasoningTokensOut).toBeGreaterThan(0);
    for (const e of body.evaluations) {
      expect(e.lengths).toEqual({ [e.modelA]: byModel[e.modelA], [e.modelB]: byModel[e.modelB] });
      expect(e.lengths[e.modelA]!.characters).toBeGreaterThan(0);
    }
  });

  it('counts longerWon in the characters the lengths show (code points): 100 emoji are shorter than 150 letters, though 200 UTF-16 units', async () => {
    // A judge that picks the longer answer by UTF-16 units (the simulator's): the 100 emoji.
    host.simulator.setFault({
      kind: 'status',
      status: 200,
      provider: 'cerebras',
      body: chatCompletionAnswer('😀'.repeat(100), { prompt_tokens: 5, completion_tokens: 100, total_tokens: 105 }),
    });
    host.simulator.setFault({
      kind: 'status',
      status: 200,
      provider: 'mistral',
      body: chatCompletionAnswer('b'.repeat(150), { prompt_tokens: 5, completion_tokens: 40, total_tokens: 45 }),
    });
    const body = await judge({ 'fam_f-v4-pro': 'longer' }, ['fam_e-gpt-oss-120b', 'fam_g-small']);
    const [evaluation] = body.evaluations;
    expect(evaluation).toMatchObject({ winner: 'fam_e-gpt-oss-120b', lengths: { 'fam_e-gpt-oss-120b': { characters: 100 }, 'fam_g-small': { characters: 150 } } });
    // The shorter answer (as the lengths count) won every decisive call.
    expect(statsOf(body, 'fam_f-v4-pro')).toMatchObject({ decisive: 1, longerWon: 0 });
  });
});
