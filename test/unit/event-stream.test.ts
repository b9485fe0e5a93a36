import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acceptsEventStream, EventStream, KEEP_ALIVE, MAX_QUEUED_CHARS, pipeAnswer, wholeAnswer, WRITE_SLICE_CHARS } from '../../shared/http/event-stream.js';

/** A connection whose reader takes nothing until `release`: what a slow caller looks like to the gateway. */
function slowConnection() {
  const writes: string[] = [];
  let release: (() => void) | undefined;
  const out = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString());
      release = () => callback();
    },
  });
  return { out, writes, release: () => release?.() };
}

/** With fake timers: `out` still open a moment before a minute of its reader taking nothing, and ended (not finished) at the minute. */
async function expectCutAfterAMinute(out: Writable): Promise<void> {
  await vi.advanceTimersByTimeAsync(59_999);
  expect(out.destroyed).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect([out.destroyed, out.writableFinished]).toEqual([true, false]);
}

describe('Class: EventStream', () => {
  afterEach(() => vi.useRealTimers());

  it.each([
    ['text/event-stream', true],
    ['application/json, text/event-stream', true],
    ['text/event-stream;q=0.9', true],
    ['TEXT/EVENT-STREAM', true],
    ['application/json', false],
    ['text/event-streams', false],
    [undefined, false],
    // Quality: 0 is "not acceptable"; JSON preferred over events is answered JSON.
    ['text/event-stream;q=0', false],
    ['text/event-stream; q=0.0, application/json', false],
    ['application/json;q=1, text/event-stream;q=0.1', false],
    ['application/json;q=0.5, text/event-stream', true],
    ['text/event-stream;charset=utf-8;q=1', true],
    ['*/*', false],
    ['text/event-stream;q=0.1, */*', false],
    ['text/event-stream, */*;q=0.8', true],
  ])('Accept: %s asks for events: %s', (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });

  it('writes each event as one event line and one data line, and ends after the last', async () => {
    const stream = new EventStream(0);
    stream.send('delta', JSON.stringify({ index: 0, modelId: 'm', text: 'a\nb' }));
    stream.send('done', '{}');
    stream.end();
    stream.send('late', '{}');
    let text = '';
    for await (const chunk of stream) text += chunk;
    expect(text).toBe('event: delta\ndata: {"index":0,"modelId":"m","text":"a\\nb"}\n\nevent: done\ndata: {}\n\n');
  });

  it('queues a keep-alive comment only after keepAliveMs without an event', async () => {
    vi.useFakeTimers();
    const stream = new EventStream(15_000);
    const reading = (async () => {
      let text = '';
      for await (const chunk of stream) text += chunk;
      return text;
    })();
    await vi.advanceTimersByTimeAsync(14_999);
    stream.send('delta', '{}');
    await vi.advanceTimersByTimeAsync(14_999);
    await vi.advanceTimersByTimeAsync(1);
    stream.end();
    expect(await reading).toBe(`event: delta\ndata: {}\n\n${KEEP_ALIVE}`);
  });
});

