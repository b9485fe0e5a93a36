import { SseEventBuilder, type SseEvent } from '../shared/text/sse-events.js';

export type { SseEvent };

/**
 * The event-stream format (WHATWG HTML, "Parsing an event stream") fed in chunks as they
 * arrive: a chunk may end anywhere, inside a line or between the CR and LF of a line end.
 * Lines end at LF, CRLF or a lone CR; a byte order mark at the start is skipped; each line
 * goes to SseEventBuilder (shared with the gateway's reader of vendor streams), which reads
 * its fields. An event the stream ends before its blank line is not dispatched.
 *
 * Linear in the stream's length: only the new chunk is searched for line ends, and a line
 * that spans chunks is kept as its pieces and joined once, when it ends.
 */
export class SseParser {
  /** The line not ended yet, as the pieces that arrived. */
  private pieces: string[] = [];
  /** The last chunk ended in CR: a LF first in the next one ends no other line. */
  private afterCr = false;
  private started = false;
  private readonly events = new SseEventBuilder();

  /** The events that `chunk` completes, in order. */
  push(chunk: string): SseEvent[] {
    if (chunk === '') return [];
    let start = 0;
    if (!this.started) {
      this.started = true;
      if (chunk.startsWith('\uFEFF')) start = 1;
    }
    if (this.afterCr && chunk[start] === '\n') start++;
    const events: SseEvent[] = [];
    const lineEnd = /\r\n?|\n/g;
    lineEnd.lastIndex = start;
    for (let match = lineEnd.exec(chunk); match; match = lineEnd.exec(chunk)) {
      this.pieces.push(chunk.slice(start, match.index));
      start = lineEnd.lastIndex;
      const line = this.pieces.join('');
      this.pieces = [];
      this.events.line(line, events);
    }
    if (start < chunk.length) this.pieces.push(chunk.slice(start));
    this.afterCr = chunk.endsWith('\r');
    return events;
  }
}
