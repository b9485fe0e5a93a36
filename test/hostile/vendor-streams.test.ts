/**
 * Hostile vendor streams: whatever a vendor streams back ends in a reply or an UpstreamError,
 * never a hang, a crash or unbounded memory.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeCall } from '../../shared/pricing/charge.js';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import { streamLineCap } from '../../shared/providers/sse.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import type { ModelCall, ModelReply } from '../../shared/providers/types.js';
import { modelCall } from '../support/model-calls.js';

let script: (res: ServerResponse) => void = (res) => res.end();
const closed: Promise<void>[] = [];
const sockets: Socket[] = [];
const server = createServer((req, res) => {
  req.resume();
  sockets.push(req.socket);
  closed.push(new Promise((resolve) => res.once('close', resolve)));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  script(res);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const CHAT = modelCall('fam_e-gpt-oss-120b');
const ANTHROPIC = modelCall('fam_a-sonnet-4-6');
const RESPONSES = modelCall('fam_c-5.4');
const GEMINI = modelCall('fam_b-3.1-flash');

async function outcome(call: ModelCall): Promise<ModelReply | UpstreamError> {
  return ADAPTERS[call.entry.protocol]
    .prepare(call, { baseUrl, apiKey: 'k', simulated: false }, () => undefined)
    .send(AbortSignal.timeout(20_000))
    .catch((error: unknown) => {
      expect(error).toBeInstanceOf(UpstreamError);
      return error as UpstreamError;
    });
}

/** Writes `piece` as fast as the socket takes it, until the client goes away. */
function endless(piece: string): (res: ServerResponse) => void {
  return (res) => {
    const buffer = Buffer.from(piece.repeat(16_384));
    const write = (): void => {
      while (!res.destroyed && res.write(buffer));
      if (!res.destroyed) res.once('drain', write);
    };
    write();
  };
}

const chunk = (fields: object): string => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', ...fields })}\n\n`;

