import { VerdictParseError } from './errors.js';
import type { Verdict } from './types.js';
import { cutWhole } from '../text/cut.js';
import { escapedQuoteAt } from '../text/escaped-quote.js';

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
 * Reads a verdict from a judge's text: the whole text as JSON (native structured output, or
 * a judge that did as asked: then nothing else is read, unless it is an answer's verdict
 * quoted), else the JSON objects inside it,
 * fenced blocks then objects in prose, each the last first (a judge decides after it
 * discusses). Tolerates what judges without native structured output commonly do (fences, a
 * sentence before the JSON, `"Winner": "Answer A"`, scores as numeric strings, `snake_case`
 * keys) and nothing that would need a guess: no verdict object, a winner other than A, B or
 * a tie, or a score outside 1 to 10 throws VerdictParseError. A verdict found word for word
 * in one of the answers judged (`quoted`) is the answer's text, quoted, not the judge's; two
 * verdicts of the judge's that name different winners throw too.
 */
export function parseVerdict(text: string, { quoted = [] }: { quoted?: readonly string[] } = {}): Verdict {
  const trimmed = text.trim();
  const isQuoted = (candidate: string) => quoted.some((answer) => answer.includes(candidate));
  const whole = readVerdict(trimmed);
  // A whole answer that only echoes an answer's verdict is no more the judge's than one in prose.
  if (whole !== undefined && typeof whole !== 'string' && !isQuoted(trimmed)) return whole;
  let lastProblem = whole === undefined ? 'no JSON object in the answer' : typeof whole === 'string' ? whole : QUOTED;
  let found: (Candidate & { verdict: Verdict }) | undefined;
  let budget = MAX_PARSED_CHARS;
  let tries = MAX_CANDIDATES;
  for (const candidate of embedded(trimmed)) {
    // Nested in the verdict taken (a judge's per-criterion verdicts, say): part of it.
    if (found && candidate.start >= found.start && candidate.end <= found.end) continue;
    budget -= candidate.text.length;
    if (budget < 0 || tries-- === 0) break;
    const verdict = readVerdict(candidate.text);
    if (verdict === undefined) continue;
    if (typeof verdict === 'string') lastProblem = verdict;
    else if (isQuoted(candidate.text)) lastProblem = QUOTED;
    else if (found === undefined) found = { ...candidate, verdict };
    else if (verdict.winner !== found.verdict.winner) throw new VerdictParseError("The judge's answer holds verdicts that name different winners: none is taken");
  }
  if (found) return found.verdict;
  throw new VerdictParseError(`The judge's answer is not a verdict: ${lastProblem}`);
}

const QUOTED = 'the only verdicts are quoted from the answers';

/** The verdict `text` holds as JSON, what is wrong with it, or undefined when it is not JSON. */
function readVerdict(text: string): Verdict | string | undefined {
  try {
    return toVerdict(JSON.parse(text));
  } catch {
    return undefined;
  }
}

interface Candidate {
  text: string;
  /** Where it stands in the judge's text. */
  start: number;
  end: number;
}

/** The longest candidate tried: a verdict is a few hundred characters (its reasoning is cut at 1,000 once read). */
const MAX_SPAN_CHARS = 64 * 1024;
/** Characters parsed as candidates at most, besides the whole text: a judge's answer is hostile input, and nested JSON parses slowly. */
const MAX_PARSED_CHARS = 256 * 1024;
/** Candidates tried at most: a million `{}` are cheap each, not together. */
const MAX_CANDIDATES = 1_000;

/** Fenced blocks, then `{...}` spans in prose, each the last first, of at most MAX_SPAN_CHARS. */
function* embedded(text: string): Generator<Candidate> {
  const fences = [...text.matchAll(/```[a-zA-Z]*\s*\n?([\s\S]*?)```/g)];
  for (const fence of fences.reverse()) {
    const body = fence[1] ?? '';
    const start = (fence.index ?? 0) + fence[0].indexOf(body);
    if (body.trim() !== '' && body.length <= MAX_SPAN_CHARS) yield { text: body.trim(), start, end: start + body.length };
  }
  yield* balancedObjects(text);
}

