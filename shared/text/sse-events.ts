/** One server-sent event: its `event:` name ('message' when none was sent) and its data lines joined by '\n'. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The fields of an event stream (WHATWG HTML, "Interpreting an event stream"), for parsers
 * that split lines their own way: the gateway's reader of vendor streams (bytes, limits)
 * and the comparison page's (text, in the browser). `data:` lines of one event are joined
 * with '\n'; lines starting with ':' are comments; a blank line dispatches the event (one
 * without data is dropped); `id:`, `retry:` and unknown fields are ignored.
 */
export class SseEventBuilder {
  private event = '';
  private data: string[] = [];

  /** Takes one line, without its line end; a blank line adds the event it ends to `events`. */
  line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push({ event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}