describe('Hostile vendor streams', () => {
  it('a 10 MB line fails the call as malformed', async () => {
    script = (res) => res.end(`data: ${'x'.repeat(10 * 1024 * 1024)}\n\n`);
    const result = await outcome(CHAT);
    expect(result).toBeInstanceOf(UpstreamError);
    expect((result as UpstreamError).code).toBe('upstream_malformed_response');
  });

  it('an endless stream without a newline fails the call and the connection is closed', async () => {
    script = endless('x');
    const result = await outcome(CHAT);
    expect((result as UpstreamError).code).toBe('upstream_malformed_response');
    await closed.at(-1);
  });

  it("an endless stream of comments or bare line ends fails at the call's line cap, long before the total cap", async () => {
    const cap = streamLineCap(ADAPTERS[ANTHROPIC.entry.protocol].billedOutputBound(ANTHROPIC));
    for (const piece of [': keep-alive\n\n', '\n']) {
      script = endless(piece);
      const result = await outcome(ANTHROPIC);
      expect(result).toMatchObject({ code: 'upstream_malformed_response', message: `The stream exceeded ${cap} lines` });
      await closed.at(-1);
    }
  });

  it('a stream of one-character deltas fails at the line cap of its call, its text so far as partial: its parse costs by lines, not only by bytes', async () => {
    const call = { ...CHAT, maxTokens: 100 };
    const cap = streamLineCap(ADAPTERS[call.entry.protocol].billedOutputBound(call));
    script = endless(chunk({ choices: [{ index: 0, delta: { content: 'a' } }] }));
    const result = (await outcome(call)) as UpstreamError;
    expect(result).toMatchObject({ code: 'upstream_malformed_response', message: `The stream exceeded ${cap} lines` });
    // Two lines an event: at most the deltas before the cap, some 600 KB of stream against the 32 MiB it could have sent.
    const received = result.details.partial?.output ?? '';
    expect(/^a+$/.test(received)).toBe(true);
    expect(received.length).toBeLessThanOrEqual(cap / 2);
    await closed.at(-1);
  });

  it('an endless event of short data lines fails at the event cap, long before the total cap, and the connection is closed', async () => {
    // Lines of 200 characters: the event passes its 4 MiB before the stream passes its line cap.
    script = endless(`data:${'x'.repeat(200)}\n`);
    const result = await outcome(CHAT);
    expect(result).toMatchObject({ code: 'upstream_malformed_response', message: `An event of the stream exceeded ${4 * 1024 * 1024} bytes` });
    await closed.at(-1);
  });

  it('data that is not JSON fails the call as malformed, with the text so far as partial', async () => {
    script = (res) => res.end(`${chunk({ choices: [{ index: 0, delta: { content: 'Hello' } }] })}data: {"choices": [\n\n`);
    const result = await outcome(CHAT);
    expect((result as UpstreamError).code).toBe('upstream_malformed_response');
    expect((result as UpstreamError).details.partial).toEqual({ output: 'Hello', hints: { unseenOutputTokens: 0 } });
  });

  it.each([
    ['negative', -5],
    ['fractional', 2.5],
    ['a string', '12'],
  ])('usage with %s counts resolves without usage, so the missing-usage estimate applies', async (_name, bad) => {
    script = (res) =>
      res.end(
        chunk({ choices: [{ index: 0, delta: { content: 'Hello there' }, finish_reason: 'stop' }] }) +
          chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: bad, total_tokens: 20 } }) +
          'data: [DONE]\n\n',
      );
    const result = await outcome(CHAT);
    expect(result).not.toBeInstanceOf(UpstreamError);
    const reply = result as ModelReply;
    expect(reply.output).toBe('Hello there');
    expect(reply.usage).toBeUndefined();
    expect(chargeCall(CHAT, reply.usage, reply.output, 0).kind).toBe('estimated');
  });

  it('an abort on the first delta closes the connection to the vendor, the text so far as partial', async () => {
    script = (res) => res.write(chunk({ choices: [{ index: 0, delta: { content: 'Hel' } }] })); // then holds the stream open
    const controller = new AbortController();
    const result = await ADAPTERS[CHAT.entry.protocol]
      .prepare(CHAT, { baseUrl, apiKey: 'k', simulated: false }, () => controller.abort(new Error('caller went away')))
      .send(controller.signal)
      .catch((error: unknown) => error as UpstreamError);
    expect((result as UpstreamError).code).toBe('timeout');
    expect((result as UpstreamError).details.partial).toEqual({ output: 'Hel', hints: { unseenOutputTokens: 0 } });
    await closed.at(-1); // the vendor saw the request end
  });

  it.each([
    [
      'chat completions, [DONE]',
      CHAT,
      chunk({ choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: 'stop' }] }) +
        chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }) +
        'data: [DONE]\n\n',
    ],
    [
      'chat completions, a usage chunk after the finish_reason and no [DONE]',
      CHAT,
      chunk({ choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: 'stop' }] }) +
        chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
    ],
    [
      'Anthropic, a message_delta with its stop reason and usage and no message_stop',
      ANTHROPIC,
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n',
    ],
    [
      'Anthropic, message_stop',
      ANTHROPIC,
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n' +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ],
    [
      'Gemini, a finishReason with its usage',
      GEMINI,
      'data: {"candidates":[{"content":{"parts":[{"text":"Hello"}]}}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":6}}\n\n' +
        'data: {"candidates":[{"content":{"parts":[]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7}}\n\n',
    ],
    [
      'OpenAI Responses, response.completed',
      RESPONSES,
      'data: {"type":"response.output_text.delta","delta":"Hello"}\n\n' +
        'data: {"type":"response.completed","response":{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hello"}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}}\n\n',
    ],
  ])('%s: the answer is whole at its final event, though the vendor keeps the connection open after it and goes on sending', async (_name, call, answer) => {
    script = (res) => res.write(`${answer}${chunk({ choices: [{ index: 0, delta: { content: ' MORE' } }] })}`); // then holds the stream open
    const started = performance.now();
    const result = await ADAPTERS[call.entry.protocol]
      .prepare(call, { baseUrl, apiKey: 'k', simulated: false }, () => undefined)
      .send(AbortSignal.timeout(10_000))
      .catch((error: unknown) => error);
    // It had waited for the connection to close: a failed `timeout` at the deadline, the answer lost.
    expect(result).toMatchObject({ output: 'Hello', usage: expect.objectContaining({ outputTokens: 2 }) });
    expect(performance.now() - started).toBeLessThan(5_000);
    await closed.at(-1); // and the connection the vendor held open is closed, not left to it
  });

  it.each([
    ['chat completions, a finish_reason', CHAT, chunk({ choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: 'stop' }] })],
    [
      'Anthropic, a message_delta with its stop reason',
      ANTHROPIC,
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n',
    ],
    ['Gemini, a finishReason', GEMINI, 'data: {"candidates":[{"content":{"parts":[{"text":"Hello"}]},"finishReason":"STOP"}]}\n\n'],
  ])(
    '%s and no count, the connection then held open and silent: a whole answer without usage, 2 s after its stop (it had waited out the deadline: a failed timeout)',
    async (_name, call, answer) => {
      script = (res) => res.write(answer); // then holds the stream open, silent
      const result = await ADAPTERS[call.entry.protocol]
        .prepare(call, { baseUrl, apiKey: 'k', simulated: false }, () => undefined)
        .send(AbortSignal.timeout(10_000))
        .catch((error: unknown) => error);
      expect(result).toMatchObject({ output: 'Hello', usage: undefined });
      await closed.at(-1); // and the connection the vendor held open is closed, not left to it
    },
  );

  it('a stream that ends right after its final event leaves its connection to the next call', async () => {
    script = (res) => res.end(`${chunk({ choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: 'stop' }] })}data: [DONE]\n\n`);
    expect(await outcome(CHAT)).toMatchObject({ output: 'Hi' });
    expect(await outcome(CHAT)).toMatchObject({ output: 'Hi' });
    expect(sockets.at(-1)).toBe(sockets.at(-2));
  });

  it('an Anthropic error event mid-stream is an UpstreamError of its type', async () => {
    script = (res) =>
      res.end(
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
          'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      );
    const result = await outcome(ANTHROPIC);
    expect((result as UpstreamError).code).toBe('upstream_overloaded');
    expect((result as UpstreamError).retryable).toBe(true);
  });
});

