import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_INFLATED_PDF_BYTES, PdfCountBudget, pdfPageCounts } from '../../shared/pricing/pdf-pages.js';
import { pdfOf } from '../support/pdfs.js';

const latin1 = (text: string) => Buffer.from(text, 'latin1');
/** The pages a PDF is held by. */
const pdfPages = (pdf: Buffer) => pdfPageCounts(pdf)?.held;

describe('Function: pdfPageCounts, held (the pages a PDF is held by: its page tree, as readers walk it)', () => {
  it('counts the leaves of the page tree its trailer names, written out or in an object stream', () => {
    expect(pdfPages(pdfOf({ pages: 1 }))).toBe(1);
    expect(pdfPages(pdfOf({ pages: 100 }))).toBe(100);
    expect(pdfPages(pdfOf({ pages: 37, objectStream: '' }))).toBe(37);
  });

  it('walks a tree of several levels, and counts a page its tree names twice twice, as readers do', () => {
    const nested = latin1(
      '%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[3 0 R 4 0 R]/Count 3>> endobj\n' +
        '3 0 obj <</Type/Pages/Kids[5 0 R 5 0 R]/Parent 2 0 R>> endobj\n4 0 obj <</Type/Page/Parent 2 0 R>> endobj\n5 0 obj <</Type/Page/Parent 3 0 R>> endobj\n' +
        'trailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF',
    );
    expect(pdfPages(nested)).toBe(3);
  });

  it('reads objects as readers do: NUL and comments as white space, escaped names, a string with % in it, references for the Count and the Kids', () => {
    expect(pdfPages(pdfOf({ pages: 60, page: '<< /Type\0/Page /Parent 2 0 R >>' }))).toBe(60);
    expect(pdfPages(pdfOf({ pages: 60, page: '<< /Type %t\n/P#61ge /Title (100% (nested) \\) done) /Parent 2 0 R >>' }))).toBe(60);
    // Leaves without a /Type (readers take them), and a root whose Count is signed, or a reference.
    expect(pdfPages(pdfOf({ pages: 60, page: '<< /Parent 2 0 R >>', count: '+1' }))).toBe(60);
    const indirect = latin1(
      '%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids 3 0 R/Count 4 0 R>> endobj\n3 0 obj [5 0 R 5 0 R] endobj\n4 0 obj 7 endobj\n' +
        '5 0 obj <</Type/Page>> endobj\ntrailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF',
    );
    expect(pdfPages(indirect)).toBe(7);
  });

  it('counts a node typed /Page as a page whatever Kids it has, as readers that go by its type do (200 such with empty Kids had counted none)', () => {
    // One page as usual, and 200 with an empty Kids; the root's Count says 1.
    const typed = Array.from({ length: 200 }, (_, i) => `${4 + i} 0 obj <</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Kids[]>> endobj\n`).join('');
    const kids = Array.from({ length: 201 }, (_, i) => `${3 + i} 0 R`).join(' ');
    const crafted = latin1(
      `%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[${kids}]/Count 1>> endobj\n3 0 obj <</Type/Page/Parent 2 0 R>> endobj\n${typed}` +
        'trailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF',
    );
    expect(pdfPageCounts(crafted)).toEqual({ held: 201, read: 201 });
  });

  it('counts only the pages the tree names: page objects a writer left behind (a page removed) are not pages', () => {
    const removed = pdfOf({ pages: 5, body: Array.from({ length: 295 }, (_, i) => `${900 + i} 0 obj\n<< /Type /Page /Parent 2 0 R >>\nendobj\n`).join('') });
    expect(pdfPages(removed)).toBe(5);
  });

  it('follows the last revision: an incremental update that adds pages, its trailer naming the catalog anew', () => {
    const first = pdfOf({ pages: 1 }).toString('latin1');
    const update = `2 0 obj\n<< /Type /Pages /Count 3 /Kids [3 0 R 10 0 R 11 0 R] >>\nendobj\n10 0 obj\n<< /Type /Page >>\nendobj\n11 0 obj\n<< /Type /Page >>\nendobj\ntrailer\n<< /Root 1 0 R /Prev 0 >>\nstartxref\n0\n%%EOF\n`;
    expect(pdfPages(latin1(first + update))).toBe(3);
  });

  it('is not shortened by a definition or a trailer planted to be read instead: every definition and every catalog counted, the most taken', () => {
    const sixty = pdfOf({ pages: 60 }).toString('latin1');
    // A later definition of the tree's root naming one page (readers follow the cross-reference table to the first).
    expect(pdfPages(latin1(`${sixty}2 0 obj\n<< /Type /Pages /Count 1 /Kids [3 0 R] >>\nendobj\n`))).toBe(60);
    // A later trailer whose comment holds a root of one page.
    const fake = '900 0 obj\n<< /Type /Catalog /Pages 901 0 R >>\nendobj\n901 0 obj\n<< /Type /Pages /Kids [3 0 R] >>\nendobj\n';
    expect(pdfPages(latin1(`${sixty}${fake}trailer\n<< /Size 9 % /Root 900 0 R\n>>\nstartxref\n0\n%%EOF\n`))).toBe(60);
  });

  it('reads the headers readers read (a comment inside one, a zero-padded number, a long generation), an object stream typed past its first KiB, and every definition of a referenced Kids and Count', () => {
    const sixty = pdfOf({ pages: 60 }).toString('latin1');
    // Each hides the real tree root (object 2, 60 kids) from a reader of plain headers, a one-kid definition of it written after in the clear.
    const decoy = '2 0 obj\n<< /Type /Pages /Kids [3 0 R] >>\nendobj\n';
    for (const header of ['2 0 %note\nobj', '00000000002 0 obj', '2 000000 obj']) {
      expect(pdfPages(latin1(`${sixty.replace('2 0 obj', header)}${decoy}`)), header).toBe(60);
    }
    const padded = pdfOf({ pages: 60, objectStream: ` /Pad (${'x'.repeat(1_100)})` })
      .toString('latin1')
      .replace('<< /Type /ObjStm', `<< /Pad (${'x'.repeat(1_100)}) /Type /ObjStm`);
    expect(pdfPages(latin1(padded))).toBe(60);
    const indirect = latin1(
      '%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids 7 0 R/Count 8 0 R>> endobj\n7 0 obj [5 0 R 5 0 R 5 0 R] endobj\n8 0 obj 3 endobj\n' +
        '5 0 obj <</Type/Page>> endobj\n7 0 obj [5 0 R] endobj\n8 0 obj 1 endobj\ntrailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF',
    );
    expect(pdfPages(indirect)).toBe(3);
  });

  it('trusts no count where a catalog cannot be read, or names its tree directly: it may be the one readers use', () => {
    const sixty = pdfOf({ pages: 60 }).toString('latin1');
    // A string in the catalog that reads as a header cuts it short; a one-page decoy catalog beside it.
    const decoy = '900 0 obj\n<< /Type /Catalog /Pages 901 0 R >>\nendobj\n901 0 obj\n<< /Type /Pages /Kids [3 0 R] >>\nendobj\n';
    expect(pdfPages(latin1(`${sixty.replace('<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Catalog /Lang (9 0 obj) /Pages 2 0 R >>')}${decoy}`))).toBeUndefined();
    expect(pdfPages(latin1(`${sixty.replace('<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Catalog /Pages << /Type /Pages /Kids [3 0 R] >> >>')}${decoy}`))).toBeUndefined();
  });

  it('trusts no count where an object keyword stands alone without a header it reads (24 digits, a long comment), or the root named is nowhere: a reader may take it, a decoy beside it', () => {
    const sixty = pdfOf({ pages: 60 }).toString('latin1');
    const decoy = '900 0 obj\n<< /Type /Catalog /Pages 901 0 R >>\nendobj\n901 0 obj\n<< /Type /Pages /Kids [3 0 R] >>\nendobj\n';
    for (const header of ['000000000000000000000001 0 obj', `1 0 %${'x'.repeat(80)}\nobj`]) {
      expect(pdfPages(latin1(`${sixty.replace('1 0 obj', header)}${decoy}`)), header).toBeUndefined();
    }
    expect(pdfPages(latin1(`${sixty.replace('/Root 1 0 R', '/Root 77 0 R')}${decoy}`))).toBeUndefined();
  });

  it('takes the root a cross-reference stream names whatever its /Type says, and trusts no count after `2 0obj`', () => {
    const sixty = pdfOf({ pages: 60 }).toString('latin1');
    const decoy = '900 0 obj\n<< /Type /Catalog /Pages 901 0 R >>\nendobj\n901 0 obj\n<< /Type /Pages /Kids [3 0 R] >>\nendobj\n';
    // The catalog untyped, named only by an untyped cross-reference stream's /Root.
    const untyped = sixty.replace('<< /Type /Catalog /Pages 2 0 R >>', '<< /Pages 2 0 R >>').replace(/trailer\n<<[^>]*>>/, '');
    const stream = '950 0 obj\n<< /Kind /X /Size 951 /W [1 4 2] /Root 1 0 R /Length 0 >>\nstream\n\nendstream\nendobj\n';
    expect(pdfPages(latin1(`${untyped}${decoy}${stream}`))).toBe(60);
    expect(pdfPages(latin1(`${sixty.replace('\n2 0 obj', '\n2 0obj')}${decoy}`))).toBeUndefined();
  });

  it('unpacks an object stream whatever says so (a /Type by reference, or its N and First), and trusts none whose offsets fall back', () => {
    const byReference = pdfOf({ pages: 20, objectStream: '' }).toString('latin1').replace('/Type /ObjStm', '/Type 99 0 R');
    expect(pdfPages(latin1(`${byReference.replace('xref', '99 0 obj\n/ObjStm\nendobj\nxref')}`))).toBe(20);
    const overlapping = pdfOf({ pages: 3, objectStream: '' }).toString('latin1');
    const data = deflateSync(latin1('3 0 4 19 5 0\n<< /Type /Page >>\n'));
    const start = overlapping.indexOf('stream\n') + 7;
    const end = overlapping.indexOf('\nendstream');
    const rebuilt = Buffer.concat([latin1(overlapping.slice(0, start).replace(/\/First \d+/, '/First 12')), data, latin1(overlapping.slice(end))]);
    expect(pdfPages(rebuilt)).toBeUndefined();
  });

  it("spends a request's counting from one budget: two PDFs of 20,000 keywords each count alone, and under a budget of one PDF's limits only the first does", () => {
    const keywords = pdfOf({ pages: 1, body: ' endstream'.repeat(20_000) });
    expect(pdfPages(keywords)).toBe(1);
    const shared = new PdfCountBudget(1);
    expect(pdfPageCounts(keywords, new PdfCountBudget(1, shared))).toEqual({ held: 1, read: 1 });
    expect(pdfPageCounts(keywords, new PdfCountBudget(1, shared))).toBeUndefined();
  });

  it('follows 100,000 kid references at most, over every definition of every node: a node defined 400 times over one Kids array of 300 is not counted', () => {
    const pdf = (definitions: number) =>
      latin1(
        `%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n${'2 0 obj <</Type/Pages/Kids 7 0 R>>\n'.repeat(definitions)}7 0 obj [${'3 0 R '.repeat(300)}] endobj\n` +
          '3 0 obj <</Type/Page>> endobj\ntrailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF',
      );
    expect(pdfPages(pdf(300))).toBe(300);
    expect(pdfPages(pdf(400))).toBeUndefined();
  });

  it('reads the words obj, stream and trailer in a text as words, not as the syntax they name', () => {
    const text = 'BT (Exporting a Wavefront obj model: the trailer, a stream of obj files; it wrote 3 obj files, 50% of each obj) Tj ET';
    expect(
      pdfPages(pdfOf({ pages: 3, body: `9 0 obj\n<< /Length ${text.length} >>\nstream\n${text}\nendstream\nendobj\n10 0 obj\n<< /Title (Movie trailer obj) >>\nendobj\n` })),
    ).toBe(3);
  });

  it('counts a linearized file (its root named by the first-page trailer, the last one naming none) and an object whose header follows a string', () => {
    const pages = Array.from({ length: 3 }, (_, i) => `${3 + i} 0 obj\n<< /Type /Page >>\nendobj\n`).join('');
    const linearized = `%PDF-1.7\n9 0 obj\n<< /Linearized 1 >>\nendobj\nxref\n9 1\n0000000000 00000 n \ntrailer\n<< /Root 1 0 R /Prev 500 >>\nstartxref\n0\n%%EOF\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] >>\nendobj\n${pages}xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 10 >>\nstartxref\n12\n%%EOF\n`;
    expect(pdfPages(latin1(linearized))).toBe(3);
    // Ghostscript's Info string runs into the next header: `/Creator(\u00fe\u00ff2 0 obj`.
    expect(pdfPages(latin1(linearized.replace('\n2 0 obj', '\n8 0 obj\n<< /Creator (\u00fe\u00ff) >>\u00ff2 0 obj')))).toBe(3);
  });

  it('reads at most 512 KiB of values: 20,000 objects of unterminated strings are not counted', () => {
    let text = '%PDF-1.7\n#';
    for (let i = 1; i <= 20_000; i++) text += ` ${i} 0 obj (#`;
    expect(pdfPages(latin1(`${text.padEnd(3_700_000, ' ')}trailer << /Root 1 0 R >>\nstartxref\n0\n%%EOF`))).toBeUndefined();
  });

  it('holds by the root Count where it declares more than the tree has; a reader walks the tree', () => {
    expect(pdfPages(pdfOf({ pages: 2, count: '250' }))).toBe(250);
    expect(pdfPageCounts(pdfOf({ pages: 2, count: '250' }))).toEqual({ held: 250, read: 2 });
    expect(pdfPageCounts(pdfOf({ pages: 7 }))).toEqual({ held: 7, read: 7 });
    // An incremental save that removed pages: held at the longer revision, read as its last (what readers show and vendors bill).
    const removed = `${pdfOf({ pages: 60 }).toString('latin1')}2 0 obj\n<< /Type /Pages /Count 5 /Kids [3 0 R 4 0 R 5 0 R 6 0 R 7 0 R] >>\nendobj\ntrailer\n<< /Root 1 0 R /Prev 0 >>\nstartxref\n0\n%%EOF\n`;
    expect(pdfPageCounts(latin1(removed))).toEqual({ held: 60, read: 5 });
  });

  it('trusts no count (undefined: held at the whole context) where the tree cannot be walked', () => {
    // No trailer; a kid that is nowhere; a cycle; pages in an object stream with a predictor, or of another filter.
    expect(pdfPages(latin1('%PDF-1.4\n1 0 obj\n<< /Type /Page >>\nendobj\n'))).toBeUndefined();
    expect(pdfPages(latin1(pdfOf({ pages: 3 }).toString('latin1').replace('4 0 obj', '40 0 obj')))).toBeUndefined();
    const cycle = latin1(
      '%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[3 0 R]>> endobj\n3 0 obj <</Type/Pages/Kids[2 0 R]>> endobj\ntrailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF',
    );
    expect(pdfPages(cycle)).toBeUndefined();
    expect(pdfPages(pdfOf({ pages: 5, objectStream: ' /DecodeParms << /Predictor 12 /Columns 4 >>' }))).toBeUndefined();
    expect(pdfPages(latin1(pdfOf({ pages: 5, objectStream: '' }).toString('latin1').replace('/FlateDecode', '/LZWDecode')))).toBeUndefined();
  });

  it(`inflates ${MAX_INFLATED_PDF_BYTES / 1024 / 1024} MiB of object streams at most, and walks 10,000 nodes at most: past them, no count`, () => {
    const padded = pdfOf({ pages: 1, objectStream: '' }).toString('latin1');
    const huge = deflateSync(Buffer.concat([latin1('3 0\n<< /Type /Page >>\n'), Buffer.alloc(MAX_INFLATED_PDF_BYTES, 0x20)]));
    const start = padded.indexOf('stream\n') + 7;
    const end = padded.indexOf('\nendstream');
    expect(pdfPages(Buffer.concat([latin1(padded.slice(0, start)), huge, latin1(padded.slice(end))]))).toBeUndefined();
    // A page named 10,000 times: one node visited, counted 10,000 times.
    const repeated = latin1(
      `%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[${'3 0 R '.repeat(10_000)}]>> endobj\n3 0 obj <</Type/Page>> endobj\ntrailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF`,
    );
    expect(pdfPages(repeated)).toBe(10_000);
    // Two levels: the root, `branches` nodes, 100 pages under each.
    const tree = (branches: number) => {
      let text = `%PDF-1.7\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj <</Type/Pages/Kids[${Array.from({ length: branches }, (_, b) => `${10 + b} 0 R`).join(' ')}]>> endobj\n`;
      for (let b = 0; b < branches; b++) {
        const first = 1_000 + 100 * b;
        text += `${10 + b} 0 obj <</Type/Pages/Kids[${Array.from({ length: 100 }, (_, p) => `${first + p} 0 R`).join(' ')}]>> endobj\n`;
        for (let p = 0; p < 100; p++) text += `${first + p} 0 obj <</Type/Page>> endobj\n`;
      }
      return latin1(`${text}trailer <</Root 1 0 R>>\nstartxref\n0\n%%EOF`);
    };
    expect(pdfPages(tree(98))).toBe(9_800);
    expect(pdfPages(tree(100))).toBeUndefined();
    expect(pdfPages(pdfOf({ pages: 5_000 }))).toBe(5_000);
  });
});
