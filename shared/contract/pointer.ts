/** One segment of a JSON pointer (RFC 6901): `~` and `/` escaped. */
export function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** One segment of a JSON pointer read back: `~1` and `~0` unescaped. */
export function unescapePointer(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
