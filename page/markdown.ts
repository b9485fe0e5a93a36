import { Marked, Tokenizer, type Tokens } from 'marked';
import { MARKDOWN_TAGS, MAX_TABLE_CELLS, type Rendered } from './markdown-rules.js';

/** The tags an output's own HTML keeps as tags. */
const KEPT_TAGS: ReadonlySet<string> = new Set(MARKDOWN_TAGS);

/**
 * Markdown with an output's own HTML kept only where its tag is one the page keeps, every
 * other tag (and comment, doctype, `<!…>`) shown as the text it is: left as HTML, the browser
 * took the output after a `<title>`, `<script>`, `<style>` or `<textarea>` in prose ("put a
 * <title> element inside <head>") for that element's text, and DOMPurify dropped it, or an
 * `<svg>` or `<math>` with what it held: the rest of the answer gone, with no note.
 */
const markdown = new Marked({
  renderer: {
    html: ({ text }) =>
      text.replace(/<(\/?)([A-Za-z][\w-]*)?/g, (tag: string, _slash: string, name: string | undefined) =>
        name !== undefined && KEPT_TAGS.has(name.toLowerCase()) ? tag : `&lt;${tag.slice(1)}`,
      ),
    // An image as a link to it, named by its alt text: the page loads no image (img-src 'none'),
    // and DOMPurify dropped the element with its alt text, leaving a gap in the sentence.
    image(token) {
      return `image: ${this.link({ ...token, type: 'link', tokens: token.tokens ?? [{ type: 'text', raw: token.text, text: token.text }] })}`;
    },
  },
});

class TooManyCells extends Error {}

/** marked's tokenizer, counting the cells of an output's tables before it makes them: one for each render. */
class CountingTokenizer extends Tokenizer {
  private cells = 0;

  override table(src: string): Tokens.Table | undefined {
    // What marked's own table() matches: the header (1), the delimiter row (2) and the rows (3).
    const match = this.rules.block.table.exec(src);
    if (match) {
      const columns = match[2]?.match(/-+/g)?.length ?? 0;
      const rows = match[3]?.trim() ? match[3].trim().split('\n').length : 0;
      this.cells += columns * (rows + 1);
      if (this.cells > MAX_TABLE_CELLS) throw new TooManyCells();
    }
    return super.table(src);
  }
}

/**
 * An output as HTML (to be sanitised by the page), or why not: tables over MAX_TABLE_CELLS,
 * or marked's error ("Maximum call stack size exceeded" on thousands of nested quotes; marked
 * adds a second line asking to report it to its maintainers, left out).
 */
export function renderMarkdown(text: string): Rendered {
  try {
    return { html: markdown.parse(text, { async: false, gfm: true, tokenizer: new CountingTokenizer() }) };
  } catch (error) {
    if (error instanceof TooManyCells) return { tooManyCells: true };
    return { failed: (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '' };
  }
}
