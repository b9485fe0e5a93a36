import { inflateSync } from 'node:zlib';

/** The most bytes of a PDF's object streams inflated: past it the pages are not counted. Twice what a thousand-page report's hold. */
export const MAX_INFLATED_PDF_BYTES = 2 * 1024 * 1024;

/** Past any of these the pages are not counted: work bounded whatever the bytes. */
const LIMITS = {
  /** `obj`, `endobj`, `endstream` and `trailer` keywords in the file. */
  keywords: 30_000,
  /** Object definitions, written out or unpacked from object streams. */
  definitions: 30_000,
  objectStreams: 1_000,
  /** Objects one object stream holds (writers put 100 to 200). */
  objectsInStream: 10_000,
  /** Page tree nodes read, each once (a page named twice is counted twice, as readers count it): far more pages than any vendor takes in a request. */
  nodes: 10_000,
  /** Kids references followed in all (a node's every definition, and its Kids' every definition, followed). */
  references: 100_000,
  /** Page tree depth (real trees are a few levels deep). */
  depth: 256,
  /** Characters of one object read for its value. */
  objectChars: 64 * 1024,
  /** Characters read as PDF values in all (what a value's reading went over, an unterminated string's whole span). */
  lexedChars: 512 * 1024,
} as const;

/** Thrown where the count cannot be trusted or the work would pass LIMITS: pdfPageCounts answers undefined. */
class Uncounted extends Error {}

/**
 * Counting work LIMITS allow, spent as a PDF is counted: `times` LIMITS' worth, and its
 * `shared` budget's too where given. bound.ts gives each PDF its own, out of one of 3 times
 * for the request's PDFs together: ten PDFs made for it cost the thread what three do.
 */
export class PdfCountBudget {
  private keywords: number;
  private lexedChars: number;
  private definitions: number;

  constructor(
    times = 1,
    private readonly shared?: PdfCountBudget,
  ) {
    this.keywords = LIMITS.keywords * times;
    this.lexedChars = LIMITS.lexedChars * times;
    this.definitions = LIMITS.definitions * times;
  }

  spend(kind: 'keywords' | 'lexedChars' | 'definitions', amount: number): void {
    this[kind] -= amount;
    if (this[kind] < 0) throw new Uncounted();
    this.shared?.spend(kind, amount);
  }
}

/** What a request's PDFs together may spend, in LIMITS' worth (PdfCountBudget). */
export const REQUEST_PDF_BUDGET = 3;

/** Each character's class: PDF white space (NUL, tab, line feed, form feed, carriage return, space), a delimiter, or regular. */
const WHITE = 1;
const DELIMITER = 2;
const CLASS = new Uint8Array(256);
for (const c of '\0\t\n\f\r ') CLASS[c.charCodeAt(0)] = WHITE;
for (const c of '()<>[]{}/%') CLASS[c.charCodeAt(0)] = DELIMITER;
/** Whether the character at `at` is regular (part of a name, a number or a keyword); false past the end. */
const isRegular = (text: string, at: number) => at < text.length && CLASS[text.charCodeAt(at) & 0xff] === 0;

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
 * Reads the PDF value `text` starts with (a dictionary, an array, a reference `12 0 R`, a
 * number, a name, a string), as readers do: white space with NUL, comments and strings skipped
 * whole, names read through their `#xx` escapes. Strings read as '' (their text is not needed).
 */
function readValue(text: string): { value: PdfValue | undefined; read: number } {
  const reader = new ValueReader(text);
  const value = reader.value(0);
  return { value, read: reader.at };
}

/** readValue's reader: its methods made once (a function's closures cost each call their making). */
class ValueReader {
  at = 0;
  constructor(private readonly text: string) {}

  private skip(): void {
    const { text } = this;
    while (this.at < text.length) {
      const code = text.charCodeAt(this.at);
      if (CLASS[code & 0xff] === WHITE) this.at++;
      else if (code === 0x25 /* % */) while (this.at < text.length && text.charCodeAt(this.at) !== 0x0a && text.charCodeAt(this.at) !== 0x0d) this.at++;
      else return;
    }
  }

