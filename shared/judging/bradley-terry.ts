import { fnv1a, seededRandom } from '../seeded-random.js';

/**
 * Bradley-Terry strengths by maximum likelihood (Newton-Raphson), and a
 * seeded bootstrap for their intervals: P(i beats j) = 1 / (1 + e^(θj − θi)).
 */

/** Games between items `a` and `b`: each side's wins, a tie counting half a win to each. */
export interface Games {
  a: number;
  b: number;
  winsA: number;
  winsB: number;
}

/** A pair's games merged (a < b), with how many of them were ties: games given with equal wins on both sides. */
interface PairGames extends Games {
  ties: number;
}

const MAX_ITERATIONS = 100;
const TOLERANCE = 1e-10;
/**
 * Where the maximum-likelihood strengths do not exist (an item that won, or lost, every
 * game it played within its group), or would not without the group's ties (every decisive
 * game, fitPairs), every compared pair gets this many virtual ties: the fit stays finite,
 * and such an item's interval shows how little is known.
 */
export const VIRTUAL_TIES = 1;

/**
 * Log strengths θ of `n` items from their games, centred to mean 0 within each group of
 * items linked by games; null for an item that played none. The pairs are summed in the
 * order the games first name them (bradleyTerry's in the order of their items: its strengths
 * can differ from these in the last bit).
 */
export function fitBradleyTerry(n: number, games: readonly Games[]): (number | null)[] {
  const pairs = played(n, games);
  return fitPairs(n, pairs, linked(n, pairs));
}

/** The pairs that played, their games merged. */
function played(n: number, games: readonly Games[]): PairGames[] {
  return tally(n, games).filter((p) => p.winsA + p.winsB > 0);
}

/** Pairs in the order of their items, whatever the order the games came in. */
function byItems(x: Games, y: Games): number {
  return x.a - y.a || x.b - y.b;
}

/** The groups of items linked by the pairs' games (an item without games is in none). */
function linked(n: number, pairs: readonly Games[]): number[][] {
  return components(n, pairs).filter((group) => group.length > 1);
}

/**
 * fitBradleyTerry of games already merged per pair, with their groups: each group fitted on
 * its own (a group shares no game with another, nor its odds), with virtual ties on its
 * pairs where Ford's condition fails for its decisive games, in each set of items they link
 * (an item that only tied is in none): a tie links two items both
 * ways but says nothing of which is stronger, so one tie beside wins all one way would give
 * strengths whose odds decide every replayed decisive game the same way (bradleyTerry: 3
 * wins and a tie would set two items apart where 4 wins do not), and the strengths reported
 * would not be those the intervals are replayed from.
 */
function fitPairs(n: number, pairs: readonly PairGames[], groups: readonly number[][]): (number | null)[] {
  const work = fordWork(n);
  // The decisive games, and the sets of items they link: an item that only tied has none, and
  // breaks no set's condition (its pair replays only ties).
  const decisive = pairs.map((p) => ({ a: p.a, b: p.b, winsA: p.winsA - p.ties / 2, winsB: p.winsB - p.ties / 2 })).filter((p) => p.winsA + p.winsB > 0);
  const decisiveSets = linked(n, decisive);
  const systems = groups.map((group) => {
    const [system] = systemsOf(n, pairs, [group]) as [GroupSystem];
    const inGroup = new Set(group);
    const decisiveInGroup = systemsOf(
      n,
      decisive,
      decisiveSets.filter((set) => inGroup.has(set[0] as number)),
    );
    if (fordHolds(decisiveInGroup, work)) return system;
    const tied = system.pairs.map((p) => ({ ...p, winsA: p.winsA + VIRTUAL_TIES / 2, winsB: p.winsB + VIRTUAL_TIES / 2 }));
    return systemsOf(n, tied, [group])[0] as GroupSystem;
  });
  const theta = new Array<number>(n).fill(0);
  newton(systems, theta, new Array<number>(n));
  const centred: (number | null)[] = new Array(n).fill(null);
  centre(theta, groups, (item, strength) => {
    centred[item] = strength;
  });
  return centred;
}

/** Each grouped item's strength centred to mean 0 within its group, handed to `each` (nothing allocated: the bootstrap centres every refit). */
function centre(theta: readonly number[], groups: readonly number[][], each: (item: number, strength: number) => void): void {
  for (const group of groups) {
    let sum = 0;
    for (const i of group) sum += theta[i] as number;
    const mean = sum / group.length;
    for (const i of group) each(i, (theta[i] as number) - mean);
  }
}

