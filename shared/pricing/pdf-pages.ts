import { inflateSync } from 'node:zlib';

/**
 * The most bytes of a PDF's object streams inflated to find its pages: past it the pages are
 * not counted. Twice what a thousand-page report's object streams hold; a few ms of the thread.
 */
export const MAX_INFLATED_PDF_BYTES = 2 * 1024 * 1024;

/**
 * A pattern of a PDF name, each of its characters also matched as its `#xx` escape (`/P#61ge` is
 * `/Page`), so that no escaped copy of the whole text is made to search it.
 */
function pdfName(name: string): string {
  let pattern = '/';
  for (const c of name) {
    const hex = [...c.charCodeAt(0).toString(16)].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('');
    pattern += `(?:${c}|#${hex})`;
  }
  // What ends a name: white space or a delimiter, or the end of the text.
  return `${pattern}(?=[\\s/<>\\[\\](){}%]|$)`;
}

/** A page object: `/Type /Page`, not `/Pages`. */
const PAGE_OBJECT = new RegExp(`${pdfName('Type')}\\s*${pdfName('Page')}`, 'g');
/** A page tree node's count of the pages under it. */
const PAGE_COUNT = new RegExp(`${pdfName('Count')}\\s+(\\d{1,9})`, 'g');
/** An object stream's type (PDF 1.5): objects compressed together, page objects among them. */
const OBJECT_STREAM = new RegExp(`${pdfName('Type')}\\s*${pdfName('ObjStm')}`);
/** A stream's data starts after this keyword and its line end (`endstream` is not it). */
const STREAM_START = /(?<!end)stream\r?\n/g;
/** The most streams whose dictionaries are read: past it the pages are not counted (a 1,000-page report has a few thousand). */
const MAX_STREAMS = 20_000;
/** How far before its data a stream's dictionary is looked for. */
const DICTIONARY_BYTES = 4096;

/** The page objects in `text`, and the largest page count a page tree node declares. */
function pagesIn(text: string): { objects: number; declared: number } {
  let declared = 0;
  for (const [, count] of text.matchAll(PAGE_COUNT)) declared = Math.max(declared, Number(count));
  return { objects: text.match(PAGE_OBJECT)?.length ?? 0, declared };
}

/**
 * The pages of a PDF, as the vendors that bill a PDF by its pages will count them, at least:
 * the larger of its page objects (`/Type /Page`, in its bytes and in its FlateDecode object
 * streams, where PDF 1.5 compresses them) and the largest `/Count` of its page tree's nodes,
 * names read through their `#xx` escapes. Undefined where the count cannot be trusted: an object
 * stream it cannot inflate (another filter, encryption, past MAX_INFLATED_PDF_BYTES in all),
 * more than MAX_STREAMS streams, or no page found at all. Counted without parsing the PDF's structure: a PDF written to hide
 * its pages from these patterns (a comment between `/Type` and `/Page`, say) can be counted
 * short.
 */
export function pdfPages(pdf: Buffer): number | undefined {
  const text = pdf.toString('latin1');
  let { objects, declared } = pagesIn(text);
  let inflated = 0;
  // Where the keyword before ended: each byte is looked at as a dictionary once at most.
  let previous = 0;
  let streams = 0;
  for (const start of text.matchAll(STREAM_START)) {
    if (++streams > MAX_STREAMS) return undefined;
    const dataAt = start.index + start[0].length;
    // The stream's dictionary: what precedes the keyword, back to the object before it.
    const before = text.slice(Math.max(previous, start.index - DICTIONARY_BYTES), start.index);
    previous = dataAt;
    if (!OBJECT_STREAM.test(before.slice(Math.max(before.lastIndexOf('endobj'), before.lastIndexOf('endstream'), 0)))) continue;
    const end = text.indexOf('endstream', dataAt);
    let content: Buffer;
    try {
      content = inflateSync(pdf.subarray(dataAt, end < 0 ? pdf.length : end), { maxOutputLength: MAX_INFLATED_PDF_BYTES - inflated });
    } catch {
      return undefined;
    }
    inflated += content.length;
    const found = pagesIn(content.toString('latin1'));
    objects += found.objects;
    declared = Math.max(declared, found.declared);
  }
  const pages = Math.max(objects, declared);
  return pages > 0 ? pages : undefined;
}
