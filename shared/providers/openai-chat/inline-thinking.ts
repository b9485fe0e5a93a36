/**
 * Streamed chat content as shown to the caller: an inline `<think>…</think>` block at its start
 * (and the whitespace after it) is held back, everything else is passed on as it comes. Each
 * piece is looked at once, with at most the 7 characters before it: never the whole text
 * received, which a hostile vendor can grow to megabytes in pieces of a few characters (the
 * text as one string, searched or trimmed on each piece, held the event loop for seconds).
 */
export class InlineThinkingFilter {
  private readonly pieces: string[] = [];
  private whole: string | undefined = '';
  private readonly shownPieces: string[] = [];
  private state: 'undecided' | 'thinking' | 'after' | 'open' = 'undecided';
  /**
   * Undecided: the text after the leading whitespace so far (a prefix of `<think>`, under 7
   * characters). Thinking: the last 7 characters received, where a `</think>` may have begun.
   */
  private pending = '';

  constructor(private readonly onDelta: (text: string) => void) {}

  add(piece: string): void {
    if (piece === '') return;
    this.pieces.push(piece);
    this.whole = undefined;
    if (this.state === 'open') return this.show(piece);
    let text = piece;
    if (this.state === 'undecided') {
      const head = this.pending + (this.pending === '' ? text.trimStart() : text);
      if (head === '' || (head.length < 7 && '<think>'.startsWith(head))) {
        this.pending = head;
        return;
      }
      this.pending = '';
      if (!head.startsWith('<think>')) {
        // No think block: everything so far is the answer, its leading whitespace included.
        this.state = 'open';
        return this.show(this.all);
      }
      this.state = 'thinking';
      text = head.slice(7);
    }
    if (this.state === 'thinking') {
      const window = this.pending + text;
      const close = window.indexOf('</think>');
      if (close < 0) {
        this.pending = window.slice(-7);
        return;
      }
      this.pending = '';
      this.state = 'after';
      text = window.slice(close + 8);
    }
    const rest = text.trimStart();
    if (rest === '') return;
    this.state = 'open';
    this.show(rest);
  }

  /**
   * The stream has ended: what was held back while it could still open a think block (a
   * prefix of `<think>`, or whitespace alone) is the answer after all, and goes out. A think
   * block still open stays held: all of it was thinking.
   */
  end(): void {
    if (this.state !== 'undecided') return;
    this.state = 'open';
    this.pending = '';
    if (this.all !== '') this.show(this.all);
  }

  private show(text: string): void {
    this.shownPieces.push(text);
    this.onDelta(text);
  }

  /** Everything received, thinking included. */
  get all(): string {
    this.whole ??= this.pieces.join('');
    return this.whole;
  }

  /** What was shown: the answer without the thinking. */
  get output(): string {
    return this.shownPieces.join('');
  }
}
