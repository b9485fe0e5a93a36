/** One Server-Sent Event: its name (`message` when the stream gave none) and its data lines joined. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The event-stream format (WHATWG HTML, "Parsing an event stream") fed in chunks as they
 * arrive: a chunk may end in the middle of a line or of an event. Comment lines (`:`) and
 * fields other than `event` and `data` are skipped; an event without data is not dispatched.
 */
export class SseParser {
  private partial = '';
  private name = '';
  private data: string[] = [];

  /** The events that `chunk` completes, in order. */
  push(chunk: string): SseEvent[] {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    const events: SseEvent[] = [];
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (this.data.length > 0) events.push({ event: this.name || 'message', data: this.data.join('\n') });
        this.name = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.name = value;
      else if (field === 'data') this.data.push(value);
    }
    return events;
  }
}
