/**
 * Tokens a text counts as usual, generously: 4 ASCII characters a token, and a token for
 * every other character (UTF-16 unit). Chinese, Japanese or Korean text counts about a token
 * a character with the vendors' tokenizers, 4 times what a flat 4 characters a token says.
 * What a call is charged when its vendor's usage cannot be used; never what it reserves
 * (textTokenBound), which a text made to tokenize badly can pass.
 */
export function textTokens(text: string): number {
  let other = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) other++;
  return (text.length - other) / 4 + other;
}
