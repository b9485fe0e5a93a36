/**
 * The answer text a stream has shown so far, fed the stream's text pieces: `onDelta`
 * receives each newly visible piece. `visible` maps the whole text received so far to the
 * part that may be shown (e.g. without an inline `<think>` block); it must only ever grow.
 */
export class VisibleText {
  private received = '';
  private shown = 0;

  constructor(
    private readonly onDelta: (text: string) => void,
    private readonly visible: (received: string) => string = (text) => text,
  ) {}

  add(piece: string): void {
    if (piece === '') return;
    this.received += piece;
    const text = this.visible(this.received);
    if (text.length > this.shown) {
      this.onDelta(text.slice(this.shown));
      this.shown = text.length;
    }
  }

  /** Everything received, thinking included. */
  get all(): string {
    return this.received;
  }

  /** What was shown. */
  get output(): string {
    return this.visible(this.received).slice(0, this.shown);
  }
}
