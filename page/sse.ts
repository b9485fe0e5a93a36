/** One Server-Sent Event: its name (`message` when the stream gave none) and its data lines joined. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The event-stream format (WHATWG HTML, "Parsing an event stream") fed in chunks as they
 * arrive: a chunk may end anywhere, inside a line or between the CR and LF of a line end.
 * Lines end at LF, CRLF or a lone CR; a byte order mark at the start is skipped. Comment
 * lines (`:`) and fields other than `event` and `data` (`id`, `retry`) are skipped; an event
 * without data is not dispatched, nor one the stream ends before its blank line.
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
  private name = '';
  private data: string[] = [];

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
      this.line(line, events);
    }
    if (start < chunk.length) this.pieces.push(chunk.slice(start));
    this.afterCr = chunk.endsWith('\r');
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.name || 'message', data: this.data.join('\n') });
      this.name = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.name = value;
    else if (field === 'data') this.data.push(value);
  }
}
