import { PassThrough, Writable } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { FINISH_MARGIN_MS, streamAnswers } from '../../functions/stream-answer.js';
import { EVENT_STREAM_HEADERS, EventStream, type ApiResult } from '../../shared/http/event-stream.js';
import { silentLog } from '../../shared/log.js';
import { gate } from '../support/gate.js';
import { lambdaStreamingRuntime, splitStreamed } from '../support/lambda-streaming.mjs';

const runtime = lambdaStreamingRuntime();

type Streamed = (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => Promise<void>;

const event = { body: '{}' } as APIGatewayProxyEvent;
const context = { awsRequestId: 'req-1' } as Context;
const answer: APIGatewayProxyResult = { statusCode: 200, headers: { 'content-type': 'application/json', 'server-timing': 'total;dur=1' }, body: '{"promptLogId":"pl_1"}' };

function collect(stream: PassThrough): () => Buffer {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks);
}

describe('api entry: the answer is streamed before what follows it is written', () => {
  it('ends the response stream with the whole answer while the settle is still running, and ends the invocation only after it', async () => {
    const settle = gate();
    let settled = false;
    const finished = settle.opened.then(() => void (settled = true));
    const handler = streamAnswers(async () => ({ ...answer, finished }), silentLog, runtime) as Streamed;
    const responseStream = new PassThrough();
    const written = collect(responseStream);
    const ended = new Promise<void>((resolve) => responseStream.on('end', resolve));
    let invocationEnded = false;

    const invocation = handler(event, responseStream, context).then(() => void (invocationEnded = true));
    await ended;

    // The client has the whole answer; the invocation is still settling.
    const { metadata, body } = splitStreamed(written());
    expect(metadata).toEqual({ statusCode: 200, headers: answer.headers });
    expect(body).toBe(answer.body);
    expect(invocationEnded).toBe(false);
    expect(settled).toBe(false);

    settle.open();
    await invocation;
    expect(settled).toBe(true);
  });

  it('streams a 500 error body when the handler throws, and still finishes', async () => {
    const handler = streamAnswers(async () => Promise.reject(new Error('boom')), silentLog, runtime) as Streamed;
    const responseStream = new PassThrough();
    const written = collect(responseStream);
    await handler(event, responseStream, context);
    const { metadata, body } = splitStreamed(written());
    expect(metadata).toMatchObject({ statusCode: 500 });
    expect(JSON.parse(body)).toEqual({ error: { code: 'internal_error', message: expect.any(String) } });
  });

  it('still writes what follows the answer when the response stream fails', async () => {
    const settle = gate();
    let settled = false;
    const finished = settle.opened.then(() => void (settled = true));
    const handler = streamAnswers(async () => ({ ...answer, finished }), silentLog, runtime) as Streamed;
    const responseStream = new PassThrough();
    responseStream.on('error', () => undefined);
    responseStream.destroy(new Error('the runtime closed the stream'));
    let invocationEnded = false;
    const invocation = handler(event, responseStream, context).finally(() => void (invocationEnded = true));
    await new Promise((resolve) => setImmediate(resolve));
    // The stream failed, and the invocation still waits for what follows the answer.
    expect(invocationEnded).toBe(false);
    settle.open();
    await expect(invocation).rejects.toThrow();
    expect(settled).toBe(true);
  });

  it("outside Lambda's streaming runtime returns the answer, buffered, once what follows it is written", async () => {
    const settle = gate();
    let settled = false;
    const finished = settle.opened.then(() => void (settled = true));
    const handler = streamAnswers(async () => ({ ...answer, finished }), silentLog, undefined) as (e: APIGatewayProxyEvent, c: Context) => Promise<APIGatewayProxyResult>;
    let returned: APIGatewayProxyResult | undefined;
    const invocation = handler(event, context).then((result) => (returned = result));
    await new Promise((resolve) => setImmediate(resolve));
    expect(returned).toBeUndefined();
    settle.open();
    await invocation;
    // The proxy-integration answer, isBase64Encoded included (sam-local and LocalStack parse it).
    expect(returned).toEqual({ ...answer, isBase64Encoded: false });
    expect(settled).toBe(true);
  });
});

