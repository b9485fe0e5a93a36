import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import { bradleyTerry, fitBradleyTerry, type Games } from '../../shared/judging/bradley-terry.js';
import { seededRandom } from '../../shared/seeded-random.js';
import { rankModels } from '../../shared/judging/ranking.js';
import { rankedEvaluations, selfPreferenceOf } from '../../shared/judging/self-preference.js';
import { cohensKappa, fleissKappa, judgingStatistics } from '../../shared/judging/statistics.js';
import type { Evaluation, EvaluationOrder, RankingEntry, Verdict } from '../../shared/judging/types.js';
import { bradleyTerryCases } from '../support/bradley-terry-cases.js';
import { evaluationOf } from '../support/fixtures.js';

/**
 * Agresti (2002), Categorical Data Analysis, 2nd ed., sec. 10.6: the 1987 season of the
 * American League East, 13 games for each pair of teams, row team's wins over column team.
 */
const TEAMS = ['Milwaukee', 'Detroit', 'Toronto', 'New York', 'Boston', 'Cleveland', 'Baltimore'];
const WINS = [
  [0, 7, 9, 7, 7, 9, 11],
  [6, 0, 7, 5, 11, 9, 9],
  [4, 6, 0, 7, 7, 8, 12],
  [6, 8, 6, 0, 6, 7, 10],
  [6, 2, 6, 7, 0, 7, 12],
  [4, 4, 5, 6, 6, 0, 6],
  [2, 4, 1, 3, 1, 7, 0],
];

function baseballGames(): Games[] {
  const games: Games[] = [];
  for (let i = 0; i < TEAMS.length; i++) {
    for (let j = i + 1; j < TEAMS.length; j++) games.push({ a: i, b: j, winsA: WINS[i]![j]!, winsB: WINS[j]![i]! });
  }
  return games;
}

/** The intervals of bradleyTerry's fit. */
async function bootstrapIntervals(n: number, games: readonly Games[], rounds?: number): Promise<([number, number] | null)[]> {
  return (await bradleyTerry(n, games, rounds)).intervals;
}

describe('Function: fitBradleyTerry', () => {
  // Pinned before the fit was rewritten for speed (the strengths unchanged to the last bit), and taken again when a group
  // whose decisive games alone are one-sided, a tie beside them, came to get virtual ties (4 of the 40 cases moved).
  it('gives, to the last bit, the strengths pinned in the fixture (40 seeded cases)', () => {
    const before = JSON.parse(readFileSync(new URL('../fixtures/bradley-terry-before.json', import.meta.url), 'utf8')) as { theta: unknown }[];
    const cases = bradleyTerryCases(before.length);
    expect(cases.map(({ n, games }) => ({ theta: fitBradleyTerry(n, games) }))).toEqual(before.map(({ theta }) => ({ theta })));
  });

  it("reproduces Agresti's published fit of the 1987 American League East to its printed digits", () => {
    const theta = fitBradleyTerry(TEAMS.length, baseballGames()) as number[];
    const baltimore = theta[6]!;
    // Table 10.11 (Baltimore the reference, 0): Milwaukee 1.58, Detroit 1.44, Toronto 1.29, New York 1.25, Boston 1.11, Cleveland 0.68.
    expect(theta.slice(0, 6).map((t) => (t - baltimore).toFixed(2))).toEqual(['1.58', '1.44', '1.29', '1.25', '1.11', '0.68']);
    // Centred on 0.
    expect(theta.reduce((sum, t) => sum + t, 0)).toBeCloseTo(0, 9);
  });

  it('stays finite where the maximum-likelihood strengths do not exist (a model that won every game)', () => {
    const theta = fitBradleyTerry(3, [
      { a: 0, b: 1, winsA: 1, winsB: 0 },
      { a: 0, b: 2, winsA: 1, winsB: 0 },
      { a: 1, b: 2, winsA: 0.5, winsB: 0.5 },
    ]);
    expect(theta.every((t) => t !== null && Number.isFinite(t))).toBe(true);
    expect(theta[0]!).toBeGreaterThan(theta[1]!);
    expect(theta[1]!).toBeCloseTo(theta[2]!, 9);
  });

  it('gives no strength to a model without games', () => {
    expect(fitBradleyTerry(3, [{ a: 0, b: 1, winsA: 2, winsB: 1 }])[2]).toBeNull();
  });
});