describe('Hostile vendor streams: Bedrock ConverseStream', () => {
  const codec = new EventStreamCodec(
    (bytes) => Buffer.from(bytes).toString('utf8'),
    (text) => new Uint8Array(Buffer.from(text, 'utf8')),
  );
  /** One frame of `application/vnd.amazon.eventstream`: an event, or an exception as Bedrock sends one mid-stream. */
  const frame = (kind: 'event' | 'exception', type: string, payload: object) =>
    codec.encode({
      headers: {
        [kind === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: kind },
      },
      body: new Uint8Array(Buffer.from(JSON.stringify(payload))),
    });
  let frames: Uint8Array[] = [];
  /** `frames`, one after the other. */
  const framesInTurn = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    for (const piece of frames) res.write(piece);
    res.end();
  };
  /** What the endpoint answers: by default `frames`, one after the other. */
  let answer: (res: ServerResponse) => void = framesInTurn;
  const bedrock = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  beforeAll(() => new Promise<void>((resolve) => bedrock.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => bedrock.close(() => resolve())));
  const NOVA = modelCall('fam_h-pro');

  /** The call's outcome: its error (an UpstreamError), or undefined where it answered. */
  const failure = (call: ModelCall, onDelta?: (text: string) => void) =>
    ADAPTERS[call.entry.protocol]
      .prepare(call, { baseUrl: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`, region: 'us-east-1', simulated: true }, onDelta)
      .send(AbortSignal.timeout(20_000))
      .then(
        () => undefined,
        (e: unknown) => e as UpstreamError,
      );

  it('the answer is whole at its usage after its stop reason, though the vendor keeps the connection open and goes on sending (it had waited out the deadline: a failed timeout)', async () => {
    let closed!: Promise<unknown>;
    answer = (res) => {
      closed = new Promise((resolve) => res.once('close', resolve));
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.write(frame('event', 'messageStart', { role: 'assistant' }));
      res.write(frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }));
      res.write(frame('event', 'messageStop', { stopReason: 'end_turn' }));
      res.write(frame('event', 'metadata', { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 }, metrics: { latencyMs: 1 } }));
      res.write(frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' MORE' } })); // then holds the stream open
    };
    try {
      const started = performance.now();
      const reply = await ADAPTERS[NOVA.entry.protocol]
        .prepare(NOVA, { baseUrl: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`, region: 'us-east-1', simulated: true }, () => undefined)
        .send(AbortSignal.timeout(10_000));
      expect(reply).toMatchObject({ output: 'Hello', usage: expect.objectContaining({ inputTokens: 5, outputTokens: 2 }) });
      expect(performance.now() - started).toBeLessThan(5_000);
      await closed; // and the connection the vendor held open is closed, not left to it
    } finally {
      answer = framesInTurn;
    }
  });

  it('the answer is whole at its stop reason where no usage follows and the vendor holds the connection open, silent (it had waited out the deadline: a failed timeout)', async () => {
    let closed!: Promise<unknown>;
    answer = (res) => {
      closed = new Promise((resolve) => res.once('close', resolve));
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.write(frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }));
      res.write(frame('event', 'messageStop', { stopReason: 'end_turn' })); // then holds the stream open, silent
    };
    try {
      const reply = await ADAPTERS[NOVA.entry.protocol]
        .prepare(NOVA, { baseUrl: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`, region: 'us-east-1', simulated: true }, () => undefined)
        .send(AbortSignal.timeout(10_000));
      expect(reply).toMatchObject({ output: 'Hello', usage: undefined });
      await closed;
    } finally {
      answer = framesInTurn;
    }
  });

  it.each([
    ['mid-answer', [] as string[]],
    ['after a whole answer, while what follows it is read', ['stop', 'usage']],
  ])('closes the connection of a stream failed by an exception frame %s, where the vendor holds it open (it had been left open)', async (_when, whole) => {
    let closed!: Promise<unknown>;
    answer = (res) => {
      closed = new Promise((resolve) => res.once('close', resolve));
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.write(frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }));
      if (whole.includes('stop')) res.write(frame('event', 'messageStop', { stopReason: 'end_turn' }));
      if (whole.includes('usage')) res.write(frame('event', 'metadata', { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 }, metrics: { latencyMs: 1 } }));
      res.write(frame('exception', 'modelStreamErrorException', { message: 'boom' })); // then holds the stream open
    };
    try {
      await ADAPTERS[NOVA.entry.protocol]
        .prepare(NOVA, { baseUrl: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`, region: 'us-east-1', simulated: true }, () => undefined)
        .send(AbortSignal.timeout(60_000))
        .catch(() => undefined);
      await closed;
    } finally {
      answer = framesInTurn;
    }
  });

  it.each([
    ['whole', undefined],
    ['streamed', () => undefined],
  ])('answers a %s call whose error answer is too large to read as its status, retried (it had been a malformed answer, its status lost)', async (_name, onDelta) => {
    answer = (res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'x-amzn-errortype': 'ServiceUnavailableException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      res.end(JSON.stringify({ message: 'x'.repeat(9 * 1024 * 1024) }));
    };
    try {
      expect(await failure(NOVA, onDelta)).toMatchObject({ code: 'upstream_overloaded', retryable: true, details: { upstreamStatus: 503 } });
    } finally {
      answer = framesInTurn;
    }
  });

  it('leaves the connection to the next call where the vendor ends the stream a moment after its usage (it had been closed at once)', async () => {
    const connections: unknown[] = [];
    const counting = (socket: unknown) => connections.push(socket);
    bedrock.on('connection', counting);
    // The client's side: each of its sockets says when it is back in the pool (`free`) or closed.
    const settled = new EventTarget();
    const watching = (message: unknown) => {
      const { socket } = message as { socket: Socket };
      for (const kind of ['free', 'close']) socket.on(kind, () => settled.dispatchEvent(new Event(kind)));
    };
    subscribe('net.client.socket', watching);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.write(frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }));
      res.write(frame('event', 'messageStop', { stopReason: 'end_turn' }));
      res.write(frame('event', 'metadata', { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 }, metrics: { latencyMs: 1 } }));
      setTimeout(() => res.end(), 20);
    };
    try {
      for (let call = 0; call < 3; call++) {
        const reply = await ADAPTERS[NOVA.entry.protocol]
          .prepare(NOVA, { baseUrl: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`, region: 'us-east-1', simulated: true }, () => undefined)
          .send(AbortSignal.timeout(10_000));
        expect(reply).toMatchObject({ output: 'Hello' });
        // The stream's end, 20 ms on, which the call no longer waits for: read in the background,
        // its connection then back in the client's pool (or closed, which the count below refuses).
        const [event] = await Promise.race([once(settled, 'free'), once(settled, 'close')]);
        expect((event as Event).type).toBe('free');
      }
      expect(connections).toHaveLength(1);
    } finally {
      unsubscribe('net.client.socket', watching);
      bedrock.off('connection', counting);
      answer = framesInTurn;
    }
  });

  it.each([
    ['throttlingException', 'upstream_rate_limited', true],
    ['modelStreamErrorException', 'upstream_error', true],
    ['serviceUnavailableException', 'upstream_overloaded', true],
    ['validationException', 'upstream_error', false],
  ])("an exception frame (%s) after text is the vendor's error: %s, its message kept, the text so far as partial", async (type, code, retryable) => {
    frames = [
      frame('event', 'messageStart', { role: 'assistant' }),
      frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }),
      frame('exception', type, { message: `Vendor says: ${type}` }),
    ];
    const deltas: string[] = [];
    const error = await failure(NOVA, (text) => deltas.push(text));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code, message: `Vendor says: ${type}`, retryable, details: { upstreamStatus: 200, partial: { output: 'Hello' } } });
    expect(deltas).toEqual(['Hello']);
  });

  /** AWS's generic error frame (`:message-type: error`), which the SDK models as no exception. */
  const errorFrame = (code: string, message: string) =>
    codec.encode({
      headers: { ':error-code': { type: 'string', value: code }, ':error-message': { type: 'string', value: message }, ':message-type': { type: 'string', value: 'error' } },
      body: new Uint8Array(0),
    });

  it.each([
    [
      'an error frame first',
      () => [errorFrame('InternalFailure', 'An internal error occurred, please retry')],
      'InternalFailure: An internal error occurred, please retry',
      true,
      '',
    ],
    [
      'an error frame after text',
      () => [
        frame('event', 'messageStart', { role: 'assistant' }),
        frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }),
        errorFrame('InternalFailure', 'boom'),
      ],
      'InternalFailure: boom',
      true,
      'Hello',
    ],
    [
      'an exception frame of a type the SDK does not know',
      () => [frame('exception', 'newKindOfException', { message: 'something new' })],
      'newKindOfException: {"message":"something new"}',
      true,
      '',
    ],
  ])(
    "%s is the vendor's failure (upstream_error, its words kept, retried where no text went out), not an undecodable stream",
    async (_name, frames_, message, retryable, partial) => {
      frames = frames_();
      const deltas: string[] = [];
      const error = await failure(NOVA, (text) => deltas.push(text));
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ code: 'upstream_error', message, retryable, details: { upstreamStatus: 200 } });
      expect(deltas.join('')).toBe(partial);
    },
  );

  const streamed = (call = NOVA) => failure(call, () => undefined);
  const malformed = (message: string) => ({ code: 'upstream_malformed_response', message, retryable: false });
  const ended = [frame('event', 'messageStop', { stopReason: 'end_turn' })];

  it("a message whose prelude declares more than an event's 4 MiB fails the call before its bytes arrive (the SDK allocates what a prelude declares, up to 4 GiB)", async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      const prelude = Buffer.alloc(12);
      prelude.writeUInt32BE(2 ** 30, 0);
      res.write(prelude);
      endless('x')(res);
    };
    expect(await streamed()).toMatchObject(malformed('An event of the stream exceeded 4194304 bytes'));
  });

  it('a message that declares fewer bytes than its own frame fails the call (a length of 0 read as a message would never end the reading)', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.end(Buffer.alloc(64));
    };
    expect(await streamed()).toMatchObject(malformed("A message of the stream declared 0 bytes, fewer than its frame's 16"));
  });

  it("an event of more than 20,000 JSON fields fails the call before the SDK parses it, as an SSE vendor's event does", async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.end(Buffer.concat([frame('event', 'metadata', { usage: { inputTokens: 5, outputTokens: 1, totalTokens: 6 }, padding: new Array(30_000).fill(0) }), ...ended]));
    };
    expect(await streamed()).toMatchObject(malformed('An event of the stream holds more than 20000 JSON fields'));
  });

  it('a stream of more than 32 MiB fails the call, however its events are made', async () => {
    const large = frame('event', 'metadata', { padding: 'x'.repeat(3 * 1024 * 1024) });
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.end(Buffer.concat([...new Array(11).fill(large), ...ended]));
    };
    expect(await streamed()).toMatchObject(malformed('The stream exceeded 33554432 bytes'));
  });

  it('a stream of more messages than 8 a token of its output allowance, plus 10,000, fails the call (what decoding costs goes by the messages)', async () => {
    const call = modelCall('fam_h-pro', { maxTokens: 16 });
    const tiny = frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } });
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.end(Buffer.concat([...new Array(streamLineCap(16) + 1).fill(tiny), ...ended]));
    };
    expect(await streamed(call)).toMatchObject(malformed(`The stream exceeded ${streamLineCap(16)} messages`));
  });

  it('a stream within every limit, in pieces that part its messages anywhere, answers as sent', async () => {
    const stream = Buffer.concat([
      frame('event', 'messageStart', { role: 'assistant' }),
      frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello, ' } }),
      frame('event', 'contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'world' } }),
      ...ended,
      frame('event', 'metadata', { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } }),
    ]);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      // Pieces of 1 to 5 bytes: a prelude's length in two pieces, a message's end and the next one's start in one.
      const write = (at: number): void => {
        if (at >= stream.length) return void res.end();
        const size = 1 + (at % 5);
        res.write(stream.subarray(at, at + size), () => write(at + size));
      };
      write(0);
    };
    const deltas: string[] = [];
    expect(await failure(NOVA, (text) => deltas.push(text))).toBeUndefined();
    expect(deltas.join('')).toBe('Hello, world');
  });

  it("a Converse answer read whole of more fields than a vendor's answer and the longest structured output (60,000) fails the call before the SDK parses it", async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } }, stopReason: 'end_turn', padding: new Array(70_000).fill(0) }));
    };
    expect(await failure(NOVA)).toMatchObject(malformed("The provider's answer holds more than 60000 JSON fields"));
  });

  it('a structured answer of 25,000 items (a forced tool input, its output) is read and charged, where the vendor-answer cap of 20,000 had failed it', async () => {
    const items = new Array(25_000).fill(0);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const toolUse = { toolUseId: 't1', name: 'respond', input: { a: items } };
      res.end(
        JSON.stringify({
          output: { message: { role: 'assistant', content: [{ toolUse }] } },
          stopReason: 'tool_use',
          usage: { inputTokens: 20, outputTokens: 9_000, totalTokens: 9_020 },
        }),
      );
    };
    const schema = { type: 'object', properties: { a: { type: 'array', items: { const: 0 } } }, required: ['a'], additionalProperties: false };
    const call = modelCall('fam_h-pro', { responseSchema: schema, maxTokens: 10_000 });
    const reply = await ADAPTERS[call.entry.protocol]
      .prepare(call, { baseUrl: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`, region: 'us-east-1', simulated: true })
      .send(AbortSignal.timeout(20_000));
    expect(JSON.parse(reply.output)).toEqual({ a: items });
    expect(reply.usage).toMatchObject({ inputTokens: 20, outputTokens: 9_000 });
  });
});
