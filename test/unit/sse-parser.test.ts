import { describe, expect, it } from 'vitest';
import { StreamLimitError, SseParser, type SseEvent } from '../../shared/providers/sse.js';

/** Every event of `text` fed in pieces cut at each of `cuts` (byte offsets). */
function parse(text: string | Buffer, cuts: number[] = [], parser = new SseParser()): SseEvent[] {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const events: SseEvent[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...parser.push(bytes.subarray(at, cut)));
    at = cut;
  }
  return [...events, ...parser.end()];
}

describe('Class: SseParser', () => {
  it('reads named events, joins multi-line data with \\n, skips comments and unknown fields', () => {
    const text = ': keep-alive\nevent: message_start\ndata: {"a":\ndata:1}\nid: 7\nretry: 10\n\ndata: [DONE]\n\n';
    expect(parse(text)).toEqual([
      { event: 'message_start', data: '{"a":\n1}' },
      { event: 'message', data: '[DONE]' },
    ]);
  });

  it('takes LF, CR and CRLF line ends, a CRLF split between chunks included', () => {
    const text = 'data: a\r\n\r\ndata: b\r\rdata: c\n\n';
    const whole = parse(text);
    expect(whole.map((e) => e.data)).toEqual(['a', 'b', 'c']);
    for (let cut = 1; cut < text.length; cut++) expect(parse(text, [cut])).toEqual(whole);
  });

  it('decodes a UTF-8 character cut between chunks', () => {
    const bytes = Buffer.from('data: héllo ✓\n\n');
    for (let cut = 1; cut < bytes.length; cut++) expect(parse(bytes, [cut])).toEqual([{ event: 'message', data: 'héllo ✓' }]);
  });

  it('drops one byte order mark at the start of the stream, cut anywhere (it had made the first line an unknown field, its event lost), and no other', () => {
    const bytes = Buffer.from('\uFEFFdata: Hello\n\ndata: \uFEFFworld\n\n');
    for (let cut = 0; cut < bytes.length; cut++)
      expect(
        parse(
          bytes,
          [1, cut].sort((a, b) => a - b),
        ),
      ).toEqual([
        { event: 'message', data: 'Hello' },
        { event: 'message', data: '\uFEFFworld' },
      ]);
    // A second one at the start is the first line's own: an unknown field.
    expect(parse(Buffer.from('\uFEFF\uFEFFdata: x\n\ndata: y\n\n'))).toEqual([{ event: 'message', data: 'y' }]);
  });

  it('drops an event without a blank line after it at the end, and events without data', () => {
    expect(parse('event: ping\n\ndata: cut')).toEqual([]);
  });

  it('fails a line longer than the cap, even one that never ends', () => {
    const parser = new SseParser({ maxLineBytes: 1024, maxEventBytes: 1 << 20, maxTotalBytes: 1 << 20 });
    expect(() => {
      for (let i = 0; i < 100; i++) parser.push(Buffer.alloc(100, 'x'));
    }).toThrow(StreamLimitError);
  });

  it('counts a long line in UTF-8 bytes across its chunks: up to the cap it is read, one byte more fails', () => {
    // 'é' is 2 bytes: a line of 'data: ' and 509 of them is 1,024 bytes, in chunks of 10 characters.
    const line = `data: ${'é'.repeat(509)}`;
    const feed = (parser: SseParser, text: string) => {
      const events: SseEvent[] = [];
      for (let i = 0; i < text.length; i += 10) events.push(...parser.push(Buffer.from(text.slice(i, i + 10))));
      return events;
    };
    expect(Buffer.byteLength(line)).toBe(1024);
    expect(feed(new SseParser({ maxLineBytes: 1024, maxEventBytes: 1 << 20, maxTotalBytes: 1 << 20 }), `${line}\n\n`)).toEqual([{ event: 'message', data: 'é'.repeat(509) }]);
    expect(() => feed(new SseParser({ maxLineBytes: 1024, maxEventBytes: 1 << 20, maxTotalBytes: 1 << 20 }), `${line}x\n\n`)).toThrow(StreamLimitError);
    expect(() => feed(new SseParser({ maxLineBytes: 1024, maxEventBytes: 1 << 20, maxTotalBytes: 1 << 20 }), `${line}x`)).toThrow(StreamLimitError);
  });

  it('fails an event whose data lines pass the event cap, each line short and no blank line coming', () => {
    const parser = new SseParser({ maxLineBytes: 1024, maxEventBytes: 4096, maxTotalBytes: 1 << 20 });
    expect(() => {
      for (let i = 0; i < 2000; i++) parser.push(Buffer.from('data:xy\n'));
    }).toThrow('An event of the stream exceeded 4096 bytes');
  });

  it("counts an event's data in UTF-8 bytes, the newlines joining its lines included: up to the cap it is read, one byte more fails", () => {
    // Three lines of 100 'é' (2 bytes each) joined by two newlines: 602 bytes of data.
    const text = `${`data: ${'é'.repeat(100)}\n`.repeat(3)}\n`;
    const limits = { maxLineBytes: 1024, maxEventBytes: 1 << 20, maxTotalBytes: 1 << 20 };
    expect(parse(text, [], new SseParser({ ...limits, maxEventBytes: 602 }))).toEqual([{ event: 'message', data: Array(3).fill('é'.repeat(100)).join('\n') }]);
    expect(() => parse(text, [], new SseParser({ ...limits, maxEventBytes: 601 }))).toThrow(StreamLimitError);
  });

  it('counts each event apart: many events under the event cap pass, however much they add up to', () => {
    const parser = new SseParser({ maxLineBytes: 1024, maxEventBytes: 100, maxTotalBytes: 1 << 20 });
    expect(parse(`data: ${'x'.repeat(90)}\n\n`.repeat(100), [], parser)).toHaveLength(100);
  });

  it('joins the many data lines of one event in order, across chunks', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => String(i));
    const text = `${lines.map((line) => `data:${line}\n`).join('')}\n`;
    expect(parse(text, [7, 1000, 20_000])).toEqual([{ event: 'message', data: lines.join('\n') }]);
  });

  it('fails a stream longer than the total cap, made of short lines', () => {
    const parser = new SseParser({ maxLineBytes: 1024, maxEventBytes: 1 << 20, maxTotalBytes: 10_000 });
    expect(() => {
      for (let i = 0; i < 2000; i++) parser.push(Buffer.from('data: x\n\n'));
    }).toThrow(StreamLimitError);
  });
});
