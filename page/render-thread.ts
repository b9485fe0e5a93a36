import type { Rendered, ThreadMessage } from './markdown-rules.js';

/** One text to render: read when its render starts (the latest then), and what to do with the outcome. */
export interface RenderJob {
  text: () => string;
  /** The outcome, the text rendered, and when its render started (performance.now()). */
  done: (rendered: Rendered, text: string, startedAt: number) => void;
}

/**
 * How long a worker may take to load its script (fetched and compiled): past it, the render
 * waiting for it fails, and so does every render after it at once (retry() tries again). A
 * render's own time limit counts from the load, not from a download (a slow link took 2.5 s
 * for it, and every column was stopped as too slow).
 */
export const LOAD_LIMIT_MS = 30_000;

interface Thread {
  worker: Worker;
  loaded: boolean;
  /** When it was made, or waited for again (performance.now()): LOAD_LIMIT_MS counts from here, whichever render waits for it. */
  madeAt: number;
}

/**
 * Markdown rendered in a worker (the Markdown thread, markdown-thread.ts), one text at a time,
 * each stopped after `limitMs` (from its thread's load): the worker is then ended, the render's
 * outcome is `tooSlow`, and a new worker (started on demand) takes the next. At most one job a
 * key waits (a column: asking again replaces what it waits with, in its place in the line).
 *
 * A worker still loading is never ended (but by close()): the browser would not cancel its script's download,
 * and downloads stalled on a slow link took the page's connections to its origin, and with
 * them its API calls. A worker that did not load (its script refused, or not there in
 * LOAD_LIMIT_MS) fails every render at once until retry().
 */
export class MarkdownThread {
  private thread: Thread | undefined;
  /** Why renders fail at once: the thread did not load. */
  private failure: string | undefined;
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
    // A closed thread renders nothing: the job is answered at once, so that nothing waits on it.
    if (this.closed) return job.done({ failed: 'its thread was closed' }, job.text(), performance.now());
    this.waiting.set(key, job);
    this.next();
  }

  /**
   * `key`'s render is not wanted any more: taken out of the line, or stopped if it runs (its
   * worker ended, once loaded). No outcome. The next render starts once the task's other
   * forgets are done: a page forgetting every column's render at once (the toggle turned off,
   * a new comparison) starts none it then forgets.
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

  /**
   * A thread that did not load is waited for again (the person asked again: the toggle, a new
   * comparison): a worker still loading, LOAD_LIMIT_MS more (not replaced: its download goes on
   * either way); one whose script was refused, by a new worker.
   */
  retry(): void {
    if (this.failure === undefined) return;
    this.failure = undefined;
    if (this.thread) this.thread.madeAt = performance.now();
  }

  /** Every render forgotten and the worker ended, for good, loaded or not (its column gone): a thread not needed any more renders nothing after. */
  close(): void {
    this.closed = true;
    this.waiting.clear();
    this.stop(false);
    this.endThread();
  }

  private next(): void {
    while (!this.running && !this.closed) {
      const [first] = this.waiting;
      if (!first) return;
      const [key, job] = first;
      this.waiting.delete(key);
      const id = this.nextId++;
      const text = job.text();
      this.running = { key, job, id, text, startedAt: performance.now(), timer: undefined };
      if (this.failure !== undefined) {
        this.finish(id, { failed: this.failure }, false);
        continue;
      }
      let thread: Thread;
      try {
        thread = this.start();
      } catch (error) {
        // No worker could be made (a browser that refuses it, say): this render fails, and the next tries again.
        this.finish(id, { failed: `its thread did not start: ${error instanceof Error ? error.message : String(error)}` }, false);
        continue;
      }
      // To a loaded worker only: one still loading gets the render running when it loads, so that
      // a render forgotten meanwhile never reaches it (it would run first, on the next one's time).
      if (thread.loaded) this.send(thread);
      else this.limitLoad(thread);
    }
  }

  /** The running render sent to `thread`, and stopped, `tooSlow`, with its worker, `limitMs` from now (none at Infinity). */
  private send(thread: Thread): void {
    const running = this.running;
    if (!running) return;
    running.startedAt = performance.now();
    thread.worker.postMessage({ id: running.id, text: running.text });
    this.timeRunning(this.limitMs, () => this.finish(running.id, { tooSlow: true }, true));
  }

  /** The running render fails, and every render after it at once, if `thread` has not loaded LOAD_LIMIT_MS after it was made. */
  private limitLoad(thread: Thread): void {
    const running = this.running;
    if (!running) return;
    this.timeRunning(thread.madeAt + LOAD_LIMIT_MS - performance.now(), () => {
      this.failure = `its thread did not start in ${LOAD_LIMIT_MS / 1000} s`;
      this.finish(running.id, { failed: this.failure }, false);
    });
  }

  /** The running render's one timer: `fire` after `ms`, the timer before it cleared. */
  private timeRunning(ms: number, fire: () => void): void {
    const running = this.running;
    if (!running) return;
    clearTimeout(running.timer);
    running.timer = Number.isFinite(ms) ? setTimeout(fire, Math.max(0, ms)) : undefined;
  }

  private start(): Thread {
    if (this.thread) return this.thread;
    const thread: Thread = { worker: new Worker(this.scriptUrl()), loaded: false, madeAt: performance.now() };
    // Only the current worker's messages count: an ended one's late answer or error is not what the one after it runs.
    thread.worker.onmessage = ({ data }: MessageEvent<ThreadMessage>) => {
      if (this.thread !== thread) return;
      if ('loaded' in data) {
        thread.loaded = true;
        // Loaded after all: renders go on. The running one starts now, its time limit from here.
        this.failure = undefined;
        this.send(thread);
        return;
      }
      const { id, ...rendered } = data;
      this.finish(id, rendered as Rendered, false);
    };
    // Its script did not load (every render fails at once after it), or an error escaped a render (it
    // fails, the worker ends, and a new one takes the next).
    thread.worker.onerror = (event) => {
      event.preventDefault();
      if (this.thread !== thread) return;
      const failed = event.message || 'its thread did not start';
      if (!thread.loaded) this.failure = failed;
      this.endThread();
      if (this.running) this.finish(this.running.id, { failed }, false);
    };
    this.thread = thread;
    return thread;
  }

  /** Render `id` ended with `rendered` (and its worker with it, when `endWorker`): its job is told, and the next starts. */
  private finish(id: number, rendered: Rendered, endWorker: boolean): void {
    const running = this.running;
    if (running?.id !== id) return;
    this.stop(endWorker);
    try {
      running.job.done(rendered, running.text, running.startedAt);
    } finally {
      this.next();
    }
  }

  /** The running render (if any) no longer waited for; its worker ended with it, where it has loaded and `endWorker` (by default: the render was stopped). */
  private stop(endWorker = true): void {
    clearTimeout(this.running?.timer);
    this.running = undefined;
    if (endWorker && this.thread?.loaded) this.endThread();
  }

  /** The worker ended, and the next render gets a new one. */
  private endThread(): void {
    this.thread?.worker.terminate();
    this.thread = undefined;
  }
}
