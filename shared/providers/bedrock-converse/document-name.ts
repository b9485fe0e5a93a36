/** Bedrock caps a document name at 200 characters (API reference, DocumentBlock). */
const MAX_NAME_LENGTH = 200;

/**
 * A document name Bedrock accepts: only ASCII letters and digits, single spaces, hyphens,
 * parentheses and square brackets (DocumentBlock.name). Everything else becomes a space, the
 * extension is dropped, runs of whitespace collapse, and a name already `taken` in the same
 * request gets a ` (2)`, ` (3)` suffix. An empty result falls back to `document-{n}`.
 */
export function documentName(original: string, n: number, taken: ReadonlySet<string>): string {
  const base =
    original
      .replace(/\.[A-Za-z0-9]{1,5}$/, '')
      .replace(/[^A-Za-z0-9\-()[\]]+/g, ' ')
      .trim()
      .slice(0, MAX_NAME_LENGTH)
      .trim() || `document-${n}`;
  let name = base;
  for (let copy = 2; taken.has(name); copy++) {
    const suffix = ` (${copy})`;
    name = base.slice(0, MAX_NAME_LENGTH - suffix.length).trimEnd() + suffix;
  }
  return name;
}
