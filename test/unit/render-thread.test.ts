import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Rendered, RenderRequest, ThreadMessage } from '../../page/markdown-rules.js';
import { LOAD_LIMIT_MS, MarkdownThread } from '../../page/render-thread.js';

/** A stand-in for the browser's Worker: what it was sent, whether it was ended, and its load and answers given by the test. */
class FakeWorker {
  static made: FakeWorker[] = [];
  readonly sent: RenderRequest[] = [];
  terminated = false;
  onmessage: ((event: { data: ThreadMessage }) => void) | null = null;
  onerror: ((event: { message: string; preventDefault(): void }) => void) | null = null;

  constructor(readonly url: string) {
    FakeWorker.made.push(this);
  }

  postMessage(request: RenderRequest): void {
    this.sent.push(request);
  }

  terminate(): void {
    this.terminated = true;
  }

  /** Its script has loaded (as markdown-thread.ts says first). */
  load(): void {
    this.onmessage?.({ data: { loaded: true } });
  }

  /** The worker answers its last request with `rendered`. */
  answer(rendered: Rendered): void {
    const last = this.sent.at(-1);
    if (!last) throw new Error('nothing was sent');
    this.onmessage?.({ data: { id: last.id, ...rendered } as ThreadMessage });
  }

  fail(message: string): void {
    this.onerror?.({ message, preventDefault: () => {} });
  }
}

/** A thread with a time limit of `limitMs`, the outcomes of its renders, and `ask`, which renders `text` for `key` (a new one unless given). */
function recorded(limitMs = 2_000) {
  const thread = new MarkdownThread(() => '/page-markdown.js', limitMs);
  const outcomes: [Rendered, string][] = [];
  const ask = (text: string | (() => string), key: object = {}) =>
    thread.render(key, { text: typeof text === 'string' ? () => text : text, done: (rendered, renderedText) => void outcomes.push([rendered, renderedText]) });
  return { thread, outcomes, ask };
}

