import { readRequestJson } from '../contract/json-fields.js';
import { VerdictParseError } from './errors.js';
import type { Verdict } from './types.js';
import { cutWhole } from '../text/characters.js';
import { escapedQuoteAt } from '../text/escaped-quote.js';
import { setKey } from '../text/set-key.js';

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
 * a tie, a score outside 1 to 10, or a winner scored below the other answer throws
 * VerdictParseError. A verdict that reads the same
 * as one of the answers judged (`quoted`, as the judge was shown them) carries is the
 * answer's, quoted, not the judge's (see `sameness`); two verdicts of the judge's that name
 * different winners throw too.
 */
export function parseVerdict(text: string, { quoted = [], carried: carriedBy }: { quoted?: readonly string[]; carried?: (answer: string) => ReadonlySet<string> } = {}): Verdict {
  const trimmed = text.trim();
  // The verdicts the answers carry: read only once the judge's text holds one, by `carriedBy` where
  // given (a judge task reads each answer once for all the calls that show it).
  let carried: ReadonlySet<string>[] | undefined;
  // Searches of the answers word for word, within QUOTE_SEARCH_CHARS in all: a judge's text of a
  // thousand verdicts, each searched for in two answers of 8 MiB, held the thread 4.4 s. Past it a
  // text is taken as in the answer: not the judge's, as a quote would be.
  let searchable = QUOTE_SEARCH_CHARS;
  const inAnswer = (answer: string, text: string) => {
    searchable -= answer.length;
    return searchable < 0 || answer.includes(text);
  };
  const isQuoted = (read: Read, text: string) => {
    carried ??= quoted.map(carriedBy ?? verdictsCarried);
    // Past the parts read for verdicts (an answer of megabytes), a quote word for word still counts.
    return carried.some((set) => set.has(read.sameness)) || quoted.some((answer) => answer.length > 2 * SCANNED_CHARS && inAnswer(answer, text));
  };
  const whole = readVerdict(trimmed);
  // A whole answer that only echoes an answer's verdict is no more the judge's than one in prose.
  if (whole !== undefined && 'verdict' in whole && !isQuoted(whole, trimmed)) return whole.verdict;
  let lastProblem = whole === undefined ? NO_OBJECT : 'problem' in whole ? whole.problem : QUOTED;
  // Objects read and not taken whose insides are not free either, outer ones first: a verdict of
  // the judge's that failed (it names a winner but is no verdict: a score out of range, a winner
  // scored below the other), in which an object (its per-criterion scores, say) is taken only
  // where it names the same winner, else it would be a guess, perhaps the other winner; and a
  // verdict quoted from an answer, nothing in which is the judge's. An object that names no
  // winner (a wrapper) is looked into.
  const spans: Span[] = [];
  const holds = (outer: Candidate, candidate: Candidate) => candidate.start >= outer.start && candidate.end <= outer.end && candidate.text !== outer.text;
  const wholeSpan = { text: trimmed, start: 0, end: trimmed.length };
  if (whole !== undefined && 'problem' in whole && whole.attempted) spans.push({ ...wholeSpan, ...whole });
  else if (whole !== undefined && 'verdict' in whole) spans.push({ ...wholeSpan, problem: QUOTED, winner: whole.verdict.winner, quoted: true });
  let found: (Candidate & { verdict: Verdict }) | undefined;
  let budget = MAX_PARSED_CHARS;
  let tries = MAX_CANDIDATES;
  const skipped = { tooLong: false };
  for (const candidate of embedded(trimmed, skipped)) {
    // Nested in the verdict taken (a judge's per-criterion verdicts, say): part of it.
    if (found && candidate.start >= found.start && candidate.end <= found.end) continue;
    const within = spans.find((outer) => holds(outer, candidate));
    // Nested in a verdict quoted from an answer: part of the quote.
    if (within?.quoted) continue;
    budget -= candidate.text.length;
    if (budget < 0 || tries-- === 0) break;
    const read = readVerdict(candidate.text);
    if (read === undefined) continue;
    if ('problem' in read) {
      lastProblem = read.problem;
      if (read.attempted) spans.push({ ...candidate, ...read });
    } else if (within && read.verdict.winner !== within.winner) lastProblem = within.problem;
    else if (isQuoted(read, candidate.text)) {
      lastProblem = QUOTED;
      spans.push({ ...candidate, problem: QUOTED, winner: read.verdict.winner, quoted: true });
    } else if (found === undefined) found = { ...candidate, verdict: read.verdict };
    else if (read.verdict.winner !== found.verdict.winner) throw new VerdictParseError("The judge's answer holds verdicts that name different winners: none is taken");
  }
  // A verdict of the judge's that failed after the one found in the text, naming another winner
  // (a bare `{"winner": "B"}` as much as one with a score out of range, alone, in a wrapper or as
  // one criterion of a breakdown), may be its last word: the one found a draft, and taking it a
  // guess. Not an object whose winner reads as none (`{"winner": "Lakers"}`), nor one an answer
  // holds word for word (its example, quoted). A breakdown belongs inside the verdict, where it is
  // part of it: after it, which object is a criterion and which a last word, no rule tells
  // reliably (keys, nesting and the winners beside it each mislead somewhere).
  const overruled =
    found &&
    spans.find(
      (span) =>
        !span.quoted && span.winner !== undefined && span.winner !== found.verdict.winner && span.start >= found.end && !quoted.some((answer) => inAnswer(answer, span.text)),
    );
  if (overruled) {
    throw new VerdictParseError(
      `The judge's answer names another winner (${overruled.winner}) after its verdict for ${found!.verdict.winner}, in an object that is no verdict (${overruled.problem}): the verdict may be a draft`,
    );
  }
  if (found) return found.verdict;
  // A verdict of the judge's that failed says most of why, before what an object in it lacked.
  const problem = spans.find((span) => !span.quoted)?.problem ?? (lastProblem === NO_OBJECT && skipped.tooLong ? TOO_LONG : lastProblem);
  throw new VerdictParseError(`The judge's answer is not a verdict: ${problem}`);
}