describe('Function: bradleyTerry, its intervals', () => {
  it('is deterministic for the same games and holds the fitted strength', async () => {
    const first = await bootstrapIntervals(TEAMS.length, baseballGames());
    expect(await bootstrapIntervals(TEAMS.length, baseballGames())).toEqual(first);
    const theta = fitBradleyTerry(TEAMS.length, baseballGames()) as number[];
    first.forEach((interval, i) => {
      expect(interval![0]).toBeLessThanOrEqual(theta[i]!);
      expect(interval![1]).toBeGreaterThanOrEqual(theta[i]!);
    });
  });

  // Pinned when the refits came to share their buffers (the intervals unchanged to the last bit), and taken again when a
  // tie beside one-sided decisive games stopped deciding the replay's odds (4 of the 40 cases moved), and when a group's
  // seed came to number its items within it (1 case moved: its item 0 played no game).
  it('gives, to the last bit, the intervals pinned in the fixture (40 seeded cases)', async () => {
    const before = JSON.parse(readFileSync(new URL('../fixtures/bradley-terry-intervals-before.json', import.meta.url), 'utf8')) as { intervals: unknown }[];
    const cases = bradleyTerryCases(before.length, 20261126);
    const now = [];
    for (const { n, games } of cases) now.push({ intervals: await bootstrapIntervals(n, games) });
    expect(now).toEqual(before);
  });

  it("fits and replays each group of linked items on its own: another group's one-sided games change none of its figures", async () => {
    // A beat B 3 to 1: Ford's condition holds, the strengths exist (ln 3 / 2 apart from the mean).
    const alone: Games[] = [
      { a: 0, b: 1, winsA: 1, winsB: 0 },
      { a: 0, b: 1, winsA: 1, winsB: 0 },
      { a: 0, b: 1, winsA: 1, winsB: 0 },
      { a: 0, b: 1, winsA: 0, winsB: 1 },
    ];
    // C beat D 4 to 0, never linked to A or B: its group needs virtual ties, and only its group.
    const beside: Games[] = [...alone, ...Array.from({ length: 4 }, () => ({ a: 2, b: 3, winsA: 1, winsB: 0 }))];
    const [one, both] = [await bradleyTerry(4, alone), await bradleyTerry(4, beside)];
    expect(one.strengths[0]).toBeCloseTo(Math.log(3) / 2, 12);
    expect(both.strengths.slice(0, 2)).toEqual(one.strengths.slice(0, 2));
    expect(both.intervals.slice(0, 2)).toEqual(one.intervals.slice(0, 2));
    expect(both.groups).toEqual([0, 0, 1, 1]);
    // C's group alone gives C the same figures as beside A and B.
    const cd = await bradleyTerry(
      2,
      beside.slice(4).map((game) => ({ ...game, a: 0, b: 1 })),
    );
    expect([both.strengths[2], both.intervals[2]]).toEqual([cd.strengths[0], cd.intervals[0]]);
  });

  it("replays a group the same however many items are numbered before it: another group's items change none of its intervals (a reviewer's case)", async () => {
    // b, c, d: b beat c (3 of 4, a tie), b beat d (3 of 4, a tie), c and d split with a tie.
    const group = (first: number): Games[] => {
      const [b, c, d] = [first, first + 1, first + 2];
      const game = (x: number, y: number, winner: number | 'tie'): Games => ({
        a: x,
        b: y,
        winsA: winner === 'tie' ? 0.5 : winner === x ? 1 : 0,
        winsB: winner === 'tie' ? 0.5 : winner === y ? 1 : 0,
      });
      return [
        ...[b, 'tie', b, b].map((w) => game(b, c, w as number | 'tie')),
        ...[b, 'tie', b, b].map((w) => game(b, d, w as number | 'tie')),
        ...[d, c, c, 'tie'].map((w) => game(c, d, w as number | 'tie')),
      ];
    };
    const alone = await bradleyTerry(3, group(0));
    // a (0) and e (4) split two games, never linked to b, c, d (1 to 3).
    const beside = await bradleyTerry(5, [{ a: 0, b: 4, winsA: 1, winsB: 0 }, { a: 0, b: 4, winsA: 0, winsB: 1 }, ...group(1)]);
    expect(beside.intervals.slice(1, 4)).toEqual(alone.intervals);
    expect(beside.strengths.slice(1, 4)).toEqual(alone.strengths);
  });

  it('lets the event loop run while it refits: a callback set after it starts runs before it ends', async () => {
    // 8 items, every pair played: far more than one turn's millisecond of refits on any machine.
    const games: Games[] = [];
    for (let a = 0; a < 8; a++) for (let b = a + 1; b < 8; b++) games.push({ a, b, winsA: (a + b) % 3, winsB: 1 + ((a * b) % 2) });
    let ran = false;
    const fit = bradleyTerry(8, games, 2_000).then(() => ran);
    setImmediate(() => {
      ran = true;
    });
    expect(await fit).toBe(true);
  });

  it('holds each fitted strength inside its interval, over seeded games with ties, one-sided records and unlinked groups', async () => {
    let checked = 0;
    for (const { n, games } of bradleyTerryCases(60)) {
      const theta = fitBradleyTerry(n, games);
      const intervals = await bootstrapIntervals(n, games);
      theta.forEach((strength, i) => {
        if (strength === null) {
          expect(intervals[i]).toBeNull();
          return;
        }
        checked++;
        expect(strength).toBeGreaterThanOrEqual(intervals[i]![0] - 1e-9);
        expect(strength).toBeLessThanOrEqual(intervals[i]![1] + 1e-9);
      });
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('gives the same strengths and intervals for the same games in any order, either way round (60 seeded cases)', async () => {
    const random = seededRandom(27_182);
    for (const { n, games } of bradleyTerryCases(60)) {
      const reordered = games
        .map((game) => ({ game: random() < 0.5 ? game : { a: game.b, b: game.a, winsA: game.winsB, winsB: game.winsA }, key: random() }))
        .sort((x, y) => x.key - y.key)
        .map(({ game }) => game);
      expect(await bradleyTerry(n, reordered)).toEqual(await bradleyTerry(n, games));
    }
  });

  it('does not let a tie beside one-sided wins separate two items that the wins alone do not: 3 wins and a tie as 4 wins, 5 and a tie no further apart than 6', async () => {
    const games = (wins: number, ties: number): Games[] => [
      ...Array.from({ length: wins }, () => ({ a: 0, b: 1, winsA: 1, winsB: 0 })),
      ...Array.from({ length: ties }, () => ({ a: 0, b: 1, winsA: 0.5, winsB: 0.5 })),
    ];
    const apart = async (g: Games[]) => {
      const [a, b] = await bootstrapIntervals(2, g);
      return a![0] - b![1];
    };
    // Four wins leave the two together; three wins and a tie (less evidence) must too.
    expect(await apart(games(4, 0))).toBeLessThanOrEqual(0);
    expect(await apart(games(3, 1))).toBeLessThanOrEqual(0);
    expect(await apart(games(5, 1))).toBeLessThanOrEqual(await apart(games(6, 0)));
  });

  it('fits with virtual ties a group whose decisive games alone are one-sided, a tie beside them (3 wins and a tie: 4 to 1, not 3.5 to 0.5); another group keeps its plain fit', () => {
    // Group {0, 1, 2}: every pair won both ways. Group {3, 4}: 3 wins and a tie, no loss.
    const fine: Games[] = [
      { a: 0, b: 1, winsA: 8, winsB: 4 },
      { a: 1, b: 2, winsA: 8, winsB: 4 },
      { a: 0, b: 2, winsA: 9, winsB: 3 },
    ];
    const oneSided: Games[] = [...Array.from({ length: 3 }, () => ({ a: 3, b: 4, winsA: 1, winsB: 0 })), { a: 3, b: 4, winsA: 0.5, winsB: 0.5 }];
    const fitted = fitBradleyTerry(5, [...fine, ...oneSided]);
    expect(fitted.slice(0, 3)).toEqual(fitBradleyTerry(3, fine));
    expect(fitted[3]).toBeCloseTo(Math.log(4) / 2, 9);
  });

  it("adds no virtual tie for a model that only tied: the other models' decisive games, a cycle, have their strengths without (a diff reviewer's case)", () => {
    const game = (a: number, b: number, winsA: number, winsB: number, times = 1): Games[] => Array.from({ length: times }, () => ({ a, b, winsA, winsB }));
    // 0 beat 1 three to one, 1 beat 2 two to one, 0 and 2 split: strongly connected. 3 only tied with 0.
    const games = [...game(0, 1, 1, 0, 3), ...game(0, 1, 0, 1), ...game(1, 2, 1, 0, 2), ...game(1, 2, 0, 1), ...game(0, 2, 1, 0), ...game(0, 2, 0, 1), ...game(0, 3, 0.5, 0.5)];
    // The plain maximum-likelihood fit (with a virtual tie on every pair: 0.261, -0.2175, -0.3044, 0.261).
    expect(fitBradleyTerry(4, games).map((t) => t!.toFixed(4))).toEqual(['0.3604', '-0.2804', '-0.4404', '0.3604']);
  });

  it("holds the strength inside its interval where a tie beside one-sided decisive games had set them apart (a reviewer's case: B at 1.29, its interval up to 1.28)", async () => {
    // ma–mb tie, ma–mc: mc, ma–md: md twice, mb–mc tie, mb–md: mb twice, mc–md: md four times.
    const games: Games[] = [
      { a: 0, b: 1, winsA: 0.5, winsB: 0.5 },
      { a: 0, b: 2, winsA: 0, winsB: 1 },
      { a: 0, b: 3, winsA: 0, winsB: 2 },
      { a: 1, b: 2, winsA: 0.5, winsB: 0.5 },
      { a: 1, b: 3, winsA: 2, winsB: 0 },
      { a: 2, b: 3, winsA: 0, winsB: 4 },
    ];
    const { strengths, intervals } = await bradleyTerry(4, games);
    strengths.forEach((strength, i) => {
      expect(strength!).toBeGreaterThanOrEqual(intervals[i]![0]);
      expect(strength!).toBeLessThanOrEqual(intervals[i]![1]);
    });
  });

  it('replays ties as ties: six wins and ten ties, no loss, set the winner apart', async () => {
    const games = [...Array.from({ length: 6 }, () => ({ a: 0, b: 1, winsA: 1, winsB: 0 })), ...Array.from({ length: 10 }, () => ({ a: 0, b: 1, winsA: 0.5, winsB: 0.5 }))];
    const [a, b] = await bootstrapIntervals(2, games);
    expect(a![0]).toBeGreaterThan(b![1]);
  });

  it('recovers strengths drawn at random within their 95 % intervals about 95 % of the time', async () => {
    // 40 sets of 5 models, strengths drawn at random; 8 judges' verdicts per pair simulated from the model.
    const random = seededRandom(2403_04132);
    let covered = 0;
    let total = 0;
    for (let trial = 0; trial < 40; trial++) {
      const strengths = Array.from({ length: 5 }, () => (random() - 0.5) * 3);
      const mean = strengths.reduce((sum, s) => sum + s, 0) / 5;
      const games: Games[] = [];
      for (let a = 0; a < 5; a++) {
        for (let b = a + 1; b < 5; b++) {
          const p = 1 / (1 + Math.exp(strengths[b]! - strengths[a]!));
          for (let verdict = 0; verdict < 8; verdict++) {
            const winsA = random() < p ? 1 : 0;
            games.push({ a, b, winsA, winsB: 1 - winsA });
          }
        }
      }
      const intervals = await bootstrapIntervals(5, games, 100);
      strengths.forEach((s, i) => {
        total++;
        const [low, high] = intervals[i]!;
        if (low <= s - mean && s - mean <= high) covered++;
      });
    }
    const coverage = covered / total;
    // 200 intervals: a true 95 % lands in [0.88, 0.99] with near certainty.
    expect(coverage).toBeGreaterThanOrEqual(0.88);
    expect(coverage).toBeLessThanOrEqual(0.995);
  }, 60_000);
});

const verdict = (winner: Verdict['winner']): Verdict => ({ winner, scoreA: 5, scoreB: 5, reasoning: '' });

function order(answerA: string, answerB: string, winner: Verdict['winner'] | null): EvaluationOrder {
  return {
    answerA,
    answerB,
    status: winner === null ? 'failed' : 'completed',
    verdict: winner === null ? null : verdict(winner),
    winner: winner === null ? null : winner === 'tie' ? 'tie' : winner === 'A' ? answerA : answerB,
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 0,
    providerCost: 0,
  };
}

/** An evaluation of `a` and `b` by `judge`: the verdict of the a-first order, then of the b-first order. */
function evaluation(judge: string, a: string, b: string, aFirst: Verdict['winner'] | null, bFirst: Verdict['winner'] | null, extra: Partial<Evaluation> = {}): Evaluation {
  const orders: [EvaluationOrder, EvaluationOrder] = [order(a, b, aFirst), order(b, a, bFirst)];
  const failed = orders.some((o) => o.status === 'failed');
  const consistent = !failed && orders[0].winner === orders[1].winner;
  return evaluationOf(judge, a, b, orders, { winner: failed ? null : consistent ? orders[0].winner : 'tie', consistent, ...extra });
}

describe('Function: rankModels', () => {
  it('orders by strength, keeps the win rates, shares ranks where intervals overlap, and puts unjudged models last', async () => {
    const evaluations = [
      evaluation('j', 'w', 'x', 'A', 'B'),
      evaluation('j', 'w', 'y', 'tie', 'tie'),
      evaluation('j', 'x', 'y', 'tie', 'tie'),
      evaluation('j', 'w', 'z', 'A', 'B'),
      evaluation('j', 'x', 'z', 'A', 'B'),
      evaluation('j', 'y', 'z', 'A', 'B'),
      evaluation('j', 'w', 'failed', null, null),
    ];
    const ranking = await rankModels(['w', 'x', 'y', 'z', 'failed'], evaluations);
    // w 2.5/3, y 2/3, x 1.5/3, z 0/3.
    expect(ranking.map((r) => [r.modelId, r.winRate, r.wins, r.ties, r.losses, r.evaluations])).toEqual([
      ['w', 0.8333, 2, 1, 0, 3],
      ['y', 0.6667, 1, 2, 0, 3],
      ['x', 0.5, 1, 1, 1, 3],
      ['z', 0, 0, 0, 3, 3],
      ['failed', null, 0, 0, 0, 0],
    ]);
    const [w, y, x, z, failed] = ranking;
    expect(w!.strength!).toBeGreaterThan(y!.strength!);
    expect(y!.strength!).toBeGreaterThan(x!.strength!);
    expect(x!.strength!).toBeGreaterThan(z!.strength!);
    // Each rank is 1 + the models whose interval lies wholly above.
    for (const entry of ranking.slice(0, 4)) {
      const above = ranking.filter((other) => other.interval && other.interval[0] > entry.interval![1]).length;
      expect(entry.rank).toBe(1 + above);
    }
    expect(failed).toMatchObject({ rank: null, strength: null, interval: null });
  });

  it('separates models whose intervals do not overlap', async () => {
    // Many decisive verdicts: a beats b beats c nearly always.
    const evaluations: Evaluation[] = [];
    for (let judge = 0; judge < 12; judge++) {
      evaluations.push(evaluation(`j${judge}`, 'a', 'b', 'A', 'B'), evaluation(`j${judge}`, 'b', 'c', 'A', 'B'), evaluation(`j${judge}`, 'a', 'c', 'A', 'B'));
    }
    evaluations.push(evaluation('j', 'a', 'b', 'B', 'A'), evaluation('j', 'b', 'c', 'B', 'A'), evaluation('j', 'a', 'c', 'B', 'A'));
    const ranking = await rankModels(['c', 'b', 'a'], evaluations);
    expect(ranking.map((r) => [r.modelId, r.rank])).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
  });

  it.each([
    ['one verdict', 1],
    ['four judges all for the same model', 4],
  ])('does not separate two models on %s: their intervals overlap, and they share rank 1', async (_, judges) => {
    const evaluations = Array.from({ length: judges }, (_, judge) => evaluation(`j${judge}`, 'a', 'b', 'A', 'B'));
    const ranking = await rankModels(['a', 'b'], evaluations);
    expect(ranking.map((r) => [r.modelId, r.rank])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    const [a, b] = ranking;
    expect(a!.strength!).toBeGreaterThan(b!.strength!);
    expect(a!.interval![0]).toBeLessThan(a!.interval![1]);
    expect(a!.interval![0]).toBeLessThanOrEqual(b!.interval![1]);
  });

  it('does not rank models that no evaluation links, even through others, against each other', async () => {
    // a and b met, c and d met; nothing links the two pairs (the cross pairs failed).
    const evaluations: Evaluation[] = [];
    for (let judge = 0; judge < 12; judge++) evaluations.push(evaluation(`j${judge}`, 'a', 'b', 'A', 'B'), evaluation(`j${judge}`, 'c', 'd', 'A', 'B'));
    evaluations.push(evaluation('j', 'a', 'b', 'B', 'A'), evaluation('j', 'c', 'd', 'B', 'A'), evaluation('j', 'a', 'c', null, null));
    const ranking = await rankModels(['a', 'b', 'c', 'd'], evaluations);
    const rank = Object.fromEntries(ranking.map((r) => [r.modelId, r.rank]));
    // Each pair is separated within itself; b is not placed below c, nor d below a.
    expect(rank).toEqual({ a: 1, b: 2, c: 1, d: 2 });
  });

  it('shares the rank of models that only tied', async () => {
    const ranking = await rankModels(['a', 'b'], [evaluation('j', 'a', 'b', 'A', 'A')]);
    expect(ranking.map((r) => [r.rank, r.modelId, r.winRate, r.strength])).toEqual([
      [1, 'a', 0.5, 0],
      [1, 'b', 0.5, 0],
    ]);
  });

  it('counts only the evaluations in the ranking', async () => {
    const ranking = await rankModels(['a', 'b'], [evaluation('j', 'a', 'b', 'A', 'B', { inRanking: false })]);
    expect(ranking.every((r) => r.rank === null && r.evaluations === 0)).toBe(true);
  });

  it("gives every model the same strength, interval and rank whatever the order of the request's models and of the evaluations (100 seeded random comparisons)", async () => {
    const random = seededRandom(31_415);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const shuffled = <T>(items: readonly T[]): T[] => {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
      }
      return copy;
    };
    // The same evaluations as a request listing the models in `models` reports them: each pair with its earlier model as modelA.
    const asListed = (models: readonly string[], evaluations: readonly Evaluation[]): Evaluation[] =>
      shuffled(evaluations).map((e) =>
        models.indexOf(e.modelA) < models.indexOf(e.modelB) ? e : { ...e, modelA: e.modelB, modelB: e.modelA, orders: [e.orders[1], e.orders[0]] },
      );
    const byModel = (ranking: readonly RankingEntry[]) => Object.fromEntries(ranking.map((entry) => [entry.modelId, entry]));
    const verdicts: (Verdict['winner'] | null)[] = ['A', 'A', 'B', 'B', 'tie', 'A', 'B', 'tie', 'A', 'B', 'A', 'B', 'tie', 'A', 'B', 'A', 'B', 'A', 'B', null];
    for (let comparison = 0; comparison < 100; comparison++) {
      // 2 to 5 models, 1 to 4 judges; now and then a pair no judge evaluated, an evaluation that failed or that the ranking leaves out.
      const models = shuffled(['o3', 'fam_c-5.4', 'Zeta', 'alpha', 'm-10', 'm-9', 'fam_g-large']).slice(0, 2 + Math.floor(random() * 4));
      const judges = 1 + Math.floor(random() * 4);
      const evaluations: Evaluation[] = [];
      models.forEach((a, i) => {
        for (const b of models.slice(i + 1)) {
          if (random() < 0.1) continue;
          for (let judge = 0; judge < judges; judge++) evaluations.push(evaluation(`j${judge}`, a, b, pick(verdicts), pick(verdicts), { inRanking: random() >= 0.05 }));
        }
      });
      const ranking = byModel(await rankModels(models, evaluations));
      for (const listed of [[...models].reverse(), shuffled(models)]) {
        expect(byModel(await rankModels(listed, asListed(listed, evaluations))), `models ${models.join(', ')} listed as ${listed.join(', ')} (comparison ${comparison})`).toEqual(
          ranking,
        );
      }
    }
  }, 60_000);
});

describe("Function: rankModels, the caller's spelling of an ID", () => {
  it('gives the same strengths, intervals and ranks whether a model is named by its catalog ID or its vendor spelling', async () => {
    // Three judges, two of them consistent for opus over gemini, one always picking answer A (a tie each time).
    const verdicts: [string, Verdict['winner'], Verdict['winner']][] = [
      ['j1', 'A', 'B'],
      ['j2', 'A', 'B'],
      ['j3', 'A', 'A'],
    ];
    const games = (gemini: string) => [
      ...verdicts.map(([judge, first, second]) => evaluation(judge, 'fam_a-opus-4-6', gemini, first, second)),
      ...verdicts.map(([judge, first, second]) => evaluation(judge, 'fam_a-opus-4-6', 'fam_c-5.4', first, second)),
      ...verdicts.map(([judge, first, second]) => evaluation(judge, gemini, 'fam_c-5.4', first, second)),
    ];
    const catalogId = (modelId: string) => resolveModel(modelId)?.id ?? modelId;
    const canonical = await rankModels(['fam_a-opus-4-6', 'fam_b-3.1-pro', 'fam_c-5.4'], games('fam_b-3.1-pro'), catalogId);
    const spelled = await rankModels(['fam_a-opus-4-6', 'gemini-3.1-pro', 'fam_c-5.4'], games('gemini-3.1-pro'), catalogId);
    expect(resolveModel('gemini-3.1-pro')?.id).toBe('fam_b-3.1-pro');
    expect(spelled.map(({ modelId, ...rest }) => ({ modelId: modelId === 'gemini-3.1-pro' ? 'fam_b-3.1-pro' : modelId, ...rest }))).toEqual(canonical);
  });
});

describe('Self-preference', () => {
  /** The catalog entry as declared, before any vendor retired its model (time 0). */
  const entry = (id: string) => resolveModel(id, 0)!;

  it('reads open weights by their maker, not by the host that serves them', () => {
    const of = (judge: string, contestant: string) => selfPreferenceOf(entry(judge), [{ modelId: contestant, entry: entry(contestant) }])?.relation;
    // The same weights on two hosts are the same model; OpenAI's open weights are OpenAI's.
    expect(of('fam_e-gpt-oss-120b', 'fam_i-gpt-oss-120b')).toBe('same-model');
    expect(of('fam_c-5.4', 'fam_i-gpt-oss-120b')).toBe('same-family');
    expect(of('fam_i-gpt-oss-20b', 'fam_e-gpt-oss-120b')).toBe('same-family');
    // Two makers' weights on one host are independent of each other.
    expect(of('fam_i-gpt-oss-120b', 'fam_i-4-scout')).toBeUndefined();
    expect(of('fam_e-gpt-oss-120b', 'fam_e-glm-4.7')).toBeUndefined();
    expect(of('fam_i-3.3-70b', 'fam_i-4-scout')).toBe('same-family');
  });

  it('flags a judge that is a contestant (either spelling), or of the same vendor family as one', () => {
    expect(
      selfPreferenceOf(entry('fam_c-5.4'), [
        { modelId: 'fam_c-5.4', entry: entry('fam_c-5.4') },
        { modelId: 'fam_g-large', entry: entry('fam_g-large') },
      ]),
    ).toEqual({
      modelId: 'fam_c-5.4',
      relation: 'same-model',
    });
    expect(
      selfPreferenceOf(entry('fam_g-large'), [
        { modelId: 'fam_k-8b', entry: entry('fam_k-8b') },
        { modelId: 'fam_c-5.4', entry: entry('fam_c-5.4') },
      ]),
    ).toEqual({
      modelId: 'fam_k-8b',
      relation: 'same-family',
    });
    expect(selfPreferenceOf(entry('o3'), [{ modelId: 'fam_c-4.1', entry: entry('fam_c-4.1') }])).toEqual({ modelId: 'fam_c-4.1', relation: 'same-family' });
    // Once their vendor retired them, o3 and fam_c-4.1 are both answered by gpt-5.4: one model, judging itself.
    const served = (id: string) => resolveModel(id, Date.parse('2027-01-14T00:00:00Z'))!;
    expect(selfPreferenceOf(served('o3'), [{ modelId: 'fam_c-4.1', entry: served('fam_c-4.1') }])).toEqual({ modelId: 'fam_c-4.1', relation: 'same-model' });
    expect(selfPreferenceOf(served('o3'), [{ modelId: 'fam_c-5.4', entry: entry('fam_c-5.4') }])).toEqual({ modelId: 'fam_c-5.4', relation: 'same-model' });
    expect(
      selfPreferenceOf(entry('fam_f-v4-pro'), [
        { modelId: 'fam_c-5.4', entry: entry('fam_c-5.4') },
        { modelId: 'fam_g-large', entry: entry('fam_g-large') },
      ]),
    ).toBeUndefined();
  });

  it('leaves a self-preferring evaluation out of the ranking only where an independent one of the pair exists', () => {
    const own = { modelId: 'a', relation: 'same-model' as const };
    const marked = rankedEvaluations([
      evaluation('a', 'a', 'b', 'A', 'B', { selfPreference: own }),
      evaluation('c', 'a', 'b', 'B', 'A'),
      evaluation('a', 'a', 'd', 'A', 'B', { selfPreference: own }),
    ]);
    expect(marked.map((e) => e.inRanking)).toEqual([false, true, true]);
  });

  it('counts no failed evaluation in the ranking, and says so', () => {
    const marked = rankedEvaluations([evaluation('c', 'a', 'b', 'B', null), evaluation('c', 'a', 'd', null, null), evaluation('c', 'b', 'd', 'A', 'B')]);
    expect(marked.map((e) => [e.status, e.inRanking])).toEqual([
      ['failed', false],
      ['failed', false],
      ['completed', true],
    ]);
  });
});

describe('Function: judgingStatistics', () => {
  const lengths: Record<string, number> = { short: 10, long: 200, mid: 50 };
  /** `evaluation`, its outputs' lengths given as the gateway gives them (characters from `lengths`). */
  const measured = (...args: Parameters<typeof evaluation>): Evaluation => {
    const e = evaluation(...args);
    const length = (modelId: string) => ({ tokens: null, characters: lengths[modelId] ?? 0 });
    return { ...e, lengths: { [e.modelA]: length(e.modelA), [e.modelB]: length(e.modelB) } };
  };

  it('measures each judge: position consistency, position A, decisiveness and the longer answer winning', () => {
    const stats = judgingStatistics(
      ['biased', 'fair'],
      [
        // Always position A: never consistent, decisive every call, the longer answer wins half.
        measured('biased', 'short', 'long', 'A', 'A'),
        measured('biased', 'short', 'mid', 'A', 'A'),
        // Always the longer answer, in either position.
        measured('fair', 'short', 'long', 'B', 'A'),
        measured('fair', 'short', 'mid', 'B', 'A'),
      ],
    );
    expect(stats.judges).toEqual([
      { judgeModelId: 'biased', pairs: 2, positionConsistency: 0, calls: 4, chosePositionA: 1, decisive: 1, longerWon: 0.5 },
      { judgeModelId: 'fair', pairs: 2, positionConsistency: 1, calls: 4, chosePositionA: 0.5, decisive: 1, longerWon: 1 },
    ]);
    // Final verdicts: biased ties both (inconsistent), fair names long and mid: no agreement.
    expect(stats.agreement?.judgePairs).toEqual([{ judges: ['biased', 'fair'], pairs: 2, agreement: 0, cohensKappa: 0 }]);
    expect(stats.agreement?.fleissKappa).toBeNull();
  });

  it("measures agreement on the judges' own verdicts, not on winners that speed or cost decided", () => {
    // Both evaluations' weighted winner is y (the faster, say); j1 picked x in both orders, j2 picked y.
    const stats = judgingStatistics(['j1', 'j2'], [measured('j1', 'x', 'y', 'A', 'B', { winner: 'y' }), measured('j2', 'x', 'y', 'B', 'A', { winner: 'y' })]);
    expect(stats.agreement?.judgePairs).toEqual([expect.objectContaining({ judges: ['j1', 'j2'], pairs: 1, agreement: 0 })]);
  });

  it('has no agreement with one judge, and null shares where nothing was counted', () => {
    const stats = judgingStatistics(['j'], [measured('j', 'short', 'long', null, 'A')]);
    expect(stats.agreement).toBeUndefined();
    expect(stats.judges[0]).toMatchObject({ pairs: 0, positionConsistency: null, calls: 1, longerWon: 1 });
  });
});

describe("Cohen's and Fleiss' kappa", () => {
  it('match textbook values', () => {
    // Perfect agreement over varied outcomes: 1. Agreement no better than chance: 0.
    expect(
      cohensKappa([
        [0, 0],
        [1, 1],
        [2, 2],
        [0, 0],
      ]),
    ).toBe(1);
    expect(
      cohensKappa([
        [0, 0],
        [0, 1],
        [1, 0],
        [1, 1],
      ]),
    ).toBe(0);
    // 2 raters, 10 subjects: po = 0.7; marginals (0.5, 0.5) and (0.6, 0.4): pe = 0.5; kappa 0.4.
    const pairs: [0 | 1, 0 | 1][] = [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 1],
      [1, 1],
      [1, 1],
      [1, 1],
      [1, 0],
      [1, 0],
    ];
    expect(cohensKappa(pairs.map(([a, b]) => [a, b]))).toBe(0.4);
    // Fleiss with 2 raters equals Scott's pi: po 0.7, pooled (0.55, 0.45): pe 0.505; (0.7 − 0.505) / 0.495.
    expect(fleissKappa(pairs.map(([a, b]) => [a, b]))).toBe(Math.round((0.195 / 0.495) * 10_000) / 10_000);
    expect(
      cohensKappa([
        [2, 2],
        [2, 2],
      ]),
    ).toBeNull();
  });

  it('Fleiss: every rater agreeing on varied subjects is 1', () => {
    expect(
      fleissKappa([
        [0, 0, 0],
        [1, 1, 1],
        [2, 2, 2],
      ]),
    ).toBe(1);
  });

  it('Fleiss stays within [-1, 1] for any ratings', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom<0 | 1 | 2>(0, 1, 2), { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 20 }), (ratings) => {
        const kappa = fleissKappa(ratings);
        if (kappa !== null) {
          expect(kappa).toBeGreaterThanOrEqual(-1);
          expect(kappa).toBeLessThanOrEqual(1);
        }
      }),
    );
  });
});
