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