/** Games merged per unordered pair (a < b). */
function tally(n: number, games: readonly Games[]): PairGames[] {
  const byPair = new Map<number, PairGames>();
  for (const game of games) {
    if (game.a === game.b || game.a < 0 || game.b < 0 || game.a >= n || game.b >= n) continue;
    const ordered = game.a < game.b;
    const a = ordered ? game.a : game.b;
    const b = ordered ? game.b : game.a;
    const key = a * n + b;
    let pair = byPair.get(key);
    if (!pair) {
      pair = { a, b, winsA: 0, winsB: 0, ties: 0 };
      byPair.set(key, pair);
    }
    pair.winsA += ordered ? game.winsA : game.winsB;
    pair.winsB += ordered ? game.winsB : game.winsA;
    if (game.winsA === game.winsB) pair.ties += game.winsA + game.winsB;
  }
  return [...byPair.values()];
}

/** The buffers fordHolds works in, for n items. */
function fordWork(n: number): { seen: Uint8Array; stack: Int32Array } {
  return { seen: new Uint8Array(n), stack: new Int32Array(n) };
}

/**
 * Ford's condition, per group of linked items: the strengths exist when, within each group,
 * every item can be reached from every other by a chain of "won something against", that
 * is, from the group's first item both by "won something against" and by "lost something
 * to". Allocates nothing: a bootstrap checks every refit.
 */
function fordHolds(systems: readonly GroupSystem[], work: { seen: Uint8Array; stack: Int32Array }): boolean {
  for (const { group, pairs } of systems) {
    for (let pass = 0; pass < 2; pass++) {
      const forward = pass === 0;
      const { seen, stack } = work;
      seen.fill(0);
      const first = group[0] as number;
      seen[first] = 1;
      stack[0] = first;
      let size = 1;
      let reached = 1;
      while (size > 0) {
        const item = stack[--size] as number;
        for (const { a, b, winsA, winsB } of pairs) {
          // forward: item beat the other side; backward: the other side beat item.
          const other = a === item ? ((forward ? winsA : winsB) > 0 ? b : -1) : b === item ? ((forward ? winsB : winsA) > 0 ? a : -1) : -1;
          if (other === -1 || seen[other]) continue;
          seen[other] = 1;
          stack[size++] = other;
          reached++;
        }
      }
      if (reached !== group.length) return false;
    }
  }
  return true;
}

/** Groups of items linked by games, each in increasing order. */
function components(n: number, pairs: readonly Games[]): number[][] {
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] as number] as number;
    return i;
  };
  for (const { a, b } of pairs) parent[find(a)] = find(b);
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = find(i);
    const group = groups.get(root);
    if (group) group.push(i);
    else groups.set(root, [i]);
  }
  return [...groups.values()];
}

/**
 * One group's Newton system: its items (the first held at 0: the scale is free), each
 * item's row in the system (-1: the group's first item, or another group's), its pairs, and
 * the buffers a step works in. Made once a fit, or once a bootstrap for all its refits,
 * whose pairs are the same objects with other wins.
 */
interface GroupSystem {
  group: readonly number[];
  row: Int32Array;
  pairs: readonly Games[];
  gradient: number[];
  hessian: number[];
  system: number[];
  step: number[];
}

function systemsOf(n: number, pairs: readonly Games[], groups: readonly number[][]): GroupSystem[] {
  return groups.map((group) => {
    const m = group.length - 1;
    const row = new Int32Array(n).fill(-1);
    for (let k = 1; k < group.length; k++) row[group[k] as number] = k - 1;
    const first = group[0] as number;
    return {
      group,
      row,
      pairs: pairs.filter((p) => p.a === first || row[p.a] !== -1),
      gradient: new Array<number>(m),
      hessian: new Array<number>(m * m),
      system: new Array<number>(m * (m + 1)),
      step: new Array<number>(m),
    };
  });
}

/**
 * Newton-Raphson on the log-likelihood, one group of linked items at a time with its first
 * item held at 0, from the strengths in `theta` (relative to each group's first item) into
 * `theta`, halving a step that would lower the likelihood; `next` is a buffer of n. Converges
 * in a handful of steps where the strengths exist (Ford's condition).
 */
