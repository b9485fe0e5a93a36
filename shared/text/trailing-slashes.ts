/**
 * A path or URL less its trailing slashes, found from its end: `/\/+$/` tries every slash of
 * a run against the rest of it, and a request line of 16,000 slashes then a letter held the
 * thread for a third of a second, unauthenticated.
 */
export function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}
