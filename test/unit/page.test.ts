import { describe, expect, it } from 'vitest';
import { credits, grouped, usd } from '../../page/figures.js';
import { curlCommand, requestBody, type PageForm } from '../../page/request.js';
import { SseParser } from '../../page/sse.js';

describe('Class: SseParser', () => {
  describe('Method: push', () => {
    it('returns each event once its blank line arrives, however the chunks split it', () => {
      const stream = 'event: delta\ndata: {"index":0,"text":"Hel"}\n\n: keep-alive\n\nevent: done\r\ndata: {"a":\r\ndata: 1}\r\n\r\n';
      for (const size of [1, 2, 7, stream.length]) {
        const parser = new SseParser();
        const events = [];
        for (let at = 0; at < stream.length; at += size) events.push(...parser.push(stream.slice(at, at + size)));
        expect(events).toEqual([
          { event: 'delta', data: '{"index":0,"text":"Hel"}' },
          { event: 'done', data: '{"a":\n1}' },
        ]);
      }
    });

    it('names an unnamed event "message", skips other fields and does not dispatch an event without data', () => {
      const parser = new SseParser();
      expect(parser.push('id: 7\nretry: 10\n\nevent: ranking\n\ndata:x\n\n')).toEqual([{ event: 'message', data: 'x' }]);
    });

    it('ends lines at LF, CRLF and a lone CR, a CRLF split between two chunks ending one line', () => {
      const parser = new SseParser();
      expect(parser.push('event: a\r')).toEqual([]);
      // The LF completes the CRLF of `event: a`: it is no blank line, so nothing is dispatched yet.
      expect(parser.push('\ndata: 1\r')).toEqual([]);
      expect(parser.push('\r')).toEqual([{ event: 'a', data: '1' }]);
      expect(parser.push('\ndata: 2\rdata: 3\r\rdata: 4\n\n')).toEqual([
        { event: 'message', data: '2\n3' },
        { event: 'message', data: '4' },
      ]);
    });

    it('keeps a line split inside its field name, its colon or its value whole', () => {
      const stream = 'event: delta\ndata: {"text":"a:b"}\n\n';
      for (let at = 1; at < stream.length; at++) {
        const parser = new SseParser();
        expect([...parser.push(stream.slice(0, at)), ...parser.push(stream.slice(at))]).toEqual([{ event: 'delta', data: '{"text":"a:b"}' }]);
      }
    });

    it('skips a byte order mark at the start of the stream only', () => {
      const parser = new SseParser();
      expect(parser.push('\uFEFFdata: x\n\n')).toEqual([{ event: 'message', data: 'x' }]);
      expect(parser.push('data: \uFEFFy\n\n')).toEqual([{ event: 'message', data: '\uFEFFy' }]);
    });

    it('parses a line of 8 MiB fed in 64 KiB chunks exactly', () => {
      // Pieces of different text, so that a piece lost, repeated or out of order changes the result.
      const value = Array.from({ length: 8 * 1024 }, (_, i) => `${i}`.padStart(8, '-').repeat(128)).join('');
      expect(value.length).toBe(8 * 1024 * 1024);
      const stream = `event: big\ndata: ${value}\n\n`;
      const parser = new SseParser();
      const events = [];
      for (let at = 0; at < stream.length; at += 64 * 1024) events.push(...parser.push(stream.slice(at, at + 64 * 1024)));
      expect(events.map((event) => [event.event, event.data.length])).toEqual([['big', value.length]]);
      expect(events[0]?.data === value).toBe(true);
    });
  });
});

const FORM: PageForm = {
  prompt: "It's",
  models: ['a', 'b'],
  judges: [],
  weights: { accuracy: '', speed: '', cost: '' },
  settings: { temperature: '', maxTokens: '', topP: '' },
};

describe('Function: requestBody', () => {
  it('sends only what is set, numbers as numbers', () => {
    expect(requestBody(FORM)).toEqual({ prompt: "It's", models: ['a', 'b'] });
    expect(requestBody({ ...FORM, judges: ['j'], weights: { accuracy: '0.5', speed: ' ', cost: '0' }, settings: { temperature: '0.2', maxTokens: '64', topP: '' } })).toEqual({
      prompt: "It's",
      models: ['a', 'b'],
      judges: ['j'],
      judge_weights: { accuracy: 0.5, cost: 0 },
      generation_settings: { temperature: 0.2, maxTokens: 64 },
    });
  });

  it('sends weights only with judges, and a value that is not a number as typed, for the API to name', () => {
    expect(requestBody({ ...FORM, weights: { accuracy: '1', speed: '', cost: '' } })).not.toHaveProperty('judge_weights');
    expect(requestBody({ ...FORM, settings: { temperature: 'hot', maxTokens: '', topP: '' } }).generation_settings).toEqual({ temperature: 'hot' });
  });
});

describe('Function: curlCommand', () => {
  it('quotes the body for the shell and leaves the key to $GATEWAY_KEY', () => {
    const command = curlCommand('http://127.0.0.1:3000/api/v1/prompt', requestBody(FORM));
    expect(command).toBe(
      [
        "curl -sN 'http://127.0.0.1:3000/api/v1/prompt'",
        '  -H "Authorization: Bearer $GATEWAY_KEY"',
        "  -H 'Content-Type: application/json'",
        "  -H 'Accept: text/event-stream'",
        `  --data-binary '{"prompt":"It'\\''s","models":["a","b"]}'`,
      ].join(' \\\n'),
    );
  });
});

describe('Function: usd', () => {
  it('writes a cost to three significant digits, whole dollars grouped from $1,000, never 0 for a cost that is not 0', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [0.0000004, '0.000000400'],
      [0.00000123456, '0.00000123'],
      [0.0123456, '0.0123'],
      [12.345, '12.3'],
      [123.4, '123'],
      // Rounded before its decimals are counted: it was 0.001000, four digits.
      [0.00099996, '0.00100'],
      [9.999, '10.0'],
      [999.6, '1,000'],
      // Whole dollars, grouped: it was 1235.
      [1234.5, '1,235'],
      [29_876.4, '29,876'],
      [1e-19, '1.00e-19'],
    ];
    expect(cases.map(([value]) => usd(value))).toEqual(cases.map(([, shown]) => shown));
  });
});

describe('Function: grouped', () => {
  it("groups a count's thousands, and says `missing` for what is no number", () => {
    expect([grouped(1_234_567), grouped(12), grouped(0), grouped(undefined), grouped(Number.NaN, '–'), grouped('12')]).toEqual(['1,234,567', '12', '0', '?', '–', '?']);
  });
});

describe('Function: credits', () => {
  it('writes credits to the micro-credit with their thousands grouped, never 0 for an amount that is not 0', () => {
    const cases: [unknown, string][] = [
      [0, '0'],
      [0.51205, '0.51205'],
      [0.000001, '0.000001'],
      [1000, '1,000'],
      // Grouped: it was 12345.5.
      [12_345.5, '12,345.5'],
      [1_234_567.123456, '1,234,567.123456'],
      [-2.5, '-2.5'],
      // Below the micro-credit (no gateway of ours sends it): not 0, and not JSON's bare 1e-7.
      [1e-7, '1.00e-7'],
      [-1e-7, '-1.00e-7'],
      [undefined, '?'],
      ['12', '?'],
      [Number.POSITIVE_INFINITY, '?'],
    ];
    expect(cases.map(([value]) => credits(value))).toEqual(cases.map(([, shown]) => shown));
  });
});