beforeEach(() => {
  FakeWorker.made = [];
  vi.stubGlobal('Worker', FakeWorker);
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('Class: MarkdownThread', () => {
  it('renders one text at a time in one worker, in the order asked, each key with its text when its turn comes', () => {
    const { outcomes, ask } = recorded();
    const a = {};
    const b = {};
    let textB = 'b1';
    ask('a', a);
    ask(() => textB, b);
    // Its text changed, and asked again while it waits: one render, with the text it has when its turn comes.
    textB = 'b2';
    ask(() => textB, b);
    textB = 'b3';
    const [worker] = FakeWorker.made;
    expect(worker?.url).toBe('/page-markdown.js');
    // Nothing sent till the worker has loaded.
    expect(worker?.sent).toEqual([]);
    worker?.load();
    expect(worker?.sent.map((request) => request.text)).toEqual(['a']);
    worker?.answer({ html: '<p>a</p>' });
    expect(worker?.sent.map((request) => request.text)).toEqual(['a', 'b3']);
    worker?.answer({ tooManyCells: true });
    expect(outcomes).toEqual([
      [{ html: '<p>a</p>' }, 'a'],
      [{ tooManyCells: true }, 'b3'],
    ]);
    expect(FakeWorker.made).toHaveLength(1);
    expect(worker?.terminated).toBe(false);
  });

  it("stops a render at its time limit, counted from its thread's load: the worker ended, the outcome tooSlow, and the next render in a new worker, whose answers alone count", () => {
    const { outcomes, ask } = recorded();
    ask('slow');
    ask('next');
    // Its script took 2.5 s to arrive: a download, not the render.
    vi.advanceTimersByTime(2_500);
    expect(outcomes).toEqual([]);
    FakeWorker.made[0]?.load();
    vi.advanceTimersByTime(1_999);
    expect(outcomes).toEqual([]);
    vi.advanceTimersByTime(1);
    const [first, second] = FakeWorker.made;
    expect(first?.terminated).toBe(true);
    expect(outcomes).toEqual([[{ tooSlow: true }, 'slow']]);
    second?.load();
    expect(second?.sent.map((request) => request.text)).toEqual(['next']);
    // The ended worker's late answer and error change nothing.
    first?.answer({ html: 'late' });
    first?.fail('late');
    expect(outcomes).toHaveLength(1);
    second?.answer({ html: '<p>next</p>' });
    expect(outcomes).toEqual([
      [{ tooSlow: true }, 'slow'],
      [{ html: '<p>next</p>' }, 'next'],
    ]);
    // Answered in time: no limit left running.
    vi.advanceTimersByTime(LOAD_LIMIT_MS);
    expect(outcomes).toHaveLength(2);
  });

  it('fails every render at once when its thread has not loaded in LOAD_LIMIT_MS, keeping the worker (its download goes on); retry() waits for it again', () => {
    const { thread, outcomes, ask } = recorded(Number.POSITIVE_INFINITY);
    ask('one');
    vi.advanceTimersByTime(LOAD_LIMIT_MS / 2);
    // A render asked later waits no longer than the first: the limit counts from the worker.
    ask('two');
    vi.advanceTimersByTime(LOAD_LIMIT_MS / 2 - 1);
    expect(outcomes).toEqual([]);
    vi.advanceTimersByTime(1);
    const stalled = { failed: 'its thread did not start in 30 s' };
    expect(outcomes).toEqual([
      [stalled, 'one'],
      [stalled, 'two'],
    ]);
    // Asked after, it fails at once; no other worker is made, nor this one ended.
    ask('three');
    expect(outcomes).toHaveLength(3);
    expect(FakeWorker.made).toHaveLength(1);
    expect(FakeWorker.made[0]?.terminated).toBe(false);
    // Asked again (the toggle, a new comparison): waited for, and once it loads, renders go on.
    thread.retry();
    ask('four');
    FakeWorker.made[0]?.load();
    FakeWorker.made[0]?.answer({ html: '<p>four</p>' });
    expect(outcomes.at(-1)).toEqual([{ html: '<p>four</p>' }, 'four']);
    expect(FakeWorker.made).toHaveLength(1);
  });

  it('has no time limit at Infinity, once loaded', () => {
    const { outcomes, ask } = recorded(Number.POSITIVE_INFINITY);
    ask('long');
    FakeWorker.made[0]?.load();
    vi.advanceTimersByTime(3_600_000);
    expect(outcomes).toEqual([]);
    FakeWorker.made[0]?.answer({ html: '<p>long</p>' });
    expect(outcomes).toEqual([[{ html: '<p>long</p>' }, 'long']]);
  });

  it('forgets a render: out of the line while it waits; stopped, with its worker, while it runs; no outcome either way', async () => {
    const { thread, outcomes, ask } = recorded();
    const running = {};
    const waiting = {};
    ask('running', running);
    ask('waiting', waiting);
    ask('last');
    FakeWorker.made[0]?.load();
    thread.forget(waiting);
    thread.forget(running);
    // The next render starts after the task's other forgets.
    expect(FakeWorker.made).toHaveLength(1);
    await Promise.resolve();
    const [first, second] = FakeWorker.made;
    expect(first?.terminated).toBe(true);
    second?.load();
    expect(second?.sent.map((request) => request.text)).toEqual(['last']);
    first?.answer({ html: 'late' });
    vi.advanceTimersByTime(1_000);
    second?.answer({ html: '<p>last</p>' });
    expect(outcomes).toEqual([[{ html: '<p>last</p>' }, 'last']]);
  });

  it('fails every render at once when its script does not load (refused, not there), until retry() makes a new worker', () => {
    const { thread, outcomes, ask } = recorded();
    ask('one');
    ask('two');
    FakeWorker.made[0]?.fail('');
    expect(FakeWorker.made[0]?.terminated).toBe(true);
    expect(outcomes).toEqual([
      [{ failed: 'its thread did not start' }, 'one'],
      [{ failed: 'its thread did not start' }, 'two'],
    ]);
    expect(FakeWorker.made).toHaveLength(1);
    thread.retry();
    ask('three');
    FakeWorker.made[1]?.load();
    expect(FakeWorker.made[1]?.sent.map((request) => request.text)).toEqual(['three']);
  });

  it('fails the render an error escaped in a loaded worker, and renders the next in a new one', () => {
    const { outcomes, ask } = recorded();
    ask('one');
    ask('two');
    FakeWorker.made[0]?.load();
    FakeWorker.made[0]?.fail('Uncaught RangeError');
    expect(FakeWorker.made[0]?.terminated).toBe(true);
    expect(outcomes).toEqual([[{ failed: 'Uncaught RangeError' }, 'one']]);
    FakeWorker.made[1]?.load();
    expect(FakeWorker.made[1]?.sent.map((request) => request.text)).toEqual(['two']);
  });

  it('keeps a worker still loading when its render is forgotten (the browser would not cancel its download): the next render waits for it', async () => {
    const { thread, outcomes, ask } = recorded();
    const first = {};
    ask('first', first);
    thread.forget(first);
    ask('second');
    await Promise.resolve();
    expect(FakeWorker.made).toHaveLength(1);
    expect(FakeWorker.made[0]?.terminated).toBe(false);
    FakeWorker.made[0]?.load();
    // The forgotten render never reached it (it would have run first, on the second's time).
    expect(FakeWorker.made[0]?.sent.map((request) => request.text)).toEqual(['second']);
    FakeWorker.made[0]?.answer({ html: '<p>second</p>' });
    expect(outcomes).toEqual([[{ html: '<p>second</p>' }, 'second']]);
  });

  it('fails a render whose worker cannot be made, and tries again for the next', () => {
    let refuse = true;
    vi.stubGlobal(
      'Worker',
      class extends FakeWorker {
        constructor(url: string) {
          if (refuse) throw new TypeError('refused by policy');
          super(url);
        }
      },
    );
    const { outcomes, ask } = recorded();
    ask('one');
    refuse = false;
    ask('two');
    expect(outcomes).toEqual([[{ failed: 'its thread did not start: refused by policy' }, 'one']]);
    FakeWorker.made[0]?.load();
    expect(FakeWorker.made[0]?.sent.map((request) => request.text)).toEqual(['two']);
  });

  it('starts no worker for renders forgotten together (a page turning Markdown off over every column)', async () => {
    const { thread, outcomes, ask } = recorded();
    const keys = [{}, {}, {}];
    for (const [i, key] of keys.entries()) ask(`text ${i}`, key);
    FakeWorker.made[0]?.load();
    for (const key of keys) thread.forget(key);
    await Promise.resolve();
    expect(FakeWorker.made).toHaveLength(1);
    expect(FakeWorker.made[0]?.terminated).toBe(true);
    expect(outcomes).toEqual([]);
  });

  it('close() forgets every render and ends the worker, for good: a render asked after starts no worker', () => {
    const { thread, outcomes, ask } = recorded();
    ask('one');
    ask('two');
    thread.close();
    expect(FakeWorker.made[0]?.terminated).toBe(true);
    vi.advanceTimersByTime(LOAD_LIMIT_MS);
    FakeWorker.made[0]?.onmessage?.({ data: { id: 0, html: 'late' } });
    expect(outcomes).toEqual([]);
    // Asked after, it is answered at once, so that no column waits on it.
    ask('after');
    expect(outcomes).toEqual([[{ failed: 'its thread was closed' }, 'after']]);
    expect(FakeWorker.made).toHaveLength(1);
  });
});
