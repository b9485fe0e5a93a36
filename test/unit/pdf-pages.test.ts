import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_INFLATED_PDF_BYTES, pdfPages } from '../../shared/pricing/pdf-pages.js';

/** A PDF of `pages` page objects written out, its page tree declaring `count`. */
function plainPdf(pages: number, count = pages): Buffer {
  let text = `%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Count ${count} /Kids [] >>\nendobj\n`;
  for (let i = 0; i < pages; i++) text += `${3 + i} 0 obj\n<< /Type /Page /Parent 2 0 R >>\nendobj\n`;
  return Buffer.from(`${text}%%EOF\n`, 'latin1');
}

/** A PDF 1.5 whose page objects are compressed in an object stream (`data` its raw content, deflated unless given). */
function objectStreamPdf(pages: number, options: { count?: boolean; data?: Buffer } = {}): Buffer {
  const objects = '<</Type/Page/Parent 2 0 R>>\n'.repeat(pages);
  const data = options.data ?? deflateSync(Buffer.from(objects, 'latin1'));
  const tree = options.count === false ? '<< /Type /Pages >>' : `<< /Type /Pages /Count ${pages} >>`;
  const head = `%PDF-1.5\n2 0 obj\n${tree}\nendobj\n5 0 obj\n<< /Type /ObjStm /N ${pages} /First 0 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), data, Buffer.from('\nendstream\nendobj\n%%EOF\n', 'latin1')]);
}

describe('Function: pdfPages (the pages a PDF reserves by)', () => {
  it('counts the page objects, and not the page tree nodes (/Pages)', () => {
    expect(pdfPages(plainPdf(1))).toBe(1);
    expect(pdfPages(plainPdf(100))).toBe(100);
  });

  it('counts the page objects compressed in object streams, with or without a page count in the clear', () => {
    expect(pdfPages(objectStreamPdf(37))).toBe(37);
    expect(pdfPages(objectStreamPdf(37, { count: false }))).toBe(37);
  });

  it('takes the larger of the page objects found and the page count declared', () => {
    expect(pdfPages(plainPdf(3, 250))).toBe(250);
    expect(pdfPages(plainPdf(40, 2))).toBe(40);
  });

  it('reads names through their #xx escapes (/P#61ge is /Page), and /Type/Page written without a space', () => {
    expect(pdfPages(Buffer.from('%PDF-1.4\n<< /Type /P#61ge >>\n<< /T#79pe/Page>>\n<< /Type /Pages /C#6Funt 1 >>\n', 'latin1'))).toBe(2);
  });

  it('trusts no count where an object stream does not inflate or a PDF shows no page: undefined', () => {
    expect(pdfPages(objectStreamPdf(5, { data: Buffer.from('not deflate data', 'latin1') }))).toBeUndefined();
    expect(pdfPages(Buffer.from('%PDF-1.4\n1 0 obj\n<<>>\nendobj\n', 'latin1'))).toBeUndefined();
  });

  it(`inflates ${MAX_INFLATED_PDF_BYTES / 1024 / 1024} MiB of object streams at most: past it the count is not trusted`, () => {
    const padded = deflateSync(Buffer.concat([Buffer.from('<</Type/Page>>\n'), Buffer.alloc(MAX_INFLATED_PDF_BYTES, 0x20)]));
    expect(pdfPages(objectStreamPdf(1, { data: padded }))).toBeUndefined();
    const fits = deflateSync(Buffer.concat([Buffer.from('<</Type/Page>>\n'), Buffer.alloc(MAX_INFLATED_PDF_BYTES - 1024, 0x20)]));
    expect(pdfPages(objectStreamPdf(1, { data: fits }))).toBe(1);
  });

  it('reads each stream dictionary once, and at most 20,000 of them: a PDF of 500,000 stream keywords is not counted', () => {
    const keywords = Buffer.from(`%PDF-1.5\n<</Type/Page>>${'stream\n'.repeat(500_000)}`, 'latin1');
    expect(pdfPages(keywords)).toBeUndefined();
    const fewer = Buffer.from(`%PDF-1.5\n<</Type/Page>>${'stream\nx endstream\n'.repeat(10_000)}`, 'latin1');
    expect(pdfPages(fewer)).toBe(1);
  });
});
