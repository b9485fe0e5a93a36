/** One server-sent event: its `event:` name ('message' when none was sent) and its data lines joined by '\n'. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Data lines kept apart before they are joined into the event's data. A line kept as its own
 * string costs tens of bytes besides its text: an event of millions of `data:xy` lines, kept
 * line by line, held hundreds of megabytes; joined in batches, it holds about its own length.
 */
const JOIN_EVERY = 256;

/**
 * The fields of an event stream (WHATWG HTML, "Interpreting an event stream"), for parsers
 * that split lines their own way: the gateway's reader of vendor streams (bytes, limits)
 * and the comparison page's (text, in the browser). `data:` lines of one event are joined
 * with '\n'; lines starting with ':' are comments; a blank line dispatches the event (one
 * without data is dropped); `id:`, `retry:` and unknown fields are ignored.
 */
export class SseEventBuilder {
  private event = '';
  /** The event's data lines joined so far (undefined: no data line yet), and the lines since, not yet joined in. */
  private joined: string | undefined;
  private lines: string[] = [];
  private bytes = 0;

  /**
   * Length of the event's data so far, its joining newlines included: in UTF-8 bytes when
   * every line was given with its byte length, else in UTF-16 code units.
   */
  get dataBytes(): number {
    return this.bytes;
  }

  /**
   * Takes one line, without its line end, and its length in UTF-8 bytes if the caller
   * counted it; a blank line adds the event it ends to `events`.
   */
  line(line: string, events: SseEvent[], bytes = line.length): void {
    if (line === '') {
      this.joinLines();
      if (this.joined !== undefined) events.push({ event: this.event || 'message', data: this.joined });
      this.event = '';
      this.joined = undefined;
      this.bytes = 0;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      // 'data:' and its space are ASCII, a byte each; a newline joins every line to the one before.
      const first = this.joined === undefined && this.lines.length === 0;
      this.bytes += bytes - (line.length - value.length) + (first ? 0 : 1);
      this.lines.push(value);
      if (this.lines.length === JOIN_EVERY) this.joinLines();
    } else if (field === 'event') {
      this.event = value;
    }
  }

  /** Joins the lines waiting onto the event's data. */
  private joinLines(): void {
    if (this.lines.length === 0) return;
    const batch = this.lines.join('\n');
    this.joined = this.joined === undefined ? batch : `${this.joined}\n${batch}`;
    this.lines = [];
  }
}