  value(depth: number): PdfValue | undefined {
    if (depth > 64) return undefined;
    this.skip();
    const { text } = this;
    const c = text[this.at];
    if (c === undefined) return undefined;
    if (c === '<' && text[this.at + 1] === '<') return this.dictionary(depth);
    if (c === '[') return this.array(depth);
    if (c === '(') return this.string();
    if (c === '<') {
      const end = text.indexOf('>', this.at);
      this.at = end < 0 ? text.length : end + 1;
      return end < 0 ? undefined : '';
    }
    const start = c === '/' ? ++this.at : this.at;
    while (isRegular(text, this.at)) this.at++;
    const word = text.slice(start, this.at);
    if (c === '/') return `/${word.includes('#') ? word.replace(/#([0-9A-Fa-f]{2})/g, hexCharacter) : word}`;
    if (word === '') return undefined;
    if (!NUMBER.test(word)) return word === 'null' ? null : word;
    return (INTEGER.test(word) && this.reference(Number(word))) || Number(word);
  }

  private dictionary(depth: number): PdfDictionary | undefined {
    this.at += 2;
    const dictionary: PdfDictionary = Object.create(null);
    for (;;) {
      this.skip();
      if (this.text.startsWith('>>', this.at)) {
        this.at += 2;
        return dictionary;
      }
      const key = this.value(depth + 1);
      if (typeof key !== 'string' || !key.startsWith('/')) return undefined;
      const entry = this.value(depth + 1);
      if (entry === undefined) return undefined;
      dictionary[key.slice(1)] = entry;
    }
  }

  private array(depth: number): PdfValue[] | undefined {
    this.at++;
    const array: PdfValue[] = [];
    for (;;) {
      this.skip();
      if (this.text[this.at] === ']') {
        this.at++;
        return array;
      }
      const entry = this.value(depth + 1);
      if (entry === undefined) return undefined;
      array.push(entry);
    }
  }

  /** A literal string, balanced parentheses and escapes skipped: read as ''. */
  private string(): string | undefined {
    const { text } = this;
    let open = 0;
    while (this.at < text.length) {
      const code = text.charCodeAt(this.at++);
      if (code === 0x5c /* backslash */) this.at++;
      else if (code === 0x28) open++;
      else if (code === 0x29 && --open === 0) return '';
    }
    return undefined;
  }