function newton(systems: readonly GroupSystem[], theta: number[], next: number[]): void {
  const n = theta.length;
  for (const { group, row, pairs, gradient, hessian, system, step } of systems) {
    const m = group.length - 1;
    step.fill(0);
    let current = logLikelihood(theta, pairs);
    for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
      gradient.fill(0);
      hessian.fill(0);
      for (const { a, b, winsA, winsB } of pairs) {
        const pa = 1 / (1 + Math.exp((theta[b] as number) - (theta[a] as number)));
        const games = winsA + winsB;
        const curvature = games * pa * (1 - pa);
        const ia = row[a] as number;
        const ib = row[b] as number;
        if (ia !== -1) {
          gradient[ia] = (gradient[ia] as number) + winsA - games * pa;
          hessian[ia * m + ia] = (hessian[ia * m + ia] as number) + curvature;
        }
        if (ib !== -1) {
          gradient[ib] = (gradient[ib] as number) - (winsA - games * pa);
          hessian[ib * m + ib] = (hessian[ib * m + ib] as number) + curvature;
        }
        if (ia !== -1 && ib !== -1) {
          hessian[ia * m + ib] = (hessian[ia * m + ib] as number) - curvature;
          hessian[ib * m + ia] = (hessian[ib * m + ia] as number) - curvature;
        }
      }
      if (!solve(m, hessian, gradient, system, step)) break;
      let scale = 1;
      let likelihood = current;
      for (let halving = 0; halving < 30; halving++, scale /= 2) {
        for (let i = 0; i < n; i++) next[i] = theta[i] as number;
        for (let k = 0; k < m; k++) {
          const item = group[k + 1] as number;
          next[item] = (theta[item] as number) + scale * (step[k] as number);
        }
        likelihood = logLikelihood(next, pairs);
        if (likelihood >= current - 1e-12) break;
      }
      let change = -Infinity;
      for (let k = 0; k < m; k++) change = Math.max(change, Math.abs((step[k] as number) * scale));
      for (let k = 1; k < group.length; k++) theta[group[k] as number] = next[group[k] as number] as number;
      current = likelihood;
      if (change < TOLERANCE) break;
    }
  }
}

function logLikelihood(theta: readonly number[], pairs: readonly Games[]): number {
  let sum = 0;
  for (const { a, b, winsA, winsB } of pairs) {
    const d = (theta[a] as number) - (theta[b] as number);
    // log σ(d) = −log(1 + e^−d), computed without overflow.
    sum -= winsA * softplus(-d) + winsB * softplus(d);
  }
  return sum;
}

function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/**
 * Solves H x = g (H: m x m, row by row) by Gaussian elimination with partial pivoting, into
 * `x`, with `a` (m x (m + 1)) to work in; false when H is singular.
 */
function solve(m: number, matrix: readonly number[], vector: readonly number[], a: number[], x: number[]): boolean {
  const width = m + 1;
  for (let i = 0; i < m; i++) {
    for (let k = 0; k < m; k++) a[i * width + k] = matrix[i * m + k] as number;
    a[i * width + m] = vector[i] as number;
  }
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(a[r * width + col] as number) > Math.abs(a[pivot * width + col] as number)) pivot = r;
    if (Math.abs(a[pivot * width + col] as number) < 1e-12) return false;
    if (pivot !== col) {
      for (let k = 0; k < width; k++) {
        const held = a[col * width + k] as number;
        a[col * width + k] = a[pivot * width + k] as number;
        a[pivot * width + k] = held;
      }
    }
    for (let r = col + 1; r < m; r++) {
      const factor = (a[r * width + col] as number) / (a[col * width + col] as number);
      for (let k = col; k <= m; k++) a[r * width + k] = (a[r * width + k] as number) - factor * (a[col * width + k] as number);
    }
  }
  for (let r = m - 1; r >= 0; r--) {
    let sum = a[r * width + m] as number;
    for (let k = r + 1; k < m; k++) sum -= (a[r * width + k] as number) * (x[k] as number);
    x[r] = sum / (a[r * width + r] as number);
  }
  return true;
}

export const BOOTSTRAP_ROUNDS = 500;
/** The longest the bootstrap holds the thread before it lets the event loop run (about 150 refits of 4 models here). */
const TURN_MS = 1;

/** A Bradley-Terry fit with its intervals, and the groups its strengths are centred in. */
export interface BradleyTerryFit {
  /** fitBradleyTerry's strengths. */
  strengths: (number | null)[];
  /** 95 % intervals, null for an item without games. */
  intervals: ([number, number] | null)[];
  /** Each item's group of items linked by games (an index; null without games): strengths of different groups are each centred on their own, not on one scale. */
  groups: (number | null)[];
}

