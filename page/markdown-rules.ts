/**
 * What the page and its Markdown thread agree on: the tags an output's Markdown keeps, the
 * most table cells it renders, and the messages between them. No code of marked's or
 * DOMPurify's: each side bundles only its own.
 */

/** The formatting Markdown writes: what DOMPurify keeps (main.ts, SANITIZE), and the tags of an output's own HTML kept as tags (markdown.ts). */
export const MARKDOWN_TAGS: readonly string[] = [
  ...['p', 'br', 'hr', 'blockquote', 'pre', 'code', 'kbd', 'samp', 'em', 'strong', 'b', 'i', 's', 'del', 'ins', 'mark', 'sub', 'sup', 'small'],
  ...['ul', 'ol', 'li', 'dl', 'dt', 'dd', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
  ...['table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td'],
];

/**
 * The most cells an output's tables hold as Markdown. A row shorter than its table's header
 * gets empty cells up to the header's count (GFM), so that 24,000 characters (a header of
 * 3,000 columns, then 6,000 rows of `|`) made 18 million cells: marked alone took 17 s to
 * write them, 180 MB of HTML. A table in 24,000 characters that writes each of its cells
 * holds fewer than this.
 */
export const MAX_TABLE_CELLS = 10_000;

/** A text to render, numbered by the page. */
export interface RenderRequest {
  id: number;
  text: string;
}

/** The thread's answer: the HTML (not sanitised yet), or why there is none. */
type RenderAnswer = { id: number } & Rendered;

/** What the thread sends: that its script has loaded (first), then its answers. */
export type ThreadMessage = { loaded: true } | RenderAnswer;

/** A render's outcome: the HTML, tables over MAX_TABLE_CELLS, marked's error, or the render stopped at its time limit (the page's own word). */
export type Rendered = { html: string } | { tooManyCells: true } | { failed: string } | { tooSlow: true };
