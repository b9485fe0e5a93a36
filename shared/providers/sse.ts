import { StringDecoder } from 'node:string_decoder';
import { SseEventBuilder, type SseEvent } from '../text/sse-events.js';

export type { SseEvent };

export interface SseLimits {
  /** Longest line (bytes of UTF-8 text, before its line end); a longer one fails the stream. */
  maxLineBytes: number;
  /**
   * Most bytes of one event's data (its data lines joined), counted as they arrive: an event
   * of many short lines that never ends fails here, long before the whole stream's cap.
   */
  maxEventBytes: number;
  /** Most bytes of the whole stream. */
  maxTotalBytes: number;
  /**
   * Most lines of the whole stream, blank and comment lines included (none by default): what
   * parsing a stream costs goes by its lines as much as by its bytes, and 32 MiB of
   * one-character events or bare line ends took 0.8 s of the thread each (streamLineCap).
   */
  maxLines?: number;
}

/**
 * The lines a streamed call may take: 8 a token of the most output its vendor may bill
 * (every vendor streams a delta in 2 or 3 lines, a token or more a delta), and 10,000 more
 * for the events around the answer and the keep-alive comments of a long one.
 */
export function streamLineCap(outputTokens: number): number {
  return 8 * outputTokens + 10_000;
}

/**
 * Far above any vendor's event (a whole Responses `response.completed` of a long answer, sent
 * as one line) and far below what would hurt a Lambda; an event may hold as much as a line.
 */
export const DEFAULT_SSE_LIMITS: SseLimits = { maxLineBytes: 4 * 1024 * 1024, maxEventBytes: 4 * 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024 };

/** The stream broke a limit of SseLimits (or of EventStreamLimits: bedrock-converse/stream-body.ts). */
export class StreamLimitError extends Error {
  override name = 'StreamLimitError';
  /** The message as made: the AWS SDK appends a hint to the message of an error thrown while it deserializes. */
  readonly reason: string;

  constructor(message: string) {
    super(message);
    this.reason = message;
  }
}

/**
 * An incremental parser of `text/event-stream` (the WHATWG grammar): lines end in LF, CR or
 * CRLF (a chunk may end between the CR and the LF, or anywhere in a UTF-8 sequence); each
 * line goes to SseEventBuilder, which reads its fields. Each byte is looked at a bounded
 * number of times (a line is kept until its end arrives and is never rescanned, its UTF-8
 * bytes counted piece by piece), so a hostile stream costs linear time; the limits bound memory.
 */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  /** UTF-8 bytes of `pending`, counted piece by piece as it grows (never measured whole again). */
  private pendingBytes = 0;
  private skipLf = false;
  /** Whether the stream's first character has been read: a byte order mark there is no text (the grammar drops one). */
  private started = false;
  private total = 0;
  private lines = 0;
  private readonly events = new SseEventBuilder();

  constructor(private readonly limits: SseLimits = DEFAULT_SSE_LIMITS) {}

  /** Feeds a chunk of the body; returns the events it completed, in order. Throws StreamLimitError past a limit. */
  push(chunk: Buffer): SseEvent[] {
    this.total += chunk.length;
    if (this.total > this.limits.maxTotalBytes) throw new StreamLimitError(`The stream exceeded ${this.limits.maxTotalBytes} bytes`);
    return this.feed(this.decoder.write(chunk));
  }

  /** The end of the body: a last line without its line end is a line; an event not closed by a blank line is dropped, as the grammar says. */
  end(): SseEvent[] {
    const events = this.feed(this.decoder.end());
    if (this.pending !== '') this.events.line(this.pending, events, this.pendingBytes);
    this.pending = '';
    this.pendingBytes = 0;
    return events;
  }

  private feed(decoded: string): SseEvent[] {
    const events: SseEvent[] = [];
    let text = decoded;
    if (!this.started && text !== '') {
      this.started = true;
      // Left on, it had made the first line an unknown field, and its event (a first delta) was lost.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let start = 0;
    if (this.skipLf && text.startsWith('\n')) start = 1;
    this.skipLf = false;
    let i = start;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const piece = text.slice(start, i);
      const line = this.pending === '' ? piece : this.pending + piece;
      const bytes = this.pendingBytes + Buffer.byteLength(piece);
      this.pending = '';
      this.pendingBytes = 0;
      this.checkLine(bytes);
      if (++this.lines > (this.limits.maxLines ?? Infinity)) throw new StreamLimitError(`The stream exceeded ${this.limits.maxLines} lines`);
      this.events.line(line, events, bytes);
      if (this.events.dataBytes > this.limits.maxEventBytes) throw new StreamLimitError(`An event of the stream exceeded ${this.limits.maxEventBytes} bytes`);
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLf = true;
        }
      }
      start = i + 1;
    }
    if (start < text.length) {
      const piece = text.slice(start);
      this.pending += piece;
      this.pendingBytes += Buffer.byteLength(piece);
      this.checkLine(this.pendingBytes);
    }
    return events;
  }

  /** A line of `bytes` UTF-8 bytes, ended or still pending (each piece of a line is counted once: a long line's every chunk would rescan it). */
  private checkLine(bytes: number): void {
    if (bytes > this.limits.maxLineBytes) throw new StreamLimitError(`A line of the stream exceeded ${this.limits.maxLineBytes} bytes`);
  }
}
