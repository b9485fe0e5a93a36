import type { Rendered, ThreadMessage } from './markdown-rules.js';

/** One text to render: read when its render starts (the latest then), and what to do with the outcome. */
export interface RenderJob {
  text: () => string;
  /** The outcome, the text rendered, and when its render started (performance.now()). */
  done: (rendered: Rendered, text: string, startedAt: number) => void;
}

/**
 * How long a new worker may take to load its script (fetched and compiled) before the render
 * it was started for fails: a render's own time limit counts from its thread's load, not from
 * a download (a slow link took 2.5 s for it, and every column was stopped as too slow).
 */
export const LOAD_LIMIT_MS = 30_000;

/**
 * Markdown rendered in a worker (the Markdown thread, markdown-thread.ts), one text at a time,
 * each stopped after `limitMs` (from its thread's load): the worker is then ended, the render's
 * outcome is `tooSlow`, and a new worker (started on demand) takes the next. At most one job a
 * key waits (a column: asking again replaces what it waits with, in its place in the line).
 */
export class MarkdownThread {
  private thread: { worker: Worker; loaded: boolean } | undefined;
  private readonly waiting = new Map<object, RenderJob>();
  private running: { key: object; job: RenderJob; id: number; text: string; startedAt: number; timer: ReturnType<typeof setTimeout> | undefined } | undefined;
  private nextId = 0;
  private closed = false;
  private nextQueued = false;

  constructor(
    private readonly scriptUrl: () => string,
    private readonly limitMs: number,
  ) {}

  render(key: object, job: RenderJob): void {
    if (this.closed) return;
    this.waiting.set(key, job);
    this.next();
  }

  /**
   * `key`'s render is not wanted any more: taken out of the line, or stopped (with its worker)
   * if it runs. No outcome. The next render starts once the task's other forgets are done: a
   * page forgetting every column's render at once (the toggle turned off, a new comparison)
   * starts no worker for a render it then forgets.
   */
  forget(key: object): void {
    this.waiting.delete(key);
    if (this.running?.key !== key) return;
    this.stop();
    if (this.nextQueued) return;
    this.nextQueued = true;
    queueMicrotask(() => {
      this.nextQueued = false;
      this.next();
    });
  }

  /** Every render forgotten and the worker ended, for good: a thread not needed any more renders nothing after. */
  close(): void {
    this.closed = true;
    this.waiting.clear();
    this.stop();
  }

  private next(): void {
    if (this.running || this.closed) return;
    const [first] = this.waiting;
    if (!first) return;
    const [key, job] = first;
    this.waiting.delete(key);
    const id = this.nextId++;
    const text = job.text();
    this.running = { key, job, id, text, startedAt: performance.now(), timer: undefined };
    let thread: { worker: Worker; loaded: boolean };
    try {
      thread = this.start();
    } catch (error) {
      // No worker could be made (a browser that refuses it, say): this render fails, and the next tries again.
      this.finish(id, { failed: `its thread did not start: ${error instanceof Error ? error.message : String(error)}` }, true);
      return;
    }
    thread.worker.postMessage({ id, text });
    if (thread.loaded) this.limit(this.limitMs, { tooSlow: true });
    else this.limit(LOAD_LIMIT_MS, { failed: `its thread did not start in ${LOAD_LIMIT_MS / 1000} s` });
  }

  /** The running render ends with `outcome` (and its worker with it) after `ms` (none: no limit), unless it ends before. */
  private limit(ms: number, outcome: Rendered): void {
    const running = this.running;
    if (!running) return;
    clearTimeout(running.timer);
    running.timer = Number.isFinite(ms) ? setTimeout(() => this.finish(running.id, outcome, true), ms) : undefined;
  }

  private start(): { worker: Worker; loaded: boolean } {
    if (this.thread) return this.thread;
    const thread = { worker: new Worker(this.scriptUrl()), loaded: false };
    // Only the current worker's messages count: an ended one's late answer or error is not what the one after it runs.
    thread.worker.onmessage = ({ data }: MessageEvent<ThreadMessage>) => {
      if (this.thread !== thread) return;
      if ('loaded' in data) {
        thread.loaded = true;
        // The running render starts now, its script loaded: its time limit from here.
        if (this.running) this.running.startedAt = performance.now();
        this.limit(this.limitMs, { tooSlow: true });
        return;
      }
      const { id, ...rendered } = data;
      this.finish(id, rendered as Rendered, false);
    };
    // Its script did not load, or an error escaped a render: the render fails, the worker ends, and a new one takes the next.
    thread.worker.onerror = (event) => {
      event.preventDefault();
      if (this.thread === thread && this.running) this.finish(this.running.id, { failed: event.message || 'its thread did not start' }, true);
    };
    this.thread = thread;
    return thread;
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
    this.thread?.worker.terminate();
    this.thread = undefined;
  }
}