describe('api entry: an event stream (Accept: text/event-stream)', () => {
  const sse = (stream: EventStream): ApiResult => ({ statusCode: 200, headers: { ...EVENT_STREAM_HEADERS }, body: '', eventStream: stream });
  /**
   * The streaming entry answering with `events`; `isSettled` says whether what follows the
   * answer has run (as in the gateway, once the run has ended the stream).
   */
  const streamingEvents = (events: EventStream) => {
    let settled = false;
    const finished = events.ended.then(() => void (settled = true));
    const handler = streamAnswers(async () => ({ ...sse(events), finished }), silentLog, runtime) as Streamed;
    return { handler, isSettled: () => settled };
  };
  const nextData = (stream: PassThrough) => new Promise<string>((resolve) => stream.once('data', (chunk: Buffer) => resolve(chunk.toString())));

  it('writes the metadata and each event as it is sent, and finishes what follows the answer once the stream has ended', async () => {
    const events = new EventStream(0);
    const { handler, isSettled } = streamingEvents(events);
    const responseStream = new PassThrough();
    const written = collect(responseStream);
    const invocation = handler(event, responseStream, context);

    const first = nextData(responseStream);
    events.send('delta', '{"index":0,"modelId":"m","text":"Hel"}');
    await first;
    // The first event is out while the run goes on.
    expect(splitStreamed(written()).body).toBe('event: delta\ndata: {"index":0,"modelId":"m","text":"Hel"}\n\n');
    expect(isSettled()).toBe(false);

    events.send('done', '{"promptLogId":"pl_1"}');
    events.end();
    await invocation;
    const { metadata, body } = splitStreamed(written());
    expect(metadata).toEqual({ statusCode: 200, headers: EVENT_STREAM_HEADERS });
    expect(body).toBe('event: delta\ndata: {"index":0,"modelId":"m","text":"Hel"}\n\nevent: done\ndata: {"promptLogId":"pl_1"}\n\n');
    expect(isSettled()).toBe(true);
  });

  it('cancels the run when the response stream fails (the caller went), and finishes only once the run has ended the stream', async () => {
    const events = new EventStream(0);
    const settle = gate();
    const { handler, isSettled } = streamingEvents(events);
    const responseStream = new PassThrough();
    const invocation = handler(event, responseStream, context);
    const first = nextData(responseStream);
    events.send('delta', '{"index":0,"modelId":"m","text":"Hel"}');
    await first;

    const cancelled = new Promise((resolve) => events.signal.addEventListener('abort', resolve));
    responseStream.destroy(new Error('the client disconnected'));
    await cancelled;
    expect(isSettled()).toBe(false);
    // The run ends after the cancel, as the fan-out does once its calls have stopped.
    void settle.opened.then(() => {
      events.send('done', '{}');
      events.end();
    });
    settle.open();
    await invocation.catch(() => undefined);
    expect(isSettled()).toBe(true);
  });

  it("cuts a reader that stalls past what the invocation has left, FINISH_MARGIN_MS before the function's timeout, and finishes what follows the answer", async () => {
    const events = new EventStream(0);
    const { handler, isSettled } = streamingEvents(events);
    // A reader that takes nothing: the stream's buffer fills and the writes wait (a minute, left to pipeAnswer).
    const responseStream = new PassThrough({ highWaterMark: 16 });
    const closed = new Promise<void>((resolve) => responseStream.on('close', resolve));
    const invocation = handler(event, responseStream, { ...context, getRemainingTimeInMillis: () => FINISH_MARGIN_MS + 50 } as Context);
    events.send('result', JSON.stringify({ index: 0, text: 'x'.repeat(100_000) }));
    events.send('done', '{}');
    events.end();
    await closed;
    expect(responseStream.destroyed).toBe(true);
    await invocation.catch(() => undefined);
    expect(isSettled()).toBe(true);
  });

  /** A response stream that takes every write and never flushes its end: the reader stalled on the last bytes. */
  const stallsAtTheEnd = () => new Writable({ write: (_chunk, _encoding, done) => done(), final: () => undefined });
  const nearTimeout = { ...context, getRemainingTimeInMillis: () => FINISH_MARGIN_MS + 50 } as Context;

  it("cuts a reader that stalls on the last bytes, once the events have ended, FINISH_MARGIN_MS before the function's timeout", async () => {
    const events = new EventStream(0);
    const { handler, isSettled } = streamingEvents(events);
    const responseStream = stallsAtTheEnd();
    const invocation = handler(event, responseStream, nearTimeout);
    events.send('done', '{}');
    events.end();
    // Without the cut the invocation waits for the flush until Lambda's timeout.
    await invocation;
    expect(responseStream.destroyed).toBe(true);
    expect(isSettled()).toBe(true);
  });

  it("cuts a reader that stalls on a whole answer's last bytes FINISH_MARGIN_MS before the function's timeout, what follows the answer written", async () => {
    let settled = false;
    const handler = streamAnswers(async () => ({ ...answer, finished: Promise.resolve().then(() => void (settled = true)) }), silentLog, runtime) as Streamed;
    const responseStream = stallsAtTheEnd();
    await handler(event, responseStream, nearTimeout);
    expect(responseStream.destroyed).toBe(true);
    expect(settled).toBe(true);
  });

  it('does not cut an answer ready with less than FINISH_MARGIN_MS left: it has its flush', async () => {
    const handler = streamAnswers(async () => ({ ...answer, finished: Promise.resolve() }), silentLog, runtime) as Streamed;
    // A reader that takes each write after 20 ms.
    const chunks: Buffer[] = [];
    const slow = new Writable({
      write: (chunk: Buffer, _encoding, done) =>
        void setTimeout(() => {
          chunks.push(chunk);
          done();
        }, 20),
    });
    await handler(event, slow, { ...context, getRemainingTimeInMillis: () => FINISH_MARGIN_MS - 500 } as Context);
    expect(splitStreamed(Buffer.concat(chunks)).body).toBe(answer.body);
  });

  it("outside Lambda's streaming runtime (buffered) returns the whole stream as one body", async () => {
    const events = new EventStream(0);
    const handler = streamAnswers(async () => sse(events), silentLog, undefined) as (e: APIGatewayProxyEvent, c: Context) => Promise<APIGatewayProxyResult>;
    const invocation = handler(event, context);
    events.send('result', '{"index":0}');
    events.send('done', '{}');
    events.end();
    expect(await invocation).toEqual({
      statusCode: 200,
      headers: EVENT_STREAM_HEADERS,
      body: 'event: result\ndata: {"index":0}\n\nevent: done\ndata: {}\n\n',
      isBase64Encoded: false,
    });
  });
});