/** An object read and not taken, where it stands (parseVerdict): a verdict of the judge's that failed, or one quoted from an answer. */
interface Span extends Candidate {
  problem: string;
  winner?: Verdict['winner'];
  quoted?: true;
}

const QUOTED = 'the only verdicts are quoted from the answers';

/**
 * What is wrong with an object read as a verdict; `attempted` where it names a winner (one that
 * reads as one: `winner`, or one that does not) and so is a verdict of the judge's, failed, not
 * a wrapper.
 */
interface Failure {
  problem: string;
  attempted: boolean;
  winner?: Verdict['winner'];
}

/** A verdict read, with what a quote of it keeps (`sameness`). */
interface Read {
  verdict: Verdict;
  sameness: string;
}

/** The verdict `text` holds as JSON, what is wrong with it, or undefined when it is not JSON. */
function readVerdict(text: string): Read | Failure | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const read = toVerdict(value);
  // JSON.parse keeps the last of a member named twice (`"winner": "A", "winner": "B"`): which the judge meant is a guess.
  if ('verdict' in read && namesAVerdictMemberTwice(text))
    return { problem: 'a winner or a score named twice (or too many fields to tell)', attempted: true, winner: read.verdict.winner };
  return read;
}

/** Whether the object `text` holds names one of its own verdict members (a winner, a score) twice, as the text has it, or has too many fields to be read for that. */
function namesAVerdictMemberTwice(text: string): boolean {
  const { tooMany, repeated } = readRequestJson(text);
  return (
    tooMany ||
    repeated.some((pointer) => {
      const name = /^\/([^/]*)$/.exec(pointer)?.[1];
      if (name === undefined) return false;
      const key = normalKey(name.replaceAll('~1', '/').replaceAll('~0', '~'));
      return WINNER_KEYS.has(key) || SCORE_A_KEYS.has(key) || SCORE_B_KEYS.has(key);
    })
  );
}

interface Candidate {
  text: string;
  /** Where it stands in the judge's text. */
  start: number;
  end: number;
}

