/**
 * Tokens a text counts as usual, generously: 4 ASCII letters, digits or spaces a token, a
 * token for every other ASCII character (punctuation and symbols, which tokenizers seldom
 * join: a text made of them counts about a token a character), and a token for every other
 * character (UTF-16 unit). Chinese, Japanese or Korean text counts about a token a character
 * with the vendors' tokenizers, 4 times what a flat 4 characters a token says.
 * What a call is charged when its vendor's usage cannot be used; never what it reserves
 * (textTokenBound), which a text made to tokenize badly can pass.
 */
export function textTokens(text: string): number {
  let words = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Letters, digits and whitespace.
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) words++;
  }
  return words / 4 + (text.length - words);
}
