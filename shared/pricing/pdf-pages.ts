import { inflateSync } from 'node:zlib';

/**
 * The most bytes of a PDF's object streams inflated to find its page tree: past it the pages
 * are not counted. Twice what a thousand-page report's object streams hold.
 */
export const MAX_INFLATED_PDF_BYTES = 2 * 1024 * 1024;

/** The most object streams inflated, and objects indexed: past them the pages are not counted. */
const MAX_OBJECT_STREAMS = 1_000;
const MAX_OBJECTS = 200_000;
/**
 * The most page tree nodes visited (a page referenced twice is visited twice, as readers count
 * it): far more pages than any vendor takes in a request (Anthropic 100 to 600, Gemini 1,000).
 */
const MAX_NODES = 10_000;
/** The most characters of an object read for its dictionary. */
const MAX_OBJECT_CHARS = 64 * 1024;

/** What comes before an object's `obj` keyword: its number and generation, after white space or the start. */
const OBJECT_HEADER = /(?:^|[\0\t\n\f\r ])(\d{1,10})[\0\t\n\f\r ]+\d{1,5}[\0\t\n\f\r ]+$/;

/** PDF white space (NUL, tab, line feed, form feed, carriage return, space) and delimiters. */
const WHITE = '\0\t\n\f\r ';
const DELIMITERS = '()<>[]{}/%';

/** A reference to an indirect object (`12 0 R`): its number. */
class Ref {
  constructor(readonly number: number) {}
}
type PdfValue = number | string | Ref | PdfValue[] | PdfDictionary | null;
interface PdfDictionary {
  [key: string]: PdfValue;
}
const isDictionary = (value: PdfValue | undefined): value is PdfDictionary => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Ref);

/**
 * Reads the PDF objects `text` starts with (a dictionary, an array, a reference `12 0 R`, a
 * number, a name, a string), as readers do: comments and strings skipped whole, names read
 * through their `#xx` escapes. Strings are read as '' (their text is not needed here).
 */
class Lexer {
  at = 0;
  constructor(private readonly text: string) {}

  private skip(): void {
    const { text } = this;
    while (this.at < text.length) {
      const c = text[this.at] as string;
      if (WHITE.includes(c)) this.at++;
      else if (c === '%') {
        while (this.at < text.length && text[this.at] !== '\n' && text[this.at] !== '\r') this.at++;
      } else return;
    }
  }

  /** The next value, or undefined at the end or on something that is not one. */
  value(depth = 0): PdfValue | undefined {
    if (depth > 64) return undefined;
    this.skip();
    const { text } = this;
    const c = text[this.at];
    if (c === undefined) return undefined;
    if (c === '<' && text[this.at + 1] === '<') {
      this.at += 2;
      const dictionary: PdfDictionary = Object.create(null);
      for (;;) {
        this.skip();
        if (text.startsWith('>>', this.at)) {
          this.at += 2;
          return dictionary;
        }
        const key = this.value(depth + 1);
        if (typeof key !== 'string' || !key.startsWith('/')) return undefined;
        const value = this.value(depth + 1);
        if (value === undefined) return undefined;
        dictionary[key.slice(1)] = value;
      }
    }
    if (c === '[') {
      this.at++;
      const array: PdfValue[] = [];
      for (;;) {
        this.skip();
        if (text[this.at] === ']') {
          this.at++;
          return array;
        }
        const value = this.value(depth + 1);
        if (value === undefined) return undefined;
        array.push(value);
      }
    }
    if (c === '(') return this.string();
    if (c === '<') {
      const end = text.indexOf('>', this.at);
      if (end < 0) return undefined;
      this.at = end + 1;
      return '';
    }
    if (c === '/') {
      let name = '/';
      this.at++;
      while (this.at < text.length && !WHITE.includes(text[this.at] as string) && !DELIMITERS.includes(text[this.at] as string)) {
        const hex = text[this.at] === '#' ? /^[0-9A-Fa-f]{2}$/.exec(text.slice(this.at + 1, this.at + 3)) : null;
        name += hex ? String.fromCharCode(Number.parseInt(hex[0], 16)) : text[this.at];
        this.at += hex ? 3 : 1;
      }
      return name;
    }
    const word = /^[^\0\t\n\f\r ()<>[\]{}/%]+/.exec(text.slice(this.at, this.at + 32))?.[0];
    if (word === undefined) return undefined;
    this.at += word.length;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) return word === 'null' ? null : word;
    // `12 0 R`: a reference, where an integer, an integer and R follow one another.
    const mark = this.at;
    const generation = /^[\0\t\n\f\r ]+\d+[\0\t\n\f\r ]+R(?![^\0\t\n\f\r ()<>[\]{}/%])/.exec(text.slice(this.at, this.at + 40));
    if (generation && /^\d+$/.test(word)) {
      this.at += generation[0].length;
      return new Ref(Number(word));
    }
    this.at = mark;
    return Number(word);
  }

  private string(): string | undefined {
    const { text } = this;
    let depth = 0;
    while (this.at < text.length) {
      const c = text[this.at++];
      if (c === '\\') this.at++;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return '';
    }
    return undefined;
  }
}

