import { deflateSync } from 'node:zlib';

/** How a test PDF is written. */
export interface PdfShape {
  /** Its page tree's leaves, written as page objects (3 onwards). */
  pages: number;
  /** The root's /Count, where it says other than `pages`. */
  count?: string;
  /** The page objects compressed in one FlateDecode object stream, with this stream dictionary's extra entries. */
  objectStream?: string;
  /** Each page object's dictionary (`<< /Type /Page /Parent 2 0 R >>` by default). */
  page?: string;
  /** Bytes after the page objects, before the trailer (a stream of text, padding). */
  body?: string;
}

/**
 * A small PDF as writers make them: a catalog (1), a page tree root (2) whose Kids are the
 * pages, the pages, a cross-reference table (its offsets not kept exact: readers and the
 * gateway find objects by their headers) and a trailer naming the catalog.
 */
export function pdfOf({ pages, count = String(pages), objectStream, page = '<< /Type /Page /Parent 2 0 R >>', body = '' }: PdfShape): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(' ');
  const head = `%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Count ${count} /Kids [${kids}] >>\nendobj\n`;
  const tail = (objects: number) => `${body}xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Root 1 0 R /Size ${objects} >>\nstartxref\n0\n%%EOF\n`;
  if (objectStream === undefined) {
    const objects = Array.from({ length: pages }, (_, i) => `${3 + i} 0 obj\n${page}\nendobj\n`).join('');
    return Buffer.from(head + objects + tail(3 + pages), 'latin1');
  }
  let offset = 0;
  const pairs: string[] = [];
  for (let i = 0; i < pages; i++) {
    pairs.push(`${3 + i} ${offset}`);
    offset += page.length + 1;
  }
  const header = `${pairs.join(' ')}\n`;
  const data = deflateSync(Buffer.from(header + `${page}\n`.repeat(pages), 'latin1'));
  const stream = `${3 + pages} 0 obj\n<< /Type /ObjStm /N ${pages} /First ${header.length} /Filter /FlateDecode /Length ${data.length}${objectStream} >>\nstream\n`;
  return Buffer.concat([Buffer.from(head + stream, 'latin1'), data, Buffer.from(`\nendstream\nendobj\n${tail(4 + pages)}`, 'latin1')]);
}