/** The longest candidate tried: a verdict is a few hundred characters (its reasoning is cut at 1,000 once read). */
const MAX_SPAN_CHARS = 64 * 1024;

const NO_OBJECT = 'no JSON object in the answer';
const TOO_LONG = `no JSON object in the answer of at most ${MAX_SPAN_CHARS / 1024} KiB (a longer one is not read)`;
/** Characters parsed as candidates at most, besides the whole text: a judge's answer is hostile input, and nested JSON parses slowly. */
const MAX_PARSED_CHARS = 256 * 1024;
/** Candidates tried at most: a million `{}` are cheap each, not together. */
const MAX_CANDIDATES = 1_000;

/** Whether a candidate was passed over for its length (MAX_SPAN_CHARS): said where no verdict was read. */
interface Skipped {
  tooLong: boolean;
}

/** Fenced blocks, then `{...}` spans in prose, each the last first, of at most MAX_SPAN_CHARS. */
function* embedded(text: string, skipped: Skipped): Generator<Candidate> {
  for (const [start, end] of fencedBlocks(text).reverse()) {
    const body = text.slice(start, end);
    if (body.length > MAX_SPAN_CHARS) skipped.tooLong = true;
    else if (body.trim() !== '') yield { text: body.trim(), start, end };
  }
  yield* balancedObjects(text, skipped);
}

/** The opening fence's language and the blank space after it, read from where the fence ends: never fails, never backtracks. */
const FENCE_HEAD = /[a-zA-Z]*\s*/y;

/**
 * The bodies of ``` fenced blocks, `[start, end)`, in one pass: each opening fence, its
 * language and blank space, then the next fence closes it. A regular expression doing the
 * same backtracked through an unclosed fence's blank space, scanning to the end at every
 * step: a judge answer of a fence and 200,000 line ends held the thread for 8 s.
 */