/** The first of the sorted `positions` at or after `from`, or undefined. */
function firstAfter(positions: readonly number[], from: number): number | undefined {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((positions[middle] as number) < from) low = middle + 1;
    else high = middle;
  }
  return positions[low];
}

/** The objects of a PDF by number: those written out, and those its object streams hold. */
class PdfObjects {
  private readonly written = new Map<number, number>();
  private readonly packed = new Map<number, { text: string; at: number }>();
  private readonly ends: number[];
  private readonly streamEnds: number[];

  private readonly keywords: number[] = [];

  private constructor(readonly text: string) {
    this.ends = [];
    this.streamEnds = [];
    // The keywords in one pass: a substring search per keyword took up to 25 ms each over 3.7 MB made for it (`eee…`).
    for (const found of text.matchAll(/end(?:obj|stream)|obj/g)) {
      if (found[0] === 'endobj') this.ends.push(found.index);
      else if (found[0] === 'endstream') this.streamEnds.push(found.index);
      else this.keywords.push(found.index);
    }
  }

  /** The PDF's objects, or undefined past MAX_OBJECTS, MAX_OBJECT_STREAMS or MAX_INFLATED_PDF_BYTES. */
  static read(pdf: Buffer): PdfObjects | undefined {
    const objects = new PdfObjects(pdf.toString('latin1'));
    let count = 0;
    const { text } = objects;
    // Each `obj` keyword with the object's number and generation before it.
    for (const at of objects.keywords) {
      const after = text[at + 3];
      if (after !== undefined && !WHITE.includes(after) && !DELIMITERS.includes(after)) continue;
      const header = OBJECT_HEADER.exec(text.slice(Math.max(0, at - 24), at));
      if (header === null) continue;
      if (++count > MAX_OBJECTS) return undefined;
      // A later definition (an incremental update) replaces an earlier one.
      objects.written.set(Number(header[1]), at + 3);
    }
    let streams = 0;
    let inflated = 0;
    for (const [, at] of objects.written) {
      // Only an object that starts as an object stream's dictionary does (its type, perhaps escaped, in its first KiB) is read as one:
      // one that does not is not unpacked, and a page tree object in it is then not found (no count).
      const head = objects.text.slice(at, at + 1024);
      if (!head.includes('ObjStm') && !head.includes('#')) continue;
      const dictionary = objects.parsedAt(at);
      if (!isDictionary(dictionary) || dictionary['Type'] !== '/ObjStm') continue;
      if (++streams > MAX_OBJECT_STREAMS) return undefined;
      const content = objects.inflatedStream(at, dictionary, MAX_INFLATED_PDF_BYTES - inflated);
      if (content === undefined) continue;
      inflated += content.length;
      objects.unpack(content.toString('latin1'), dictionary, at);
    }
    return objects;
  }

  private readonly parsed = new Map<number, PdfValue | undefined>();

  /** The value object `number` is, or undefined where the PDF has none that reads; each read once. */
  get(number: number): PdfValue | undefined {
    if (this.parsed.has(number)) return this.parsed.get(number);
    const at = this.written.get(number);
    const packed = this.packed.get(number);
    // Of two definitions, the one later in the file.
    const value = packed && (at === undefined || packed.at > at) ? new Lexer(packed.text).value() : at === undefined ? undefined : this.parsedAt(at);
    this.parsed.set(number, value);
    return value;
  }

  private parsedAt(at: number): PdfValue | undefined {
    const end = Math.min(firstAfter(this.ends, at) ?? this.text.length, at + MAX_OBJECT_CHARS);
    return new Lexer(this.text.slice(at, end)).value();
  }

  /** An object stream's data inflated (FlateDecode, no predictor), or undefined where it is otherwise encoded or too large. */
  private inflatedStream(at: number, dictionary: PdfDictionary, most: number): Buffer | undefined {
    const filter = Array.isArray(dictionary['Filter']) && dictionary['Filter'].length === 1 ? dictionary['Filter'][0] : dictionary['Filter'];
    if (filter !== '/FlateDecode' || dictionary['DecodeParms'] !== undefined) return undefined;
    const keyword = /stream\r?\n/g;
    keyword.lastIndex = at;
    const start = keyword.exec(this.text);
    if (start === null) return undefined;
    const dataAt = start.index + start[0].length;
    const end = firstAfter(this.streamEnds, dataAt) ?? this.text.length;
    try {
      return inflateSync(Buffer.from(this.text.slice(dataAt, end), 'latin1'), { maxOutputLength: most });
    } catch {
      return undefined;
    }
  }