/**
 * The strengths of fitBradleyTerry and their 95 % intervals, by a parametric bootstrap:
 * `rounds` times, every game is played again (as many times as it was played: `winsA +
 * winsB`), a tie as often as the pair tied, the other games decided so that the pair's
 * expected wins are those the fitted strengths give (virtual ties included where that fit
 * needs them), the strengths refitted, and the 2.5th and 97.5th percentiles of an item's
 * refits kept. Who met whom, and how often, stays as observed, so a refit never splits a
 * group of linked items; and a one-sided record (a single verdict, or every verdict one
 * way) is played again at the odds its fit gives, so it does not separate two items on its
 * own, as redrawing the observed games (which only repeats them) would. Seeded by the
 * games, so the same games always give the same result to the last bit, in whatever order
 * they come and whichever item each names first: their pairs are fitted, seeded and replayed
 * in the order of their items (wins of whole and half games, as rankModels gives, add up
 * exactly in any order). How the items are numbered does change it: rankModels numbers
 * them in the order of their IDs.
 */
export async function bradleyTerry(n: number, games: readonly Games[], rounds: number = BOOTSTRAP_ROUNDS): Promise<BradleyTerryFit> {
  const pairs = played(n, games).sort(byItems);
  const groups = linked(n, pairs);
  const strengths = fitPairs(n, pairs, groups);
  const groupOf: (number | null)[] = new Array(n).fill(null);
  groups.forEach((group, index) => {
    for (const item of group) groupOf[item] = index;
  });
  const draws: number[][] = Array.from({ length: n }, () => []);
  const theta = new Array<number>(n);
  const next = new Array<number>(n);
  const ford = fordWork(n);
  const keepDraw = (item: number, strength: number) => {
    draws[item]!.push(strength);
  };
  let turnStarted = performance.now();
  // Each group replayed on its own, seeded by its own games with its items numbered within it
  // (in the order of their numbers): another group, which shares no game with it, changes none
  // of its draws, nor does how many items are numbered before it.
  for (const group of groups) {
    const local = new Map([...group].sort((x, y) => x - y).map((item, index) => [item, index]));
    const own = pairs.filter((pair) => local.has(pair.a));
    const random = seededRandom(fnv1a(JSON.stringify(own.map((pair) => ({ ...pair, a: local.get(pair.a), b: local.get(pair.b) })))));
    // Each pair's games replayed with their observed share of ties, the rest decided so that
    // a's expected share of the wins is the fitted probability p: a tie replayed as a win or a
    // loss would vary more than the tie did, and widen the interval.
    const odds = own.map(({ a, b, winsA, winsB, ties }) => {
      const times = Math.round(winsA + winsB);
      const tieShare = ties / (winsA + winsB);
      const p = 1 / (1 + Math.exp((strengths[b] as number) - (strengths[a] as number)));
      const decisive = tieShare >= 1 ? 0.5 : Math.min(1, Math.max(0, (p - tieShare / 2) / (1 - tieShare)));
      return { times, tieShare, decisive };
    });
    // Every refit plays the same pairs (one each, each played: the same group), so they share
    // one set of pairs whose wins are redrawn, and their Newton system and buffers: nothing is
    // allocated a refit.
    const replayed: Games[] = own.map(({ a, b }) => ({ a, b, winsA: 0, winsB: 0 }));
    const systems = systemsOf(n, replayed, [group]);
    for (let round = 0; round < rounds; round++) {
      // The event loop's turn once a refit ends past TURN_MS: other requests never wait long on this.
      if (performance.now() - turnStarted >= TURN_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        turnStarted = performance.now();
      }
      odds.forEach(({ times, tieShare, decisive }, k) => {
        let winsA = 0;
        for (let draw = 0; draw < times; draw++) {
          if (random() < tieShare) winsA += 0.5;
          else if (random() < decisive) winsA++;
        }
        const pair = replayed[k] as Games;
        pair.winsA = winsA;
        pair.winsB = times - winsA;
      });
      if (!fordHolds(systems, ford)) {
        for (const pair of replayed) {
          pair.winsA += VIRTUAL_TIES / 2;
          pair.winsB += VIRTUAL_TIES / 2;
        }
      }
      theta.fill(0);
      newton(systems, theta, next);
      centre(theta, [group], keepDraw);
    }
  }
  const intervals = draws.map((values): [number, number] | null => {
    if (values.length === 0) return null;
    values.sort((x, y) => x - y);
    return [percentile(values, 0.025), percentile(values, 0.975)];
  });
  return { strengths, intervals, groups: groupOf };
}

/** Linear interpolation between closest ranks. */
function percentile(sorted: readonly number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
}
