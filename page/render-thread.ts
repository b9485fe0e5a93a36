import type { RenderAnswer, Rendered } from './markdown-rules.js';

/** One text to render: read when its render starts (the latest then), and what to do with the outcome. */
export interface RenderJob {
  text: () => string;
  /** The outcome, the text rendered, and when its render started (performance.now()). */
  done: (rendered: Rendered, text: string, startedAt: number) => void;
}

/**
 * Markdown rendered in a worker (the Markdown thread, markdown-thread.ts), one text at a time,
 * each stopped after `limitMs`: the worker is then ended, the render's outcome is `tooSlow`,
 * and a new worker (started on demand) takes the next. At most one job a key waits (a column:
 * asking again replaces what it waits with, in its place in the line).
 */
export class MarkdownThread {
  private worker: Worker | undefined;
  private readonly waiting = new Map<object, RenderJob>();
  private running: { key: object; job: RenderJob; id: number; text: string; startedAt: number; timer: ReturnType<typeof setTimeout> | undefined } | undefined;
  private nextId = 0;

  constructor(
    private readonly scriptUrl: () => string,
    private readonly limitMs: number,
  ) {}

  render(key: object, job: RenderJob): void {
    this.waiting.set(key, job);
    this.next();
  }

  /** `key`'s render is not wanted any more: taken out of the line, or stopped (with its worker) if it runs. No outcome. */
  forget(key: object): void {
    this.waiting.delete(key);
    if (this.running?.key !== key) return;
    this.stop();
    this.next();
  }

  /** Every render forgotten and the worker ended (a thread not needed any more). */
  close(): void {
    this.waiting.clear();
    this.stop();
  }

  private next(): void {
    if (this.running) return;
    const [first] = this.waiting;
    if (!first) return;
    const [key, job] = first;
    this.waiting.delete(key);
    const text = job.text();
    const id = this.nextId++;
    const timer = Number.isFinite(this.limitMs) ? setTimeout(() => this.finish(id, { tooSlow: true }, true), this.limitMs) : undefined;
    this.running = { key, job, id, text, startedAt: performance.now(), timer };
    try {
      this.start().postMessage({ id, text });
    } catch (error) {
      // No worker could be made (a browser that refuses it, say): this render fails, and the next tries again.
      this.finish(id, { failed: `its thread did not start: ${error instanceof Error ? error.message : String(error)}` }, true);
    }
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.scriptUrl());
    worker.onmessage = ({ data }: MessageEvent<RenderAnswer>) => {
      const { id, ...rendered } = data;
      this.finish(id, rendered as Rendered, false);
    };
    // Its script did not load, or an error escaped a render: the render fails, the worker ends, and a new one takes the next.
    // (Not from a worker ended already: what the one after it runs is not its.)
    worker.onerror = (event) => {
      event.preventDefault();
      if (this.worker === worker && this.running) this.finish(this.running.id, { failed: event.message || 'its thread did not start' }, true);
    };
    this.worker = worker;
    return worker;
  }

  /** Render `id` ended with `rendered` (and its worker with it, when `endWorker`): its job is told, and the next starts. */
  private finish(id: number, rendered: Rendered, endWorker: boolean): void {
    const running = this.running;
    if (running?.id !== id) return;
    if (endWorker) this.stop();
    else {
      clearTimeout(running.timer);
      this.running = undefined;
    }
    try {
      running.job.done(rendered, running.text, running.startedAt);
    } finally {
      this.next();
    }
  }

  /** The running render (if any) and the worker ended. */
  private stop(): void {
    clearTimeout(this.running?.timer);
    this.running = undefined;
    this.worker?.terminate();
    this.worker = undefined;
  }
}
