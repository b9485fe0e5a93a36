import { VerdictParseError } from './errors.js';
import type { Verdict } from './types.js';

export const VERDICT_LIMITS = {
  minScore: 1,
  maxScore: 10,
  /** Reasoning is asked to be short; a longer one is cut here (it travels in every state and response). */
  reasoningChars: 1_000,
} as const;

/**
 * The verdict as a `response_schema`: judges with native structured output get it
 * enforced by the vendor, the others as an instruction (shared/providers). `reasoning`
 * comes first so that a judge writes its comparison before it decides. Only keywords
 * that every native mode enforces (OpenAI strict, Gemini, Bedrock tools).
 */
export const VERDICT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    reasoning: { type: 'string', description: 'A short comparison of the two answers: at most three sentences.' },
    scoreA: { type: 'integer', minimum: VERDICT_LIMITS.minScore, maximum: VERDICT_LIMITS.maxScore, description: 'Score of Answer A.' },
    scoreB: { type: 'integer', minimum: VERDICT_LIMITS.minScore, maximum: VERDICT_LIMITS.maxScore, description: 'Score of Answer B.' },
    winner: { type: 'string', enum: ['A', 'B', 'tie'], description: 'The better answer, or tie.' },
  },
  required: ['reasoning', 'scoreA', 'scoreB', 'winner'],
  additionalProperties: false,
};

/**
 * Reads a verdict from a judge's text: the whole text as JSON, else fenced code blocks, else
 * JSON objects inside prose that hold a verdict, the last first (a judge decides after it
 * discusses). Tolerates what judges without native structured output commonly do (fences, a
 * sentence before the JSON, `"Winner": "Answer A"`, scores as numeric strings, `snake_case`
 * keys) and nothing that would need a guess: no verdict object, a winner other than A, B or
 * a tie, a score outside 1 to 10, or verdicts that name different winners (a judge quoting
 * an answer that carries a verdict of its own) throws VerdictParseError.
 */
export function parseVerdict(text: string): Verdict {
  let lastProblem = 'no JSON object in the answer';
  let found: Verdict | undefined;
  for (const candidate of candidates(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    const verdict = toVerdict(parsed);
    if (typeof verdict === 'string') lastProblem = verdict;
    else if (found === undefined) found = verdict;
    else if (verdict.winner !== found.winner) throw new VerdictParseError("The judge's answer holds verdicts that name different winners: none is taken");
  }
  if (found) return found;
  throw new VerdictParseError(`The judge's answer is not a verdict: ${lastProblem}`);
}

/** Substrings worth trying as JSON, most likely first. */
function* candidates(text: string): Generator<string> {
  const trimmed = text.trim();
  yield trimmed;
  for (const fence of trimmed.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)) {
    if (fence[1] && fence[1].length <= MAX_SPAN_CHARS) yield fence[1].trim();
  }
  yield* balancedObjects(trimmed);
}

/** Spans tried as JSON at most, besides the whole text: each try parses its span, so many long ones would hold the event loop. */
const MAX_SPANS = 32;
/** The longest span tried: a verdict is a few hundred characters, its reasoning cut at 1,000 after parsing. */
const MAX_SPAN_CHARS = 16 * 1024;

/**
 * `{...}` spans with balanced braces outside strings, of at most MAX_SPAN_CHARS, the last
 * first (by where they end: an object before the objects nested in it), at most MAX_SPANS:
 * one pass with a stack of open braces, linear in the text. A judge's answer is hostile
 * input; a search restarting at every `{` took 7.8 s for 40,000 of them.
 */
function* balancedObjects(text: string): Generator<string> {
  const spans: [number, number][] = [];
  const open: number[] = [];
  let inString = false;
  for (let i = text.indexOf('{'); i !== -1 && i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = open.length > 0;
    else if (char === '{') open.push(i);
    else if (char === '}' && open.length > 0) {
      const start = open.pop() as number;
      if (i + 1 - start <= MAX_SPAN_CHARS) spans.push([start, i + 1]);
    }
  }
  spans.sort((a, b) => b[1] - a[1]);
  for (const [start, end] of spans.slice(0, MAX_SPANS)) yield text.slice(start, end);
}

/** Lower case without separators: `score_a`, `scoreA` and `Score A` all read `scorea`. */
function normalKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const WINNER_KEYS = new Set(['winner', 'verdict', 'better', 'betteranswer', 'preferred']);
const SCORE_A_KEYS = new Set(['scorea', 'ascore', 'answerascore', 'scoreanswera']);
const SCORE_B_KEYS = new Set(['scoreb', 'bscore', 'answerbscore', 'scoreanswerb']);
const REASONING_KEYS = new Set(['reasoning', 'reason', 'explanation', 'rationale']);

function field(object: Record<string, unknown>, names: ReadonlySet<string>): unknown {
  for (const [key, value] of Object.entries(object)) if (names.has(normalKey(key))) return value;
  return undefined;
}

/** The winner under `winner` first, then under the other names, the first that reads as one (`"verdict": "Answer A is better", "winner": "A"`). */
function winnerField(object: Record<string, unknown>): Verdict['winner'] | undefined {
  const named = Object.entries(object).filter(([key]) => WINNER_KEYS.has(normalKey(key)));
  named.sort(([a], [b]) => Number(normalKey(b) === 'winner') - Number(normalKey(a) === 'winner'));
  for (const [, value] of named) {
    const winner = toWinner(value);
    if (winner !== undefined) return winner;
  }
  return undefined;
}

/** The verdict in `value`, or what is wrong with it. */
function toVerdict(value: unknown): Verdict | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the JSON is not an object';
  const object = value as Record<string, unknown>;
  const winner = winnerField(object);
  if (winner === undefined) return 'no winner of "A", "B" or "tie"';
  const scoreA = toScore(field(object, SCORE_A_KEYS));
  const scoreB = toScore(field(object, SCORE_B_KEYS));
  if (scoreA === undefined || scoreB === undefined) {
    return `scoreA and scoreB must be numbers from ${VERDICT_LIMITS.minScore} to ${VERDICT_LIMITS.maxScore}`;
  }
  const reasoning = field(object, REASONING_KEYS);
  return { winner, scoreA, scoreB, reasoning: typeof reasoning === 'string' ? cut(reasoning.trim()) : '' };
}

function toWinner(value: unknown): Verdict['winner'] | undefined {
  if (typeof value !== 'string') return undefined;
  const word = value
    .trim()
    .replace(/^\[\[(.*)\]\]$/, '$1')
    .replace(/^(answer|assistant|response)\s+/i, '')
    .trim()
    .toLowerCase();
  if (word === 'a') return 'A';
  if (word === 'b') return 'B';
  if (['tie', 'tied', 'draw', 'equal', 'c'].includes(word)) return 'tie';
  return undefined;
}

function toScore(value: unknown): number | undefined {
  const score = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (!Number.isFinite(score) || score < VERDICT_LIMITS.minScore || score > VERDICT_LIMITS.maxScore) return undefined;
  return score;
}

/** Reasoning at most VERDICT_LIMITS.reasoningChars long, never cut inside a surrogate pair (a lone half is not valid UTF-8). */
function cut(reasoning: string): string {
  if (reasoning.length <= VERDICT_LIMITS.reasoningChars) return reasoning;
  let end = VERDICT_LIMITS.reasoningChars - 1;
  if ((reasoning.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
  return `${reasoning.slice(0, end)}…`;
}
