/**
 * Characters of a run of one rule character (isRuleCharacter: a rule line, a table's border,
 * ASCII art, indentation) counted as any other; tokenizers take the run's further characters
 * in few tokens (of OpenAI's o200k, 4,000 dashes are 62 tokens, 4,000 `━` 500, 48 spaces
 * about 5). Letters, digits, control characters and other scripts count whole however they
 * repeat (o200k makes a token of each control character).
 */
export const RUN_COUNTED_WHOLE = 4;

/**
 * A run's further characters (past RUN_COUNTED_WHOLE) a token, as textTokens counts them:
 * generously, as the runs measured take 8 (`━`), about 10 (spaces) to 64 (dashes).
 */
const RUN_CHARACTERS_PER_TOKEN = 8;

/** Whether a UTF-16 unit is a rule character: an ASCII symbol, space, tab or line feed, or a box-drawing character (U+2500 to U+257F). */
export function isRuleCharacter(code: number): boolean {
  return code < 0x80 ? ASCII_RULE[code] === true : code >= 0x2500 && code <= 0x257f;
}

const ASCII_RULE = Array.from({ length: 128 }, (_, code) => code === 0x09 || code === 0x0a || (code >= 0x20 && code < 0x7f && !/[A-Za-z0-9]/.test(String.fromCharCode(code))));

/**
 * Tokens a text counts as usual, generously: 4 ASCII letters, digits or spaces a token, a
 * token for every other ASCII character (punctuation and symbols, which tokenizers seldom
 * join unless the same one repeats: a text made of mixed ones counts about a token a
 * character), a token for every other character (UTF-16 unit), and 8 a token for the
 * characters of a run of one rule character past its 4th (a rule line of 64 KB of dashes,
 * which a model repeating a table's border writes, counted a token a dash, had a judge call
 * charged 60 times its vendor's bill). Chinese, Japanese or Korean text counts about a token
 * a character with the vendors' tokenizers, 4 times what a flat 4 characters a token says.
 * What a call is charged when its vendor's usage cannot be used; never what it reserves
 * (textTokenBound), which a text made to tokenize badly can pass.
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
    if (run > RUN_COUNTED_WHOLE && isRuleCharacter(c)) runTail++;
    // Letters, digits and whitespace.
    else if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) words++;
  }
  return words / 4 + runTail / RUN_CHARACTERS_PER_TOKEN + (text.length - words - runTail);
}
