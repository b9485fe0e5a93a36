import type { Writable } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { jsonText } from '../text/json-text.js';

/** The headers of a 200 event stream; `x-accel-buffering: no` asks a proxy in between (nginx) not to hold events back. */
export const EVENT_STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store, no-transform', 'x-accel-buffering': 'no' };

/** The comment that keeps an idle stream open (proxies and load balancers close connections idle for long). */
export const KEEP_ALIVE = ': keep-alive\n\n';

/**
 * Whether the request asks for Server-Sent Events: `Accept` lists `text/event-stream`, alone
 * or among other types, with a quality above 0 (RFC 9110 12.5.1: `q=0` is "not acceptable")
 * and no lower than JSON's, where that is listed too (`application/json`, or a range that
 * holds it: every application type, or every type).
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let stream = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';');
    const mediaType = type.trim().toLowerCase();
    if (mediaType === 'text/event-stream') stream = Math.max(stream, quality(parameters));
    else if (mediaType === 'application/json' || mediaType === 'application/*' || mediaType === '*/*') json = Math.max(json, quality(parameters));
  }
  return stream > 0 && stream >= json;
}

/** A media range's `q` (1 when it has none or one that is not a number), within 0 to 1. */
function quality(parameters: readonly string[]): number {
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'q') continue;
    const q = Number(value.trim());
    return Number.isFinite(q) && value.trim() !== '' ? Math.min(Math.max(q, 0), 1) : 1;
  }
  return 1;
}

/**
 * An answer whose body is written as it happens: the api handler returns it (status and
 * headers as in any answer, `body` empty), and whoever sends answers (the local host, the
 * Lambda entry) writes the `eventStream`'s chunks as they come, then its end.
 */
export type ApiResult = APIGatewayProxyResult & {
  eventStream?: EventStream;
  /**
   * What the handler still writes once its answer is sent (settle, ledger, prompt log):
   * whoever sends the answer awaits it afterwards, so that the writes end within the
   * invocation. It never rejects. An error answer has none.
   */
  finished?: Promise<void>;
};

/**
 * Characters of `delta` events a stream may hold for a reader that has not taken them: 16
 * Mi, what the whole output budget of a request is in bytes. Each delta adds about 60
 * characters of framing to its text, so a vendor streaming a character a delta to a caller
 * that reads nothing queued 137 MB a stream before (a reviewer held 23 such streams: a 3.2
 * GB process). Past it the reader is taken as gone (pipeAnswer ends its connection). The
 * other events are not counted: `result` and `done` repeat the answer whole, as the JSON
 * path holds it.
 */
export const MAX_QUEUED_CHARS = 16 * 1024 * 1024;

/**
 * How long a write may wait for a reader that takes nothing of it before its connection is
 * ended as gone: a caller that reads nothing for a minute holds a connection and its queue
 * for as long as it likes otherwise (the request itself ends at its deadline). A reader that
 * takes a WRITE_SLICE_CHARS piece in each such span is reading, however slowly: never cut.
 */
export const STALLED_READER_MS = 60_000;

/**
 * The most characters written to the connection at once. A write completes only when all of
 * it has gone (a 16 MiB `done` event takes minutes to a slow reader): written in pieces, one
 * after the other, each piece that goes shows the reader is still reading.
 */
export const WRITE_SLICE_CHARS = 64 * 1024;

/**
 * Server-Sent Events, one `event:` line and one `data:` line of JSON each. The producer
 * (`send`) never waits for the reader: what a slow reader has not yet taken is queued and
 * handed over in one chunk at its next read, up to MAX_QUEUED_CHARS: past that the reader
 * is taken as gone (the stream is cancelled and its queue let go). While the reader waits
 * and nothing was sent for `keepAliveMs`, a comment is queued.
 */
export class EventStream implements AsyncIterable<string> {
  private queue: string[] = [];
  /** Characters of the `delta` events in `queue`. */
  private queuedChars = 0;
  private done = false;
  private wake: (() => void) | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly cancelled = new AbortController();
  private resolveEnded!: () => void;
  /** Resolves once the producer has ended the stream (its last event sent), read or not. */
  readonly ended = new Promise<void>((resolve) => (this.resolveEnded = resolve));

  constructor(private readonly keepAliveMs: number) {}

  /** Aborts once the reader is gone (the caller disconnected): the producer stops its work. */
  get signal(): AbortSignal {
    return this.cancelled.signal;
  }

  /** One event; `json` is the event's data, already one line of JSON (JSON.stringify never writes a raw line break). */
  send(event: string, json: string): void {
    this.push(`event: ${event}\ndata: ${json}\n\n`, event === 'delta');
  }

  /** One event of `value` as JSON, written as every answer's JSON is (jsonText: no half of a surrogate pair). */
  sendJson(event: string, value: unknown): void {
    this.send(event, jsonText(value));
  }

  /** The last chunk has been sent; the reader ends once it has taken it. */
  end(): void {
    this.done = true;
    this.stopKeepAlive();
    this.resolveEnded();
    this.wake?.();
  }

