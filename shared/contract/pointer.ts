/**
 * One segment of a JSON pointer (RFC 6901): `~` and `/` escaped, and half a surrogate pair
 * (a caller's member name may hold one: valid JSON escapes, not text) written as U+FFFD, so
 * that the pointer is text strict JSON readers take back in an error body.
 */
export function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1').toWellFormed();
}

/** One segment of a JSON pointer read back: `~1` and `~0` unescaped. */
export function unescapePointer(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
