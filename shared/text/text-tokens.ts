/**
 * Characters of a run of one character that packs (packsInRuns) counted as any other; every
 * tokenizer the vendors use takes the run's further characters in few tokens.
 */
export const RUN_COUNTED_WHOLE = 4;

/**
 * A run's further characters (past RUN_COUNTED_WHOLE) a token, as textTokens counts them:
 * generously, as every tokenizer measured takes the runs of packsInRuns's characters 8 or more
 * to a token (of OpenAI's o200k, 4,000 dashes are 62 tokens, 48 spaces about 5).
 */
const RUN_CHARACTERS_PER_TOKEN = 8;

/**
 * Whether a UTF-16 unit is one whose runs every tokenizer measured packs 8 or more to a token
 * (o200k, cl100k, Claude's, Gemini's and Llama's, Mistral's SentencePiece): a rule line's,
 * a table border's or indentation's `-` `=` `_` `*` `#` `.` `/` `~` `%`, the space and `─`.
 * Not the others: a run of `┼`, `│` or `━` is a token or two a character with some of them,
 * of `{` or `"` half a token, of tabs or line ends a token a character with Llama 2's.
 */
export function packsInRuns(code: number): boolean {
  return code < 0x80 ? PACKED_ASCII[code] === true : code === 0x2500;
}

const PACKED_ASCII = Array.from({ length: 128 }, (_, code) => '-=_*#./~% '.includes(String.fromCharCode(code)));

/**
 * Whether a UTF-16 unit outside ASCII is of an alphabet tokenizers take several to a token, as
 * they take ASCII's letters: accented and extended Latin, IPA, combining marks, Greek, Cyrillic,
 * Armenian, Hebrew, Arabic, the Indic scripts, Thai, Georgian (U+00C0 to U+10FF but × and ÷),
 * Latin and Greek extended (U+1E00 to U+1FFF); not Chinese, Japanese or Korean, which they take
 * about a token a character, nor Latin-1's symbols. Ranges, not Unicode properties: a property
 * regex over a prefix of megabytes, once a model, had held the thread seconds.
 */
function alphabetic(code: number): boolean {
  return (code >= 0xc0 && code <= 0x10ff && code !== 0xd7 && code !== 0xf7) || (code >= 0x1e00 && code <= 0x1fff);
}

/**
 * A prompt prefix's tokens as the cache-minimum warning counts them (cacheMinimumWarnings):
 * textTokens, but other alphabets' letters, digits and marks 4 a token as ASCII's, where
 * textTokens counts each a token, generously for a charge. For the warning that a breakpoint
 * caches nothing, that leaned the wrong way: a Russian prefix of about 1,300 tokens (o200k)
 * had counted 4,500, over a 4,096 minimum, and had no warning.
 */
export function prefixTokens(text: string): number {
  let letters = 0;
  for (let i = 0; i < text.length; i++) if (alphabetic(text.charCodeAt(i))) letters++;
  return textTokens(text) - 0.75 * letters;
}

/**
 * Tokens a text counts as usual, generously: 4 ASCII letters, digits or spaces a token, a
 * token for every other ASCII character (punctuation and symbols, which tokenizers seldom
 * join unless the same one repeats: a text made of mixed ones counts about a token a
 * character), a token for every other character (UTF-16 unit), and 8 a token for the
 * characters of a run of one that packs (packsInRuns) past its 4th (a rule line of 64 KB of
 * dashes, which a model repeating a table's border writes, counted a token a dash, had a
 * judge call charged 60 times its vendor's bill). Chinese, Japanese or Korean text counts
 * about a token a character with the vendors' tokenizers, 4 times what a flat 4 characters a
 * token says. What a call is charged when its vendor's usage cannot be used; never what it
 * reserves (textTokenBound), which a text made to tokenize badly can pass.
 */
export function textTokens(text: string): number {
  let words = 0;
  let runTail = 0;
  let previous = -1;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    run = c === previous ? run + 1 : 1;
    previous = c;
    if (run > RUN_COUNTED_WHOLE && packsInRuns(c)) runTail++;
    // Letters, digits and whitespace.
    else if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) words++;
  }
  return words / 4 + runTail / RUN_CHARACTERS_PER_TOKEN + (text.length - words - runTail);
}
