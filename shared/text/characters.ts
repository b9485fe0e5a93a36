/** Text in characters: cut without splitting one, counted as Unicode counts them, and blank. */

/**
 * `text` cut to at most `length` UTF-16 code units, never inside a surrogate pair: a lone
 * half is not a character, and strict JSON and UTF-8 readers refuse it. For the texts the
 * gateway cuts short before they reach an answer or a log (vendor messages, a judge's
 * reasoning, an answer shown to a judge).
 */
export function cutWhole(text: string, length: number): string {
  if (text.length <= length) return text;
  const end = length > 0 && (text.charCodeAt(length - 1) & 0xfc00) === 0xd800 ? length - 1 : length;
  return text.slice(0, end);
}

/** Characters as Unicode counts them (code points), as the request's limits count them: an emoji is one, not its two UTF-16 units. */
export function codePoints(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
}

/**
 * A character JavaScript, Unicode and Python all take for text: not JavaScript's `\s`, nor
 * the whitespace it leaves out, NEL (U+0085), which Unicode counts, and the information
 * separators U+001C to U+001F, which Python's `str.strip` counts too (vendors' servers may
 * check text with it).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the information separators are the control characters this class is about.
const NOT_BLANK = /[^\s\u0085\u001c-\u001f]/u;

/** Whether `text` holds no text: empty, or whitespace only (the request's fields and models' answers alike). */
export function isBlank(text: string): boolean {
  return !NOT_BLANK.test(text);
}