function fencedBlocks(text: string): [number, number][] {
  const blocks: [number, number][] = [];
  for (let open = text.indexOf('```'); open !== -1; ) {
    FENCE_HEAD.lastIndex = open + 3;
    FENCE_HEAD.exec(text);
    const close = text.indexOf('```', FENCE_HEAD.lastIndex);
    if (close === -1) break;
    blocks.push([FENCE_HEAD.lastIndex, close]);
    open = text.indexOf('```', close + 3);
  }
  return blocks;
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
function* balancedObjects(text: string, skipped: Skipped): Generator<Candidate> {
  // The two passes agree on most spans: each is tried once.
  const spans = new Map<string, [number, number]>();
  for (const span of [...closedFromStart(text, skipped), ...closedFromEnd(text, skipped)]) spans.set(span.join(':'), span);
  const ordered = [...spans.values()].sort(([startA, endA], [startB, endB]) => endB - endA || startA - startB);
  for (const [start, end] of ordered) yield { text: text.slice(start, end), start, end };
}

/** Spans closed reading from the start: the last MAX_CANDIDATES to close. */
function closedFromStart(text: string, skipped: Skipped): [number, number][] {
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
      if (i + 1 - start > MAX_SPAN_CHARS) {
        skipped.tooLong = true;
        continue;
      }
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
function closedFromEnd(text: string, skipped: Skipped): [number, number][] {
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
      else skipped.tooLong = true;
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

/** Two of an object's members that say one thing say different ones: which the judge meant is a guess. */
const CONFLICT = Symbol('conflict');

/**
 * What an object's members under `names` say, each read by `read` (those that read as none
 * left aside: `"verdict": "Answer A is better"`, `"score_a": "n/a"`); CONFLICT where two
 * say different things (`"winner": "A", "preferred": "B"`; `"scoreA": 9, "score_a": 1`).
 */
function agreed<T>(object: Record<string, unknown>, names: ReadonlySet<string>, read: (value: unknown) => T | undefined): T | typeof CONFLICT | undefined {
  let found: T | undefined;
  for (const [key, value] of Object.entries(object)) {
    if (!names.has(normalKey(key))) continue;
    const said = read(value);
    if (said === undefined) continue;
    if (found !== undefined && said !== found) return CONFLICT;
    found = said;
  }
  return found;
}

/** The longest `winner` taken for a label (`"Answer 1"`), not a sentence. */
const MAX_LABEL_CHARS = 24;

/** The verdict in `value`, or what is wrong with it. */
function toVerdict(value: unknown): Read | Failure {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'the JSON is not an object', attempted: false };
  const object = value as Record<string, unknown>;
  const winner = agreed(object, WINNER_KEYS, toWinner);
  if (winner === CONFLICT) return { problem: 'two winners that differ, under two of its names', attempted: true };
  if (winner === undefined) {
    // A `winner` that reads as none and is a label, not a sentence (`"Answer 1"`, `"D"`): a verdict
    // of the judge's, failed. A wrapper names none, or says its verdict in a sentence (`"verdict":
    // "Answer A is better overall"`), or leaves it null: looked into.
    const label = Object.entries(object).some(([key, value]) => normalKey(key) === 'winner' && typeof value === 'string' && value.trim() !== '' && value.length <= MAX_LABEL_CHARS);
    return label ? { problem: 'a winner other than "A", "B" or "tie"', attempted: true } : { problem: 'no winner of "A", "B" or "tie"', attempted: false };
  }
  const scoreA = agreed(object, SCORE_A_KEYS, toScore);
  const scoreB = agreed(object, SCORE_B_KEYS, toScore);
  if (scoreA === CONFLICT || scoreB === CONFLICT) return { problem: 'two scores that differ for one answer, under two of its names', attempted: true, winner };
  if (scoreA === undefined || scoreB === undefined) {
    return { problem: `scoreA and scoreB must be numbers from ${VERDICT_LIMITS.minScore} to ${VERDICT_LIMITS.maxScore}`, attempted: true, winner };
  }
  // A winner scored below the loser: which of the two the judge meant is a guess. Scores alike
  // beside a winner, or apart beside a tie, contradict nothing (the winner is the coarser call).
  if ((winner === 'A' && scoreB > scoreA) || (winner === 'B' && scoreA > scoreB)) {
    return { problem: `the winner ${winner} is scored below the other answer (scoreA ${scoreA}, scoreB ${scoreB})`, attempted: true, winner };
  }
  const given = field(object, REASONING_KEYS);
  const reasoning = typeof given === 'string' ? given.trim() : '';
  return { verdict: { winner, scoreA, scoreB, reasoning: cut(reasoning) }, sameness: sameness(winner, scoreA, scoreB, reasoning) };
}

/** Zero-width characters: judge-prompt.ts puts a zero-width space into each frame-like tag of an answer, which a judge may keep, escape or drop when it quotes. */
const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff]/g;

/**
 * What a quote of a verdict keeps: its winner, its scores and its reasoning (whole, before
 * it is cut), as read. Not how its JSON is written (spacing, key order, key spelling,
 * `10`, `10.0` or `"10"`, escaped or literal characters, other members), nor the spacing,
 * Unicode normalisation or zero-width characters of its reasoning. Verdicts alike in
 * these are one verdict: one an answer carries is the answer's, however the judge quotes it.
 */
function sameness(winner: Verdict['winner'], scoreA: number, scoreB: number, reasoning: string): string {
  const key = `${winner} ${scoreA} ${scoreB} ${reasoning.normalize('NFKC').replace(ZERO_WIDTH, '').replace(/\s+/g, ' ').trim()}`;
  return setKey(key);
}

/**
 * How much of an answer is read for the verdicts it carries, from each end where it is longer
 * than twice this: about 0.1 s of one thread at most for the most costly text found (2 MB of
 * `[` took 0.6 s). A verdict in the middle of an answer of megabytes still counts when a
 * judge quotes it word for word (parseVerdict). A judge shown an answer that long reads a
 * quarter of a million tokens of it.
 */
const SCANNED_CHARS = 256 * 1024;
/** The answers' characters parseVerdict searches for quotes at most: two of the largest answers (8 MiB), twice. */
const QUOTE_SEARCH_CHARS = 32 * 1024 * 1024;

/** The `sameness` of every verdict an answer carries, wherever it stands in it (eachObject), within SCANNED_CHARS of either end. */
export function verdictsCarried(answer: string): ReadonlySet<string> {
  const carried = new Set<string>();
  const parts = answer.length > 2 * SCANNED_CHARS ? [answer.slice(0, SCANNED_CHARS), answer.slice(-SCANNED_CHARS)] : [answer];
  for (const part of parts)
    eachObject(part, (members) => {
      const read = toVerdict(members);
      if ('sameness' in read) carried.add(read.sameness);
    });
  return carried;
}

/** An object or array nested in an object eachObject visits: a verdict reads only strings and numbers. */
const NESTED: readonly unknown[] = Object.freeze([]);
/** In eachObject's `ends`: no object starts at this `{`. */
const FAILED = -1;
/** Members a verdict has at least: a winner and two scores. */
const VERDICT_MEMBERS = 3;
const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** What eachObject's parse reads next: a value; after `[`, a value or `]`; a key; after `{`, a key or `}`; after a value, `,` or the end of its object or array. */
type Next = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'after';

/**
 * Every JSON object (as JSON.parse reads it) in `text`, wherever it starts: in prose, in
 * code, inside another object's string. An answer is hostile input: one that hides its
 * verdict from the judge's text scan (stray quotes and braces on both sides of it) must not
 * hide it from this one. `visit` gets the members of each object of at least 3 members,
 * objects and arrays nested in it as NESTED. A parse is tried from each `{` not yet read,
 * and each object a parse reads is kept, by where it starts, with where it ends, or that it
 * fails: a later parse that meets it there skips it, or fails at once. Linear: a `{` a
 * parse reads out of a string is an object of that parse (kept) or where it fails, so a later
 * parse starts only where every earlier parse still reading was inside a string. From there it is out of
 * strings where they are in, and in where they are out, until one fails (a backslash out of
 * a string ends a parse): no character is read by more than two parses.
 */
function eachObject(text: string, visit: (members: Record<string, unknown>) => void): void {
  let start = text.indexOf('{');
  if (start === -1) return;
  // Where the object starting at each `{` ends (the index after its `}`), FAILED, or 0: not tried yet.
  const ends = new Int32Array(text.length);
  const open: OpenStack = { starts: [], members: [], keys: [] };
  for (; start !== -1; start = text.indexOf('{', start + 1)) if (ends[start] === 0) parseObject(text, start, ends, open, visit);
}

/** The objects and arrays a parse has open, innermost last; kept from one parse to the next, never shortened (the parse knows its depth). */
interface OpenStack {
  /** Where each starts; -1 for an array. */
  starts: number[];
  /** An object's members so far: undefined until it has one. */
  members: ([string, unknown][] | undefined)[];
  /** The key of the value an object awaits. */
  keys: string[];
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;

/** One parse of eachObject, from the `{` at `start`. */
function parseObject(text: string, start: number, ends: Int32Array, open: OpenStack, visit: (members: Record<string, unknown>) => void): void {
  const { starts, members, keys } = open;
  // Objects and arrays open: the first `depth` entries of `open` (its arrays are kept between parses, never shortened).
  let depth = 0;
  let next: Next = 'value';
  let i = start;
  // A value was read (`value`): it goes into its object or array, or it was the object parsed.
  let value: unknown;
  let read = false;
  for (;;) {
    const inObject = depth > 0 && (starts[depth - 1] as number) >= 0;
    if (read) {
      if (depth === 0) return;
      if (inObject) {
        const own = members[depth - 1];
        if (own) own.push([keys[depth - 1] as string, value]);
        else members[depth - 1] = [[keys[depth - 1] as string, value]];
      }
      read = false;
      next = 'after';
    }
    i = skipJsonSpace(text, i);
    const char = text.charCodeAt(i);
    if (next === 'after') {
      if (char === 0x2c) {
        next = inObject ? 'key' : 'value';
        i++;
        continue;
      }
      if (char !== (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) break;
    } else if (next === 'key' || next === 'key-or-close') {
      if (char === QUOTE) {
        const end = jsonStringEnd(text, i);
        const key = jsonString(text, i, end);
        if (key === undefined) break;
        i = skipJsonSpace(text, Math.abs(end));
        if (text.charCodeAt(i) !== 0x3a) break;
        keys[depth - 1] = key;
        next = 'value';
        i++;
        continue;
      }
      if (char !== CLOSE_OBJECT || next === 'key') break;
    } else if (char === OPEN_OBJECT || char === OPEN_ARRAY) {
      const known = char === OPEN_OBJECT ? (ends[i] as number) : 0;
      if (known === FAILED) break;
      if (known > 0) {
        value = NESTED;
        read = true;
        i = known;
        continue;
      }
      starts[depth] = char === OPEN_OBJECT ? i : -1;
      members[depth] = undefined;
      depth++;
      next = char === OPEN_OBJECT ? 'key-or-close' : 'value-or-close';
      i++;
      continue;
    } else if (char === QUOTE) {
      const end = jsonStringEnd(text, i);
      value = jsonString(text, i, end);
      if (value === undefined) break;
      read = true;
      i = Math.abs(end);
      continue;
    } else if (char !== CLOSE_ARRAY || next !== 'value-or-close') {
      const literal = char === 0x74 ? 'true' : char === 0x66 ? 'false' : char === 0x6e ? 'null' : undefined;
      if (literal !== undefined) {
        if (!text.startsWith(literal, i)) break;
        value = literal === 'true' ? true : literal === 'false' ? false : null;
        i += literal.length;
      } else {
        JSON_NUMBER.lastIndex = i;
        const number = JSON_NUMBER.exec(text);
        if (number === null) break;
        value = Number(number[0]);
        i += number[0].length;
      }
      read = true;
      continue;
    }
    // The end of the innermost object or array (`}` or `]`, checked above).
    depth--;
    const closed = starts[depth] as number;
    if (closed >= 0) {
      ends[closed] = i + 1;
      const own = members[depth];
      // As JSON.parse makes it: a repeated key keeps its place and takes its last value, `__proto__` is a member.
      if (own && own.length >= VERDICT_MEMBERS) visit(Object.fromEntries(own));
    }
    value = NESTED;
    read = true;
    i++;
  }
  // Not JSON from here: every object still open fails as this one did.
  for (let k = 0; k < depth; k++) if ((starts[k] as number) >= 0) ends[starts[k] as number] = FAILED;
}

function skipJsonSpace(text: string, from: number): number {
  let i = from;
  for (let code = text.charCodeAt(i); code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09; code = text.charCodeAt(++i));
  return i;
}

/**
 * The index after the JSON string starting at `at` (a `"`), negative when it holds an
 * escape (minus that index), or 0: a control character, an escape that is not JSON's, or no
 * end. Escapes are checked here, so that JSON.parse (jsonString) is only given strings it
 * reads: an answer of `{"a\{"a\…` had every `{` start a parse whose string threw, 9 s for 5 MB.
 */
function jsonStringEnd(text: string, at: number): number {
  let escaped = false;
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return escaped ? -(i + 1) : i + 1;
    if (code === 0x5c) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x75) {
        if (!HEX4.test(text.slice(i + 2, i + 6))) return 0;
        i += 5;
      } else if (SIMPLE_ESCAPES.includes(next)) i++;
      else return 0;
      escaped = true;
    } else if (code < 0x20) return 0;
  }
  return 0;
}

/** What may follow a backslash in a JSON string, but `u`: `" \ / b f n r t`. */
const SIMPLE_ESCAPES: readonly number[] = [0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74];
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The value of the JSON string from `at` to `end` (jsonStringEnd's), or undefined when it is none (an escape that is not JSON's). */
function jsonString(text: string, at: number, end: number): string | undefined {
  if (end > 0) return text.slice(at + 1, end - 1);
  if (end === 0) return undefined;
  try {
    return JSON.parse(text.slice(at, -end)) as string;
  } catch {
    return undefined;
  }
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
  // `C` (`[[C]]`) is MT-Bench's tie, which judges trained on its prompts write.
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