  /** `12 0 R` after the integer just read: the reference, the reader past it; else undefined, the reader where it was. */
  private reference(number: number): Ref | undefined {
    const { text } = this;
    let next = this.at;
    while (isWhiteAt(text, next)) next++;
    const generationAt = next;
    while (next < text.length && isDigitAt(text, next) && next - generationAt < 10) next++;
    if (next === generationAt || !isWhiteAt(text, next)) return undefined;
    while (isWhiteAt(text, next)) next++;
    if (text[next] !== 'R' || isRegular(text, next + 1)) return undefined;
    this.at = next + 1;
    return new Ref(number);
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

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;
const INTEGER = /^\d+$/;
const hexCharacter = (_: string, hex: string) => String.fromCharCode(Number.parseInt(hex, 16));

/**
 * The object number and where the header starts, of the `obj` keyword at `keyword`: `12 0 obj`,
 * read backwards (white space, the generation, white space, the number), after any character
 * but a digit (a string of Ghostscript's Info runs into the next object's header).
 */
function objectHeader(text: string, keyword: number): { number: number; start: number } | undefined {
  let at = keyword - 1;
  if (!isWhiteAt(text, at)) return undefined;
  at = backOverWhite(text, at);
  const generationEnd = at;
  while (isDigitAt(text, at) && generationEnd - at < 10) at--;
  if (at === generationEnd || isDigitAt(text, at) || !isWhiteAt(text, at)) return undefined;
  at = backOverWhite(text, at);
  const numberEnd = at;
  while (isDigitAt(text, at) && numberEnd - at < 20) at--;
  if (at === numberEnd || isDigitAt(text, at)) return undefined;
  return { number: Number(text.slice(at + 1, numberEnd + 1)), start: at + 1 };
}

/**
 * Back from `at` over white space and comments (a `%` to its line's end is white space to a
 * reader: `3 0 %note` then `obj` on the next line is a header): where what is not starts.
 */
function backOverWhite(text: string, at: number): number {
  for (let comments = 0; ; comments++) {
    // Only a line break crossed can have a comment before it: a % earlier on the same line is text (`50% of each obj`).
    let crossedLine = false;
    while (isWhiteAt(text, at)) {
      const code = text.charCodeAt(at);
      if (code === 0x0a || code === 0x0d) crossedLine = true;
      at--;
    }
    if (!crossedLine || comments === 8) return at;
    // The first % of this line within 64 characters back, if any, starts a comment that ends here.
    let percent = -1;
    for (let back = at; back >= 0 && at - back < 64; back--) {
      const code = text.charCodeAt(back);
      if (code === 0x0a || code === 0x0d) break;
      if (code === 0x25) percent = back;
    }
    if (percent < 0) return at;
    at = percent - 1;
  }
}

function isDigitAt(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 0x30 && code <= 0x39;
}

function isWhiteAt(text: string, at: number): boolean {
  return at >= 0 && at < text.length && CLASS[text.charCodeAt(at) & 0xff] === WHITE;
}

/** An object's definition: where its value starts in the file and where the next object's header does, or its text in an object stream. */
type Definition = { at: number; end: number } | { text: string };

/** Every definition of every object of a PDF (an object defined twice, by an incremental update or not, has both), and its trailers. */
class PdfObjects {
  readonly definitions = new Map<number, Definition[]>();
  readonly trailers: number[] = [];
  private readonly streamEnds: number[] = [];
  private readonly values = new Map<Definition, PdfValue | undefined>();

  /** The file as latin1 text, a character a byte: offsets in the one are offsets in the other. */
  readonly text: string;

  constructor(
    private readonly bytes: Buffer,
    private readonly budget: PdfCountBudget,
  ) {
    const text = bytes.toString('latin1');
    this.text = text;
    const headers: { number: number; start: number; at: number }[] = [];
    for (const found of text.matchAll(/end(?:obj|stream)|obj|trailer/g)) {
      this.budget.spend('keywords', 1);
      if (found[0] === 'endstream') this.streamEnds.push(found.index);
      else if (found[0] === 'trailer') this.trailers.push(found.index + 7);
      else if (found[0] === 'obj' && !isRegular(text, found.index + 3)) {
        const header = objectHeader(text, found.index);
        if (header) headers.push({ ...header, at: found.index + 3 });
        // A keyword after two numbers, or after a line of two numbers and a comment, that reads as no header (24 digits,
        // a long comment inside it, `2 0obj`) may be one a reader takes; after one number (`wrote 3 obj files`) it is text.
        else if (this.hiddenHeader(isWhiteAt(text, found.index - 1) ? backOverWhite(text, found.index - 1) : found.index - 1)) throw new Uncounted();
      }
    }
    headers.forEach(({ number, at }, i) => {
      this.define(number, { at, end: headers[i + 1]?.start ?? text.length });
    });
  }

  /**
   * Whether what ends at `at` (before an `obj` that reads as no header) may be a header all the
   * same: two numbers (one of them longer than a header's are read), or a line that starts
   * `12 0 %` (its comment too long to skip back over). The line is looked for within 4 KiB,
   * charged to the budget.
   */
  private hiddenHeader(at: number): boolean {
    if (isDigitAt(this.text, at)) return /(?:^|[^\d])\d+[\0\t\n\f\r ]+\d+$/.test(this.text.slice(Math.max(0, at - 63), at + 1));
    let start = at;
    while (start > 0 && at - start < 4096 && this.text.charCodeAt(start - 1) !== 0x0a && this.text.charCodeAt(start - 1) !== 0x0d) start--;
    this.charge(at - start);
    return /^[\0\t\f ]*\d+[\0\t\f ]+\d+[\0\t\f ]*%/.test(this.text.slice(start, Math.min(at + 1, start + 64)));
  }

  private define(number: number, definition: Definition): void {
    this.budget.spend('definitions', 1);
    const list = this.definitions.get(number);
    if (list) list.push(definition);
    else this.definitions.set(number, [definition]);
  }

  /** What of a definition is read for its value (up to LIMITS.objectChars): searched first for what says it is worth reading. */
  span(definition: Definition): string {
    return 'text' in definition ? definition.text.slice(0, LIMITS.objectChars) : this.text.slice(definition.at, Math.min(definition.end, definition.at + LIMITS.objectChars));
  }

  /** A definition's value, read once. */
  value(definition: Definition): PdfValue | undefined {
    if (this.values.has(definition)) return this.values.get(definition);
    const value = this.read(this.span(definition));
    this.values.set(definition, value);
    return value;
  }

  /** A trailer's dictionary. */
  trailer(at: number): PdfValue | undefined {
    return this.read(this.text.slice(at, at + LIMITS.objectChars));
  }

  /** The value `text` starts with, what its reading went over charged to the budget. */
  private read(text: string): PdfValue | undefined {
    const { value, read } = readValue(text);
    this.charge(read);
    return value;
  }

  charge(chars: number): void {
    this.budget.spend('lexedChars', chars);
  }

  /**
   * Adds the objects the object streams hold. An object stream it cannot read (another filter,
   * a predictor, encryption, past MAX_INFLATED_PDF_BYTES or LIMITS) makes the count untrusted:
   * the tree may be in it.
   */
  unpackObjectStreams(): void {
    let streams = 0;
    let inflated = 0;
    for (const list of [...this.definitions.values()]) {
      for (const definition of list) {
        if ('text' in definition) continue;
        // An object stream, however its dictionary says so: /Type /ObjStm, escaped or a reference, or its N and First.
        const span = this.span(definition);
        if (!span.includes('ObjStm') && !span.includes('#') && !span.includes('First')) continue;
        const dictionary = this.value(definition);
        // A dictionary that does not read (past LIMITS.objectChars, nested past 64) may be an object stream readers unpack.
        if (!isDictionary(dictionary)) {
          if (/stream\r?\n/.test(span) || span.length >= LIMITS.objectChars) throw new Uncounted();
          continue;
        }
        const typed = dictionary['Type'] === '/ObjStm' || dictionary['Type'] instanceof Ref;
        const shaped = dictionary['N'] !== undefined && dictionary['First'] !== undefined;
        if (!typed && !shaped) continue;
        if (++streams > LIMITS.objectStreams) throw new Uncounted();
        const content = this.inflated(definition, dictionary, MAX_INFLATED_PDF_BYTES - inflated);
        inflated += content.length;
        this.unpack(content.toString('latin1'), dictionary);
      }
    }
  }

  private inflated(definition: { at: number; end: number }, dictionary: PdfDictionary, most: number): Buffer {
    const filter = Array.isArray(dictionary['Filter']) && dictionary['Filter'].length === 1 ? dictionary['Filter'][0] : dictionary['Filter'];
    if (filter !== '/FlateDecode' || dictionary['DecodeParms'] !== undefined) throw new Uncounted();
    const span = this.text.slice(definition.at, definition.end);
    const keyword = /stream\r?\n/.exec(span);
    if (keyword === null) throw new Uncounted();
    const dataAt = definition.at + keyword.index + keyword[0].length;
    const end = Math.min(firstAfter(this.streamEnds, dataAt) ?? definition.end, definition.end);
    try {
      return inflateSync(this.bytes.subarray(dataAt, end), { maxOutputLength: most });
    } catch {
      throw new Uncounted();
    }
  }

  /** The objects an object stream holds: `N` pairs of number and offset, the first at `First`. */
  private unpack(content: string, dictionary: PdfDictionary): void {
    const n = dictionary['N'];
    const first = dictionary['First'];
    if (typeof n !== 'number' || typeof first !== 'number' || !Number.isInteger(n) || n < 0 || n > LIMITS.objectsInStream || first < 0) throw new Uncounted();
    const header = content.slice(0, first);
    this.charge(header.length);
    // Readers skip a comment in the header; its digits are no pair.
    const numbers = header.replace(/%[^\r\n]*/g, ' ').match(/\d+/g) ?? [];
    if (numbers.length < 2 * n) throw new Uncounted();
    for (let i = 0; i < n; i++) {
      const offset = first + Number(numbers[2 * i + 1]);
      const next = i + 1 < n ? first + Number(numbers[2 * i + 3]) : content.length;
      // Offsets rise (PDF 32000, 7.5.7): objects that overlap would have the same text read again and again.
      if (next < offset) throw new Uncounted();
      this.define(Number(numbers[2 * i]), { text: content.slice(offset, Math.min(next, offset + LIMITS.objectChars)) });
    }
  }
}

/**
 * The pages of a PDF both ways, at least as many as readers count. `held`, what a hold must
 * cover: the leaves of its page tree (a page named twice counted twice), walked from each
 * catalog the file holds or a trailer names, over every definition of each object (a stale one
 * an incremental update replaced, or one planted to be read instead, counted too), the largest
 * count taken, and a tree node's `/Count` where it says more. `read`, what an estimate charges:
 * the leaves a reader of the last revision walks. Objects are read as readers read them (white
 * space with NUL, comments, strings, escaped names, references, FlateDecode object streams).
 * Undefined where the count cannot be trusted: no catalog, an object of a tree it cannot find
 * or read, an object stream it cannot read (another filter, a predictor, encryption), a cycle,
 * past MAX_INFLATED_PDF_BYTES or LIMITS (from `budget`, which a request's PDFs may share), or
 * no page.
 */
export function pdfPageCounts(pdf: Buffer, budget = new PdfCountBudget()): { held: number; read: number } | undefined {
  try {
    const objects = new PdfObjects(pdf, budget);
    objects.unpackObjectStreams();
    const catalogs = catalogsOf(objects);
    const held = countPages(objects, catalogs, 'held');
    const read = countPages(objects, catalogs, 'read');
    // A tree made to count past any context (a node named twice at every level) is held at the context anyway.
    return held > 0 && read > 0 ? { held: Math.min(held, 1e9), read: Math.min(read, 1e9) } : undefined;
  } catch (error) {
    if (error instanceof Uncounted) return undefined;
    throw error;
  }
}

/** The catalogs: each object a trailer or a cross-reference stream names as its root, and each that says it is one. */
function catalogsOf(objects: PdfObjects): Set<number> {
  const catalogs = new Set<number>();
  for (const at of objects.trailers) {
    // The word in a text ("a movie trailer") is no trailer: one is a dictionary after the keyword.
    if (!/^[\0\t\n\f\r ]*(%[^\r\n]*[\r\n][\0\t\n\f\r ]*)*<</.test(objects.text.slice(at, at + 256))) continue;
    const trailer = objects.trailer(at);
    // A trailer that does not read may name the catalog readers use.
    if (!isDictionary(trailer)) throw new Uncounted();
    if (trailer['Root'] instanceof Ref) catalogs.add(trailer['Root'].number);
  }
  for (const [number, list] of objects.definitions) {
    for (const definition of list) {
      const head = objects.span(definition);
      if (!head.includes('Catalog') && !head.includes('XRef') && !head.includes('Root') && !head.includes('#')) continue;
      const value = objects.value(definition);
      // One that says Catalog or XRef, or fills what is read, and does not read may be the catalog, or name the one, readers use.
      if (!isDictionary(value)) {
        if (head.includes('Catalog') || head.includes('XRef') || head.length >= LIMITS.objectChars) throw new Uncounted();
        continue;
      }
      if (value['Type'] === '/Catalog') catalogs.add(number);
      // A cross-reference stream's root, whatever its /Type says (readers follow startxref to it, typed or not).
      if (value['Root'] instanceof Ref) catalogs.add(value['Root'].number);
    }
  }
  return catalogs;
}

/**
 * The pages of the catalogs' trees, the most any gives. `held`: over every definition of each
 * node (and of its Kids), a node's `/Count` where it says more. `read`: as a reader of the file's
 * last revision walks it, each object's last definition, its leaves alone.
 */
function countPages(objects: PdfObjects, catalogs: ReadonlySet<number>, way: 'held' | 'read'): number {
  const declared = way === 'held';
  const definitionsOf = (number: number): Definition[] | undefined => {
    const list = objects.definitions.get(number);
    return list && !declared ? list.slice(-1) : list;
  };
  // Every value a member may be: itself, or each definition of the object it refers to.
  const alternatives = (value: PdfValue | undefined): (PdfValue | undefined)[] =>
    value instanceof Ref ? (definitionsOf(value.number) ?? []).map((definition) => objects.value(definition)) : [value];
  const counted = new Map<number, number>();
  const onPath = new Set<number>();
  let visits = 0;
  let references = 0;
  // The leaves under node `number`, the most any of its definitions (and of its Kids' and Count's) gives.
  const leavesUnder = (number: number): number => {
    const known = counted.get(number);
    if (known !== undefined) return known;
    if (++visits > LIMITS.nodes || onPath.has(number) || onPath.size >= LIMITS.depth) throw new Uncounted();
    const list = definitionsOf(number);
    if (!list) throw new Uncounted();
    onPath.add(number);
    let most = 0;
    for (const definition of list) {
      const node = objects.value(definition);
      if (!isDictionary(node)) throw new Uncounted();
      const leaf = node['Type'] !== '/Pages' && node['Kids'] === undefined;
      // A node typed /Page is a page to the readers that go by its type (pypdf, pdf.js), whatever Kids it has: 200 of them
      // with empty Kids had counted none (a PDF of 201 pages held as 1). Its Kids are walked too, for readers that follow them.
      if (leaf || node['Type'] === '/Page') most = Math.max(most, 1);
      if (leaf) continue;
      for (const kids of alternatives(node['Kids'])) {
        if (!Array.isArray(kids)) throw new Uncounted();
        // Every reference followed is work, counted ones too: a node defined 27,500 times over 10,900 kids had looped 300 million times.
        references += kids.length;
        if (references > LIMITS.references) throw new Uncounted();
        let leaves = 0;
        for (const kid of kids) {
          if (!(kid instanceof Ref)) throw new Uncounted();
          leaves += leavesUnder(kid.number);
        }
        most = Math.max(most, leaves);
      }
      if (declared) for (const count of alternatives(node['Count'])) if (typeof count === 'number' && Number.isFinite(count)) most = Math.max(most, Math.floor(count));
    }
    onPath.delete(number);
    counted.set(number, most);
    return most;
  };
  let pages = 0;
  for (const number of catalogs) {
    const list = definitionsOf(number);
    // A root named and nowhere found may be one whose header this does not read.
    if (!list) throw new Uncounted();
    for (const definition of list) {
      // A catalog that cannot be read, or whose tree is not a reference, may be the one readers use: no count.
      const catalog = objects.value(definition);
      const top = isDictionary(catalog) ? catalog['Pages'] : undefined;
      if (!(top instanceof Ref)) throw new Uncounted();
      pages = Math.max(pages, leavesUnder(top.number));
    }
  }
  return pages;
}
