/**
 * Credentials out of text that leaves the gateway (a result's error message, a log line).
 * Vendors quote the key they were sent in their error messages ("Incorrect API key
 * provided: sk-…"), and library errors may quote a request's headers; none of it may
 * reach an answer, a stored record or a log. Nor may the operator's own accounts with its
 * vendors, which their messages name ("… in organization org-…", an AWS role's ARN): every
 * tenant of the gateway reads them.
 */

const REDACTED = '[redacted]';

/**
 * Credential shapes: authorization schemes, API-key headers, and the key formats of the
 * gateway and its vendors. The distinctive prefixes match even glued to a word before them
 * (`xxxAKIA…`: a vendor message may run text into a key); `sk-` only at a word's start,
 * as words such as `risk-` end in it.
 */
const PATTERNS: readonly [RegExp, string][] = [
  // A scheme's credential: 8 characters or more, with a digit, a base64 sign or a capital after a small letter, so
  // that prose is left alone ("no usable token usage", "the Basic tier", "Token limit exceeded").
  [/\b([Bb]earer|BEARER|[Bb]asic|BASIC|[Tt]oken|TOKEN|AWS4-HMAC-SHA256)\s+(?=[^\s,;"'`)]{8})(?=[^\s,;"'`)]*(?:\d|[+/=]|[a-z][A-Z]))[^\s,;"'`)]+/g, `$1 ${REDACTED}`],
  // A header's value, its scheme word with it: whatever the credential after it looks like.
  // Its separator as text, JSON (escaped too, inside a string) or util.inspect write it (`: `, `=`,
  // `=> `, `: [ '`), a scheme's `:` or quote after it too. Not a list's `', '`: lists of header names
  // ("'x-api-key', 'anthropic-version' are required") name no credential.
  [
    /\b(x-api-key|x-goog-api-key|api[-_ ]?key|authorization|credential|x-amz-security-token|(?:aws_)?(?:secret_?access_?key|session_?token))(\\?["']?\s*(?:=>|[:=])\s*\[?\s*\\?["']?)(?:(?:Bearer|Basic|Token|AWS4-HMAC-SHA256):?\s+\\?["']?)?[^\s,;"'`)\]\\]+/gi,
    `$1$2${REDACTED}`,
  ],
  [/mcg_[A-Za-z0-9_-]{8,}/g, REDACTED], // the gateway's own keys
  [/\bsk-[A-Za-z0-9_*.-]{6,}/g, REDACTED], // OpenAI, Anthropic (sk-ant-), DeepSeek
  [/AIza[0-9A-Za-z_*-]{10,}/g, REDACTED], // Google
  [/xai-[A-Za-z0-9_*-]{6,}/g, REDACTED], // xAI
  [/csk-[A-Za-z0-9_*-]{6,}/g, REDACTED], // Cerebras
  [/gsk_[A-Za-z0-9_*]{6,}/g, REDACTED], // Groq
  [/(?:AKIA|ASIA)[A-Z0-9*]{12,}/g, REDACTED], // AWS access key IDs
  // AWS session tokens (STS's, base64 that opens with their version: Lambda's credentials, which
  // sign every Bedrock call and which AWS quotes in a canonical request it could not verify).
  [/(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9+/=%]*/g, REDACTED],
  // The operator's accounts with its vendors.
  [/\borg[-_][A-Za-z0-9]{16,}/g, REDACTED], // OpenAI and Groq organisations
  [/\bproj_[A-Za-z0-9]{16,}/g, REDACTED], // OpenAI projects
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, REDACTED], // Anthropic organisations, and any other UUID
  [/\barn:aws[a-z-]*:[^\s"'`,;)]*[^\s"'`,;).]/g, REDACTED], // AWS ARNs (a role's names the account, and the stack), not a full stop after one
  [/(?<!\d|\d\.)\d{12}(?!\d|\.\d)/g, REDACTED], // AWS account IDs (not a piece of a longer number)
  [/\b(projects\/|project[_ ]number[:= ]\s*)[^\s/"'`,;)]+/gi, `$1${REDACTED}`], // Google Cloud projects
  [/\b(project[ =:]\s*['"]?)(?=[\w-]*\d)[\w-]{4,}/gi, `$1${REDACTED}`], // and their numbers and IDs named so ("project 98765432101", "?project=my-app-4821")
];

/** Known secrets shorter than this are not searched for (they would redact ordinary words). */
const MIN_KNOWN_LENGTH = 8;

/** The shortest start of a known secret redacted where a text ends with it (shorter ones end ordinary words: `disk-0`). */
const MIN_KNOWN_START = 8;

/** Pieces of a known secret this long are redacted wherever they appear in a message. */
const KNOWN_PIECE = 12;

/**
 * `text` with every known secret (a provider's key) and every credential-shaped token
 * replaced by `[redacted]`. A known secret is found as configured and as a vendor may quote
 * it: any piece of 12 characters or more (a message quoting part of the key), in any case
 * and with anything between its letters and digits (`K-C-A-N…`, a lowercased echo), in
 * base64 (an encoded header quoted back), masked (its start and end around `*`s), and, where
 * the text ends with its start (a message cut short in the middle of the key), that start.
 * For short texts: messages and log lines.
 */
export function redactSecrets(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of known) {
    if (!secret || secret.length < MIN_KNOWN_LENGTH) continue;
    for (const form of [secret, ...base64Forms(secret)]) out = withoutPieces(redactKnown(out, [form]), form);
    out = withoutLoosePieces(out, secret);
    out = withoutMasked(out, secret);
    const start = knownStartAtEnd(out, secret, MIN_KNOWN_START);
    if (start > 0) out = out.slice(0, out.length - start) + REDACTED;
  }
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** `text` with every run made of `secret`'s 12-character pieces replaced, once each run. */
function withoutPieces(text: string, secret: string): string {
  return replaced(text, pieceRuns(text, secret));
}

/** `text` with the ranges (in order, apart) replaced. */
function replaced(text: string, ranges: readonly [number, number][]): string {
  if (ranges.length === 0) return text;
  let out = '';
  let kept = 0;
  for (const [start, end] of ranges) {
    out += text.slice(kept, start) + REDACTED;
    kept = end;
  }
  return out + text.slice(kept);
}

/** The runs of `text` made of `secret`'s 12-character pieces: [start, end) each, in order. */
function pieceRuns(text: string, secret: string): [number, number][] {
  const runs: [number, number][] = [];
  if (secret.length <= KNOWN_PIECE || text.length < KNOWN_PIECE) return runs;
  const pieces = new Set<string>();
  for (let i = 0; i + KNOWN_PIECE <= secret.length; i++) pieces.add(secret.slice(i, i + KNOWN_PIECE));
  for (let i = 0; i + KNOWN_PIECE <= text.length; ) {
    if (!pieces.has(text.slice(i, i + KNOWN_PIECE))) {
      i++;
      continue;
    }
    let end = i + KNOWN_PIECE;
    while (end < text.length && pieces.has(text.slice(end + 1 - KNOWN_PIECE, end + 1))) end++;
    runs.push([i, end]);
    i = end;
  }
  return runs;
}

/**
 * `text` with the runs of `secret`'s pieces found in its letters and digits alone, lowercased
 * (`kcanmistral…`, `K-C-A-N-M-I-…`), replaced from the first character of each to the last.
 */
function withoutLoosePieces(text: string, secret: string): string {
  const letters = looseLetters(secret).kept;
  if (letters.length <= KNOWN_PIECE) return text;
  const { kept, at } = looseLetters(text);
  return replaced(
    text,
    pieceRuns(kept, letters).map(([start, end]) => [at[start]!, at[end - 1]! + 1]),
  );
}

/** `text`'s ASCII letters and digits alone, lowercased, and where each was in it. */
function looseLetters(text: string): { kept: string; at: number[] } {
  const at: number[] = [];
  let kept = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const lower = code >= 65 && code <= 90 ? code + 32 : code;
    if ((lower >= 48 && lower <= 57) || (lower >= 97 && lower <= 122)) {
      kept += String.fromCharCode(lower);
      at.push(i);
    }
  }
  return { kept, at };
}

/**
 * The key in base64 (padded, then without its padding) and base64url: an encoded header a
 * vendor quotes back. Where something comes before the key in what was encoded (`Bearer `,
 * `user:`), its bytes start 1 or 2 bytes into a group of 3 and encode as other characters:
 * for those two offsets, the characters of the groups that hold the key's bytes alone (its
 * pieces find them).
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const base64 = bytes.toString('base64');
  const forms = new Set([base64, base64.replace(/=+$/, ''), bytes.toString('base64url')]);
  for (const offset of [1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]);
    // The first group holds the offset's bytes; a last partial one, what comes after the key.
    const end = Math.floor(shifted.length / 3) * 4;
    for (const encoding of ['base64', 'base64url'] as const) forms.add(shifted.toString(encoding).slice(4, end));
  }
  return [...forms];
}

/** A mask in a quoted key (`KCANMI****Tv8`, `KCAN…Tv8`): `*`, `•`, `●` or `#` twice or more, three dots or more, or an ellipsis. */
const MASK = /[*•●#]{2,}|\.{3,}|…/g;

/** The fewest characters of a key's start, and of its end, that make a masked quote of it. */
const MIN_MASKED_SIDE = 3;

/**
 * `text` with every masked quote of `secret` (its start, 3 characters or more, then a mask,
 * then its end, as many) replaced. Linear: each mask is looked at once, each side of it
 * compared character by character against the key's ends.
 */
function withoutMasked(text: string, secret: string): string {
  const ranges: [number, number][] = [];
  for (const mask of text.matchAll(MASK)) {
    const maskStart = mask.index;
    const maskEnd = maskStart + mask[0].length;
    const head = longestSide(
      secret.length - 1,
      maskStart,
      (i) => text.startsWith(secret.slice(0, i), maskStart - i),
      (i) => text[maskStart - 1] === secret[i - 1],
    );
    const tail = longestSide(
      secret.length - 1,
      text.length - maskEnd,
      (i) => text.startsWith(secret.slice(secret.length - i), maskEnd),
      (i) => text[maskEnd] === secret[secret.length - i],
    );
    const start = maskStart - head;
    if (head > 0 && tail > 0 && (ranges.length === 0 || ranges[ranges.length - 1]![1] <= start)) ranges.push([start, maskEnd + tail]);
  }
  return replaced(text, ranges);
}

/** The longest length, from `most` (and at most `room`) down to MIN_MASKED_SIDE, that `matches` (checked where `could` says it may); 0 if none. */
function longestSide(most: number, room: number, matches: (length: number) => boolean, could: (length: number) => boolean): number {
  for (let length = Math.min(most, room); length >= MIN_MASKED_SIDE; length--) if (could(length) && matches(length)) return length;
  return 0;
}

/** The length of the longest start of `secret` (shorter than it, at least `min`) that `text` ends with; 0 if none. */
function knownStartAtEnd(text: string, secret: string, min: number): number {
  const last = text.charCodeAt(text.length - 1);
  for (let length = Math.min(secret.length - 1, text.length); length >= min; length--) {
    // Most lengths fail on the last character, without a slice.
    if (secret.charCodeAt(length - 1) === last && text.endsWith(secret.slice(0, length))) return length;
  }
  return 0;
}

/**
 * Model text (outputs, a judge's reasoning) with every known secret replaced, exactly:
 * a vendor that echoes the key it was sent must not hand it to the caller. Linear, for
 * texts of any length; no shapes (a model may write `sk-…` in an example).
 */
export function redactKnown(text: string, known: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of known) if (secret && secret.length >= MIN_KNOWN_LENGTH && out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * `redactKnown` over a stream of text pieces: each piece is passed on at once, less any end
 * of it that could be the start of a known secret, held until the next piece says (or the
 * stream ends), and less the first half of a surrogate pair the next piece may complete (a
 * vendor may split an emoji between two deltas: each half alone is no text, and an answer
 * writes it as U+FFFD). What it passes on, joined, is `redactKnown` of the whole text.
 */
export class KnownSecretsFilter {
  private held = '';
  private readonly secrets: string[];

  constructor(known: readonly (string | undefined)[]) {
    this.secrets = known.filter((s): s is string => s !== undefined && s.length >= MIN_KNOWN_LENGTH);
  }

  /** The text that can be passed on now ('' when all of it is held). */
  push(piece: string): string {
    const text = redactKnown(this.held + piece, this.secrets);
    let hold = 0;
    for (const secret of this.secrets) hold = Math.max(hold, knownStartAtEnd(text, secret, 1));
    const before = text.charCodeAt(text.length - hold - 1);
    if (before >= 0xd800 && before <= 0xdbff) hold++;
    this.held = text.slice(text.length - hold);
    return text.slice(0, text.length - hold);
  }

  /** What was held, at the stream's end. */
  end(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}