  /** The objects an object stream holds: `N` pairs of number and offset, the first at `First`. */
  private unpack(content: string, dictionary: PdfDictionary, at: number): void {
    const n = dictionary['N'];
    const first = dictionary['First'];
    if (typeof n !== 'number' || typeof first !== 'number' || n < 0 || n > MAX_OBJECTS) return;
    const header = new Lexer(content.slice(0, first));
    const pairs: [number, number][] = [];
    for (let i = 0; i < n; i++) {
      const number = header.value();
      const offset = header.value();
      if (typeof number !== 'number' || typeof offset !== 'number') return;
      pairs.push([number, first + offset]);
    }
    pairs.forEach(([number, offset], i) => {
      const end = pairs[i + 1]?.[1] ?? content.length;
      this.packed.set(number, { text: content.slice(offset, Math.min(end, offset + MAX_OBJECT_CHARS)), at });
    });
  }

  /**
   * The object the PDF's last trailer names as its root (its catalog): the cross-reference
   * stream's dictionary at the offset its last `startxref` gives, else the last `trailer`
   * before it (a cross-reference table's); undefined where neither reads.
   */
  root(): number | undefined {
    const { text } = this;
    const startxref = text.lastIndexOf('startxref');
    if (startxref < 0) return undefined;
    const offset = new Lexer(text.slice(startxref + 9, startxref + 40)).value();
    const candidates: number[] = [];
    if (typeof offset === 'number' && offset >= 0 && offset < startxref) {
      const section = text.slice(offset, offset + 32);
      const header = /^\d+[\0\t\n\f\r ]+\d+[\0\t\n\f\r ]+obj/.exec(section);
      if (header) candidates.push(offset + header[0].length);
    }
    const last = text.lastIndexOf('trailer', startxref);
    if (last >= 0) candidates.push(last + 7);
    for (const at of candidates) {
      const trailer = new Lexer(text.slice(at, at + MAX_OBJECT_CHARS)).value();
      const root = isDictionary(trailer) ? trailer['Root'] : undefined;
      if (root instanceof Ref) return root.number;
    }
    return undefined;
  }
}

/**
 * The pages of a PDF as its readers count them: the leaves of its page tree, walked from the
 * catalog its last trailer names (a page referenced twice counted twice), or the page count
 * its root declares where that is more. Read as readers read PDF objects (comments, strings,
 * `#xx` escapes, references, incremental updates, FlateDecode object streams). Undefined
 * where the count cannot be trusted: no catalog, an object of the tree it cannot find or read
 * (held in an object stream otherwise encoded, encrypted, past MAX_INFLATED_PDF_BYTES), a
 * cycle, more than MAX_NODES nodes, or no page.
 */
export function pdfPages(pdf: Buffer): number | undefined {
  const objects = PdfObjects.read(pdf);
  const rootNumber = objects?.root();
  if (objects === undefined || rootNumber === undefined) return undefined;
  const resolve = (value: PdfValue | undefined): PdfValue | undefined => (value instanceof Ref ? objects.get(value.number) : value);
  const catalog = objects.get(rootNumber);
  const top = isDictionary(catalog) ? catalog['Pages'] : undefined;
  const rootNode = resolve(top);
  if (!(top instanceof Ref) || !isDictionary(rootNode)) return undefined;
  let leaves = 0;
  let visits = 0;
  // Depth first; a node stays on `path` until its subtree is done, so that a cycle is seen.
  const path = new Set<number>();
  const stack: (number | { done: number })[] = [top.number];
  while (stack.length > 0) {
    const next = stack.pop() as number | { done: number };
    if (typeof next !== 'number') {
      path.delete(next.done);
      continue;
    }
    if (++visits > MAX_NODES || path.has(next)) return undefined;
    const node = objects.get(next);
    if (!isDictionary(node)) return undefined;
    const kids = resolve(node['Kids']);
    if (node['Type'] !== '/Pages' && kids === undefined) {
      leaves++;
      continue;
    }
    if (!Array.isArray(kids)) return undefined;
    path.add(next);
    stack.push({ done: next });
    for (const kid of kids) {
      if (!(kid instanceof Ref)) return undefined;
      stack.push(kid.number);
    }
  }
  const declared = resolve(rootNode['Count']);
  const pages = Math.max(leaves, typeof declared === 'number' && Number.isFinite(declared) ? Math.floor(declared) : 0);
  return pages > 0 ? pages : undefined;
}