/**
 * `{...}` spans with balanced braces outside strings, of at most MAX_SPAN_CHARS, the last
 * first (by where they end: an object before the objects nested in it). Two linear passes,
 * each with a stack of open braces: from the start, and from the end. Prose can quote code
 * with a stray brace and a quote (`"if (x) {" is never closed`), which puts the pass from
 * the start inside a string that never ends; the pass from the end meets the verdict
 * (a judge decides last) before that prose, and code quoted after the verdict misleads only
 * the pass from the end (a verdict between the two is not found). A search restarting at
 * every `{` took 7.8 s for 40,000 of them.
 */
function* balancedObjects(text: string): Generator<Candidate> {
  // The two passes agree on most spans: each is tried once.
  const spans = new Map<string, [number, number]>();
  for (const span of [...closedFromStart(text), ...closedFromEnd(text)]) spans.set(span.join(':'), span);
  const ordered = [...spans.values()].sort(([startA, endA], [startB, endB]) => endB - endA || startA - startB);
  for (const [start, end] of ordered) yield { text: text.slice(start, end), start, end };
}

/** Spans closed reading from the start: the last MAX_CANDIDATES to close. */
function closedFromStart(text: string): [number, number][] {
  // Only the last MAX_CANDIDATES spans can be tried: kept in a ring, as they close.
  const starts = new Int32Array(MAX_CANDIDATES);
  const ends = new Int32Array(MAX_CANDIDATES);
  let count = 0;
  // The open braces, a stack (`depth` of them): typed, as a hostile text can open millions.
  const open = new Int32Array(text.length);
  let depth = 0;
  let inString = false;
  for (let i = text.indexOf('{'); i !== -1 && i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = depth > 0;
    else if (char === '{') open[depth++] = i;
    else if (char === '}' && depth > 0) {
      const start = open[--depth] as number;
      if (i + 1 - start > MAX_SPAN_CHARS) continue;
      starts[count % MAX_CANDIDATES] = start;
      ends[count % MAX_CANDIDATES] = i + 1;
      count++;
    }
  }
  const spans: [number, number][] = [];
  for (let k = Math.max(0, count - MAX_CANDIDATES); k < count; k++) spans.push([starts[k % MAX_CANDIDATES] as number, ends[k % MAX_CANDIDATES] as number]);
  return spans;
}

/** Spans closed reading from the end (a `}` opens, a `{` closes): the first MAX_CANDIDATES found, those nearest the end. */
function closedFromEnd(text: string): [number, number][] {
  const spans: [number, number][] = [];
  const open = new Int32Array(text.length);
  let depth = 0;
  let inString = false;
  for (let i = text.lastIndexOf('}'); i >= 0 && spans.length < MAX_CANDIDATES; i--) {
    const char = text[i];
    if (char === '"' && !escapedQuoteAt(text, i)) inString = inString ? false : depth > 0;
    else if (inString) continue;
    else if (char === '}') open[depth++] = i;
    else if (char === '{' && depth > 0) {
      const end = (open[--depth] as number) + 1;
      if (end - i <= MAX_SPAN_CHARS) spans.push([i, end]);
    }
  }
  return spans;
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

/** A decimal number as a string (`"7"`, `" 7.5 "`); not `Number`'s other spellings (`"0x9"`, `"1e1"`). */
const DECIMAL = /^\s*\d+(?:\.\d+)?\s*$/;

function toScore(value: unknown): number | undefined {
  const score = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(score) || score < VERDICT_LIMITS.minScore || score > VERDICT_LIMITS.maxScore) return undefined;
  return score;
}

/** Reasoning at most VERDICT_LIMITS.reasoningChars long, never cut inside a surrogate pair (a lone half is not valid UTF-8). */
function cut(reasoning: string): string {
  return reasoning.length <= VERDICT_LIMITS.reasoningChars ? reasoning : `${cutWhole(reasoning, VERDICT_LIMITS.reasoningChars - 1)}…`;
}