describe('Function: pipeAnswer', () => {
  it('does not write again until a slow reader took the last write, then hands over what queued as one chunk', async () => {
    const stream = new EventStream(0);
    const { out, writes, release } = slowConnection();
    const piping = pipeAnswer(stream, out);
    stream.send('delta', JSON.stringify({ text: 'x'.repeat(64) }));
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 100; i++) stream.send('delta', JSON.stringify({ text: String(i) }));
    await new Promise((resolve) => setImmediate(resolve));
    // The first write is still with the reader: the hundred events wait in the stream, not in `out`.
    expect(writes).toHaveLength(1);
    expect(out.writableLength).toBeLessThanOrEqual(200);
    stream.end();
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(2);
    expect(writes[1]!.split('event: delta').length - 1).toBe(100);
    release();
    await piping;
  });

  it('cancels the stream when the connection closes, and returns once the producer has ended it', async () => {
    const stream = new EventStream(0);
    const { out } = slowConnection();
    const piping = pipeAnswer(stream, out);
    out.destroy();
    await new Promise((resolve) => stream.signal.addEventListener('abort', resolve));
    let returned = false;
    void piping.then(() => (returned = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(returned).toBe(false);
    stream.send('done', '{}');
    stream.end();
    await piping;
  });

  it('takes a reader that leaves more deltas unread than MAX_QUEUED_CHARS as gone: the stream is cancelled, its queue let go, the connection ended', async () => {
    const stream = new EventStream(0);
    const { out, writes } = slowConnection();
    const piping = pipeAnswer(stream, out);
    stream.send('delta', JSON.stringify({ text: 'first' }));
    await new Promise((resolve) => setImmediate(resolve));
    // One character a delta: about 60 of framing each.
    const delta = JSON.stringify({ index: 0, modelId: 'fam_k-8b', text: 'a' });
    let sent = 0;
    while (!stream.signal.aborted) {
      stream.send('delta', delta);
      sent++;
    }
    expect(sent * `event: delta\ndata: ${delta}\n\n`.length).toBeGreaterThan(MAX_QUEUED_CHARS);
    expect(String(stream.signal.reason)).toMatch(/more than 16777216 characters of the stream unread/);
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.destroyed).toBe(true);
    // What the producer sends after goes nowhere; it still ends the stream, and the pipe returns.
    stream.send('done', '{}');
    stream.end();
    await piping;
    expect(writes).toHaveLength(1);
  });

  it('counts only deltas: a result or done event repeats the answer whole, as the JSON path holds it', async () => {
    const stream = new EventStream(0);
    stream.send('done', JSON.stringify({ text: 'x'.repeat(MAX_QUEUED_CHARS + 10) }));
    stream.end();
    expect(stream.signal.aborted).toBe(false);
    let length = 0;
    for await (const chunk of stream) length += chunk.length;
    expect(length).toBeGreaterThan(MAX_QUEUED_CHARS);
  });

  it('writes a large event in pieces, one after the other, and never cuts a reader that takes a piece in every stalled-reader span', async () => {
    vi.useFakeTimers();
    const stream = new EventStream(0);
    const { out, writes, release } = slowConnection();
    const piping = pipeAnswer(stream, out, 60_000);
    // A pair of surrogates (one emoji) across the first piece's end: a piece is encoded alone.
    const text = `${'x'.repeat(WRITE_SLICE_CHARS - 20)}\u{1F600}${'y'.repeat(3 * WRITE_SLICE_CHARS)}`;
    stream.send('done', JSON.stringify({ text }));
    stream.end();
    for (let piece = 0; piece < 4; piece++) {
      await vi.advanceTimersByTimeAsync(50_000);
      expect(out.destroyed).toBe(false);
      release();
    }
    await vi.advanceTimersByTimeAsync(0);
    await piping;
    expect(out.destroyed).toBe(false);
    expect(writes.length).toBeGreaterThanOrEqual(4);
    for (const write of writes) expect(write.length).toBeLessThanOrEqual(WRITE_SLICE_CHARS + 1);
    expect(writes.join('')).toBe(`event: done\ndata: ${JSON.stringify({ text })}\n\n`);
    vi.useRealTimers();
  });

  it('writes a whole answer (a JSON body) in pieces too, and ends the connection of a reader that takes none for the stalled-reader time', async () => {
    vi.useFakeTimers();
    const body = JSON.stringify({ output: 'z'.repeat(3 * WRITE_SLICE_CHARS) });
    const read = slowConnection();
    const whole = pipeAnswer(wholeAnswer(body), read.out, 60_000);
    for (let piece = 0; piece < 4; piece++) {
      await vi.advanceTimersByTimeAsync(50_000);
      read.release();
    }
    await vi.advanceTimersByTimeAsync(0);
    await whole;
    // Ended whole, not cut.
    expect([read.out.writableFinished, read.writes.join('')]).toEqual([true, body]);
    // A reader that takes nothing: the local host had held its connection, and the answer, for as long as it liked.
    const unread = slowConnection();
    const cut = pipeAnswer(wholeAnswer(body), unread.out, 60_000);
    await expectCutAfterAMinute(unread.out);
    await cut;
    vi.useRealTimers();
  });

  it("counts a pipelined answer's stalled-reader time from when it has its connection, not while the answer before it is written", async () => {
    vi.useFakeTimers();
    const body = 'z'.repeat(3 * WRITE_SLICE_CHARS);
    const queued = slowConnection();
    // A server response waiting behind another on its connection: no socket yet, its writes buffered.
    Object.assign(queued.out, { socket: null });
    const piping = pipeAnswer(wholeAnswer(body), queued.out, 60_000);
    // It had been cut here: a minute of the answer before it being written to a slow reader.
    await vi.advanceTimersByTimeAsync(120_000);
    expect(queued.out.destroyed).toBe(false);
    Object.assign(queued.out, { socket: {} });
    queued.out.emit('socket', {});
    await expectCutAfterAMinute(queued.out);
    await piping;
    vi.useRealTimers();
  });

  it('ends the connection of a reader that takes nothing for the stalled-reader time, and cancels the stream', async () => {
    vi.useFakeTimers();
    const stream = new EventStream(0);
    const { out } = slowConnection();
    const piping = pipeAnswer(stream, out, 60_000);
    stream.send('delta', JSON.stringify({ text: 'x'.repeat(64) }));
    await vi.advanceTimersByTimeAsync(59_999);
    expect(out.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(out.destroyed).toBe(true);
    expect(stream.signal.aborted).toBe(true);
    stream.end();
    await piping;
    vi.useRealTimers();
  });
});