  /** Called by the reader when its caller has gone: the producer hears it on `signal` and still ends the stream. */
  cancel(reason: unknown): void {
    this.cancelled.abort(reason);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    this.armKeepAlive();
    try {
      for (;;) {
        if (this.queue.length > 0) {
          const chunk = this.queue.join('');
          this.queue = [];
          this.queuedChars = 0;
          yield chunk;
        } else if (this.done) {
          return;
        } else {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
        }
      }
    } finally {
      this.stopKeepAlive();
    }
  }

  private push(chunk: string, counted = false): void {
    if (this.done || this.cancelled.signal.aborted) return;
    if (counted) this.queuedChars += chunk.length;
    if (this.queuedChars > MAX_QUEUED_CHARS) {
      this.queue = [];
      this.queuedChars = 0;
      this.cancel(new Error(`The caller left more than ${MAX_QUEUED_CHARS} characters of the stream unread`));
      this.wake?.();
      return;
    }
    this.queue.push(chunk);
    this.armKeepAlive();
    this.wake?.();
  }

  private armKeepAlive(): void {
    if (this.done || this.keepAliveMs <= 0) return;
    if (this.keepAlive) this.keepAlive.refresh();
    else
      this.keepAlive = setTimeout(() => {
        this.keepAlive = undefined;
        this.push(KEEP_ALIVE);
      }, this.keepAliveMs);
  }

  private stopKeepAlive(): void {
    clearTimeout(this.keepAlive);
    this.keepAlive = undefined;
  }
}

/** What pipeAnswer writes: an event stream, or a whole answer's body (wholeAnswer). */
export type AnswerText = AsyncIterable<string> & Pick<EventStream, 'signal' | 'cancel'>;

/** A whole answer's body as pipeAnswer writes it: one chunk, nothing to cancel. */
export function wholeAnswer(body: string): AnswerText {
  return {
    signal: new AbortController().signal,
    cancel: () => undefined,
    async *[Symbol.asyncIterator]() {
      yield body;
    },
  };
}

/**
 * Writes an event stream (or a whole answer, wholeAnswer) to `out` as it comes, then ends
 * `out` (the local host's HTTP response, Lambda's response stream). A write `out` cannot take yet is awaited (`drain`)
 * before the next, so that what a slow reader has not taken waits in the stream's queue
 * (bounded as said there), not in socket buffers. Should `out` close or fail first (the
 * caller went), the stream is cancelled (the model calls stop) and read to its end
 * unwritten: resolves once its producer has ended it. A chunk is written in pieces of at
 * most WRITE_SLICE_CHARS, the next once the last has gone. A reader that takes no piece for
 * STALLED_READER_MS, or leaves more than MAX_QUEUED_CHARS unread, is gone too: `out` is
 * ended (destroyed) for it.
 */
export async function pipeAnswer(stream: AnswerText, out: Writable, stalledReaderMs = STALLED_READER_MS): Promise<void> {
  let writable: (() => void) | undefined;
  let stalled: NodeJS.Timeout | undefined;
  const drained = () => {
    clearTimeout(stalled);
    writable?.();
  };
  const gone = () => {
    if (!out.writableFinished) stream.cancel(new Error('The caller disconnected'));
    drained();
  };
  const leave = () => out.destroy();
  // The stalled reader's time runs from when the answer has a connection: a pipelined answer
  // waits for the one before it to be written (its own writes buffered), and had been cut for it.
  const arm = () => {
    stalled = setTimeout(leave, stalledReaderMs);
  };
  out.on('drain', drained);
  out.once('close', gone);
  // An error event on its own would crash the process; it means the caller is gone.
  out.on('error', gone);
  stream.signal.addEventListener('abort', leave);
  if (out.destroyed) gone();
  try {
    for await (const chunk of stream) {
      for (let at = 0; at < chunk.length && !out.destroyed && !stream.signal.aborted; ) {
        const end = sliceEnd(chunk, at);
        // One listener each for the whole stream, however often a slow reader makes it wait.
        if (!out.write(at === 0 && end === chunk.length ? chunk : chunk.slice(at, end)) && !out.destroyed) {
          if ((out as { socket?: unknown }).socket === null) out.once('socket', arm);
          else arm();
          await new Promise<void>((resolve) => (writable = resolve));
          out.off('socket', arm);
        }
        writable = undefined;
        at = end;
      }
    }
    if (!out.destroyed) out.end();
  } finally {
    clearTimeout(stalled);
    stream.signal.removeEventListener('abort', leave);
    out.off('drain', drained);
    out.off('close', gone);
  }
}

/** Where the piece of `chunk` written from `at` ends: WRITE_SLICE_CHARS on, never between the two halves of a surrogate pair (each piece is encoded alone). */
function sliceEnd(chunk: string, at: number): number {
  const end = at + WRITE_SLICE_CHARS;
  if (end >= chunk.length) return chunk.length;
  const code = chunk.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end + 1 : end;
}
