/**
 * Whether the quote at `at` in a JSON-like text is escaped: it follows an odd run of
 * backslashes. A scanner that asks at each quote reads each run once, by the quote after it.
 */
export function escapedQuoteAt(text: string, at: number): boolean {
  let before = at - 1;
  while (before >= 0 && text.charCodeAt(before) === 0x5c) before--;
  return (at - 1 - before) % 2 === 1;
}
