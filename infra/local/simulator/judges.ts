/**
 * How the simulator's judges decide, per judge model: it reads the two answers from the
 * judge prompt's <answer_a> and <answer_b> and decides as its behaviour says, `position-a`
 * unless told another (the position bias the swap cancels), with scores that agree with
 * its winner (the gateway refuses a verdict its own scores contradict). Each behaviour is one a real
 * judge shows (MT-Bench, Zheng et al. 2023), so that every judge statistic has a judge
 * that moves it.
 */
import { fnv1a } from '../../../shared/seeded-random.js';
import type { FaultMatch } from './faults.js';
import type { Json } from './json.js';

export const JUDGE_BEHAVIOURS = ['position-a', 'consistent', 'longer', 'self'] as const;
/**
 * - `position-a`: always the answer shown first;
 * - `consistent`: the same answer whichever position it is in (a fixed preference, from its text);
 * - `longer`: the longer answer;
 * - `self`: the answer the judge wrote itself (the simulator's answers name their model), else as `consistent`.
 */
export type JudgeBehaviour = (typeof JUDGE_BEHAVIOURS)[number];

export type JudgeRule = FaultMatch & { behaviour: JudgeBehaviour };

/** Validates an untrusted value (the body of POST /__sim/judges). */
export function parseJudgeRule(input: unknown): { ok: true; rule: JudgeRule } | { ok: false; error: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, error: 'judge rule must be a JSON object' };
  const r = input as Record<string, unknown>;
  if (typeof r['behaviour'] !== 'string' || !(JUDGE_BEHAVIOURS as readonly string[]).includes(r['behaviour'])) {
    return { ok: false, error: `behaviour must be one of ${JUDGE_BEHAVIOURS.join(', ')}` };
  }
  const rule: JudgeRule = { behaviour: r['behaviour'] as JudgeBehaviour };
  for (const key of ['provider', 'model'] as const) {
    const value = r[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value === '') return { ok: false, error: `${key} must be a non-empty string` };
    rule[key] = value;
  }
  return { ok: true, rule };
}

/** The text between the first `<tag>` line and the next `</tag>` line: found with two searches, linear in any prompt. */
function framed(text: string, tag: string): string | undefined {
  const open = text.indexOf(`<${tag}>\n`);
  if (open < 0) return undefined;
  const start = open + tag.length + 3;
  const close = text.indexOf(`\n</${tag}>`, start);
  return close < 0 ? undefined : text.slice(start, close);
}

/** The two answers of a judge prompt found anywhere in a request body, or undefined for a request that is no judge call. */
function judgedAnswers(body: unknown): { a: string; b: string } | undefined {
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      const a = framed(value, 'answer_a');
      const b = framed(value, 'answer_b');
      if (a !== undefined && b !== undefined) return { a, b };
    } else if (value !== null && typeof value === 'object') {
      stack.push(...Object.values(value));
    }
  }
  return undefined;
}

function decide(behaviour: JudgeBehaviour, model: string, { a, b }: { a: string; b: string }): 'A' | 'B' | 'tie' {
  switch (behaviour) {
    case 'position-a':
      return 'A';
    case 'longer':
      return a.length === b.length ? 'tie' : a.length > b.length ? 'A' : 'B';
    case 'self': {
      const own = `Simulated answer from ${model}:`;
      if (a.startsWith(own) !== b.startsWith(own)) return a.startsWith(own) ? 'A' : 'B';
      return decide('consistent', model, { a, b });
    }
    case 'consistent':
      return fnv1a(a) === fnv1a(b) ? 'tie' : fnv1a(a) < fnv1a(b) ? 'A' : 'B';
  }
}

/** What a judge no rule matches does. */
const UNTOLD: JudgeRule = { behaviour: 'position-a' };

/** The judges told how to behave; the first matching rule wins, as with faults. */
export class JudgeRules {
  private rules: JudgeRule[] = [];

  add(rule: JudgeRule): void {
    this.rules.push(rule);
  }

  clear(): void {
    this.rules = [];
  }

  /** The verdict a judge answers with, as its rule or `position-a` says; undefined for a call that is not a judge call. */
  verdictFor(provider: string, model: string, body: unknown): Json | undefined {
    const rule = this.rules.find((r) => (r.provider === undefined || r.provider === provider) && (r.model === undefined || r.model === model)) ?? UNTOLD;
    const answers = judgedAnswers(body);
    if (!answers) return undefined;
    const winner = decide(rule.behaviour, model, answers);
    return {
      reasoning: `Simulated ${rule.behaviour} judge.`,
      scoreA: winner === 'A' ? 8 : winner === 'tie' ? 6 : 4,
      scoreB: winner === 'B' ? 8 : winner === 'tie' ? 6 : 4,
      winner,
    };
  }
}
