/**
 * Streamed chat content as shown to the caller: an inline `<think>…</think>` block at its start
 * (and the whitespace after it) is held back, everything else is passed on as it comes. Each
 * character is looked at a bounded number of times, however many pieces the text comes in.
 */
export class InlineThinkingFilter {
  private received = '';
  private shown = '';
  private state: 'undecided' | 'thinking' | 'after' | 'open' = 'undecided';
  /** Where the search for `</think>` (state thinking) or for the answer (state after) resumes. */
  private from = 0;

  constructor(private readonly onDelta: (text: string) => void) {}

  add(piece: string): void {
    if (piece === '') return;
    this.received += piece;
    if (this.state === 'open') return this.show(piece);
    if (this.state === 'undecided') {
      const start = this.received.length - this.received.trimStart().length;
      const head = this.received.slice(start, start + 7);
      if (head === '' || (head.length < 7 && '<think>'.startsWith(head))) return;
      if (head !== '<think>') {
        this.state = 'open';
        return this.show(this.received);
      }
      this.state = 'thinking';
      this.from = start + 7;
    }
    if (this.state === 'thinking') {
      const close = this.received.indexOf('</think>', Math.max(this.from - 7, 0));
      if (close < 0) {
        this.from = this.received.length;
        return;
      }
      this.state = 'after';
      this.from = close + 8;
    }
    const rest = this.received.slice(this.from).trimStart();
    if (rest === '') {
      this.from = this.received.length;
      return;
    }
    this.state = 'open';
    this.show(rest);
  }

  private show(text: string): void {
    this.shown += text;
    this.onDelta(text);
  }

  /** Everything received, thinking included. */
  get all(): string {
    return this.received;
  }

  /** What was shown: the answer without the thinking. */
  get output(): string {
    return this.shown;
  }
}
