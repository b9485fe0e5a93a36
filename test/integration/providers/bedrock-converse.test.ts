import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { JsonShapeSerializer2 } from '@smithy/core/protocols';
import { describe, expect, it, vi } from 'vitest';
import { countTokens } from '../../../infra/local/simulator/text.js';
import type { FaultRule } from '../../../infra/local/simulator/server.js';
import { MAX_ANSWER_BYTES } from '../../../shared/http/post.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { bedrockConverse } from '../../../shared/providers/bedrock-converse/index.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { withRetry } from '../../../shared/providers/retry.js';
import type { Endpoint, ModelCall, ModelReply } from '../../../shared/providers/types.js';
import { catalogEntry as model } from '../../support/model-calls.js';
import { suiteSimulator } from '../../support/simulator.js';

type Json = Record<string, unknown>;

const PRO = model('fam_h-pro');
const MICRO = model('fam_h-micro');
const PROMPT = 'Compare two ways to cache HTTP responses.';
const SYSTEM = 'You are concise.';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex').toString('base64');
const PDF = Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n', 'latin1').toString('base64');
const SCHEMA = {
  type: 'object',
  properties: { winner: { type: 'string', enum: ['edge', 'origin'] }, reasons: { type: 'array', items: { type: 'string' } } },
  required: ['winner', 'reasons'],
  additionalProperties: false,
};

const sim = await suiteSimulator();
const endpoint: Endpoint = { baseUrl: sim.baseUrl('bedrock'), simulated: true };

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return { entry: PRO, system: [{ type: 'text', text: SYSTEM }], history: [], prompt: PROMPT, attachments: [], maxTokens: 1024, tuning: {}, ...overrides };
}

function send(c: ModelCall = call(), signal = new AbortController().signal): Promise<ModelReply> {
  return bedrockConverse.prepare(c, endpoint).send(signal);
}

async function failure(c: ModelCall = call(), signal?: AbortSignal): Promise<UpstreamError> {
  const error: unknown = await send(c, signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof UpstreamError)) throw new Error(`expected an UpstreamError, got ${String(error)}`);
  return error;
}

function fault(rule: Omit<Extract<FaultRule, { kind: 'status' }>, 'kind'> | Exclude<FaultRule, { kind: 'status' }>): void {
  sim.setFault({ provider: 'bedrock', ...('kind' in rule ? rule : { kind: 'status', ...rule }) } as FaultRule);
}

function lastBody(): Json {
  const last = sim.calls().at(-1);
  if (!last) throw new Error('no call recorded');
  return last.body as Json;
}

describe('Adapter: bedrockConverse against the simulator', () => {
  it.each([
    ['eu-west-1', 'eu.amazon.nova-pro-v1:0'],
    ['ap-northeast-1', 'apac.amazon.nova-pro-v1:0'],
    ['us-east-2', 'us.amazon.nova-pro-v1:0'],
  ])("calls from %s through its geography's inference profile (%s)", async (region, profile) => {
    sim.reset();
    await bedrockConverse.prepare(call(), { ...endpoint, region }).send(new AbortController().signal);

    const [recorded] = sim.calls();
    expect(recorded?.model).toBe(profile);
    expect(recorded?.path).toBe(`/bedrock/v1/model/${encodeURIComponent(profile)}/converse`);
  });

  it('completes a call with text and usage, signed once on the Converse route of the model', async () => {
    const reply = await send();

    expect(reply.output).toMatch(/^Simulated answer from amazon\.nova-pro-v1:0:/);
    expect(reply.finishReason).toBe('end_turn');
    expect(reply.warnings).toEqual([]);
    const inputTokens = countTokens(SYSTEM) + countTokens(PROMPT);
    expect(reply.usage).toEqual({ inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: countTokens(reply.output) });
    expect(providerCost(PRO.prices, reply.usage!)).toBe(Math.round((inputTokens * 0.8 + countTokens(reply.output) * 3.2) * 1e6) / 1e12);

    const calls = sim.calls();
    expect(calls).toHaveLength(1);
    const [recorded] = calls;
    expect(recorded?.protocol).toBe('bedrock-converse');
    expect(recorded?.model).toBe('amazon.nova-pro-v1:0');
    expect(recorded?.path).toBe('/bedrock/v1/model/amazon.nova-pro-v1%3A0/converse');
    expect(recorded?.headers['authorization']).toBe('[redacted]');
    // The body's SHA-256 would identify its text where the body is not kept (npm start).
    expect(recorded?.headers['x-amz-content-sha256']).toBe('[redacted]');
    expect(recorded?.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(recorded?.headers['amz-sdk-request']).toBe('attempt=1; max=1');
    expect(recorded?.headers['connection']).toBe('keep-alive');
  });

  it('sends system, history, attachments and settings field by field as Converse JSON', async () => {
    await send(
      call({
        system: [
          { type: 'text', text: 'Reference text.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: SYSTEM },
        ],
        history: [
          { role: 'user', content: 'What is a CDN?' },
          { role: 'assistant', content: 'A network of edge caches.', cache_control: { type: 'ephemeral' } },
        ],
        attachments: [
          { name: 'diagram.png', type: 'image/png', base64: PNG },
          { name: 'Q3 report, final!.pdf', type: 'application/pdf', base64: PDF },
        ],
        temperature: 0.4,
        topP: 0.8,
        maxTokens: 700,
      }),
    );

    expect(lastBody()).toEqual({
      system: [{ text: 'Reference text.' }, { cachePoint: { type: 'default' } }, { text: SYSTEM }],
      messages: [
        { role: 'user', content: [{ text: 'What is a CDN?' }] },
        { role: 'assistant', content: [{ text: 'A network of edge caches.' }, { cachePoint: { type: 'default' } }] },
        {
          role: 'user',
          content: [{ image: { format: 'png', source: { bytes: PNG } } }, { document: { format: 'pdf', name: 'Q3 report final', source: { bytes: PDF } } }, { text: PROMPT }],
        },
      ],
      inferenceConfig: { maxTokens: 700, temperature: 0.4, topP: 0.8 },
    });
  });

  it("writes its body with the SDK's JSON.stringify codec, not its character-at-a-time writer, which held the thread 420 ms for 3.2 MB of emoji", async () => {
    const writer = vi.spyOn(JsonShapeSerializer2.prototype as unknown as { writeJsonString(s: string): void }, 'writeJsonString');
    try {
      const prompt = `${'😀'.repeat(1_000)} and "quotes", a \\ and a line\nend`;
      await send(call({ prompt }));
      expect(writer).not.toHaveBeenCalled();
      // The same JSON as ever: the prompt arrives whole.
      expect((lastBody() as { messages: { content: { text: string }[] }[] }).messages[0]!.content[0]!.text).toBe(prompt);
    } finally {
      writer.mockRestore();
    }
  });

  it('answers a forced respond tool with schema-conforming JSON as the output', async () => {
    const reply = await send(call({ entry: MICRO, responseSchema: SCHEMA }));

    const output = JSON.parse(reply.output) as { winner: string; reasons: unknown[] };
    expect(['edge', 'origin']).toContain(output.winner);
    expect(Array.isArray(output.reasons)).toBe(true);
    expect(reply.finishReason).toBe('tool_use');
    expect(reply.usage?.outputTokens).toBe(countTokens(reply.output));
    expect(lastBody()['toolConfig']).toEqual({
      tools: [{ toolSpec: { name: 'respond', description: expect.any(String), inputSchema: { json: SCHEMA } } }],
      toolChoice: { tool: { name: 'respond' } },
    });
  });

  it('reports max_tokens when the answer is cut (the fan-out words the warning)', async () => {
    const reply = await send(call({ maxTokens: 3 }));

    expect(reply.finishReason).toBe('max_tokens');
    expect(reply.usage?.outputTokens).toBeLessThanOrEqual(3);
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
  });

  it('reports a cache write, then a cache read of the same prefix, inside the same input total', async () => {
    const manual = `Cache manual ${Date.now()}. ${'Every section of this manual is static. '.repeat(120)}`;
    const cached = call({ system: [{ type: 'text', text: manual, cache_control: { type: 'ephemeral' } }] });
    const prefix = countTokens(manual);

    const first = await send(cached);
    const second = await send(cached);

    expect(prefix).toBeGreaterThanOrEqual(1000);
    expect(first.usage).toMatchObject({ cachedInputTokens: 0, cacheWriteTokens: prefix });
    expect(second.usage).toMatchObject({ cachedInputTokens: prefix, cacheWriteTokens: 0 });
    expect(second.usage?.inputTokens).toBe(first.usage?.inputTokens);
    expect(second.usage?.inputTokens).toBe(prefix + countTokens(PROMPT));
    const uncached = second.usage!.inputTokens - prefix;
    expect(providerCost(PRO.prices, second.usage!)).toBe(Math.round((uncached * 0.8 + prefix * 0.2 + second.usage!.outputTokens * 3.2) * 1e6) / 1e12);
  });

  it('caches a checkpoint only with 1,000 tokens of its own after the last one that cached, as Bedrock wants each its own', async () => {
    const manual = `Cache manual, two checkpoints ${Date.now()}. ${'Every section of this manual is static. '.repeat(120)}`;
    const history = [
      { role: 'user' as const, content: 'A short turn.', cache_control: { type: 'ephemeral' as const } },
      { role: 'assistant' as const, content: 'Noted.' },
    ];
    const reply = await send(call({ system: [{ type: 'text', text: manual, cache_control: { type: 'ephemeral' } }], history }));
    // The system's checkpoint is written; the turn's, a few tokens after it, caches nothing.
    expect(reply.usage).toMatchObject({ cachedInputTokens: 0, cacheWriteTokens: countTokens(manual) });
  });

  it('passes two PDFs of the same name with distinct names Bedrock accepts', async () => {
    const reply = await send(
      call({
        attachments: [
          { name: 'notes.pdf', type: 'application/pdf', base64: PDF },
          { name: 'notes.pdf', type: 'application/pdf', base64: PDF },
        ],
      }),
    );

    expect(reply.output).not.toBe('');
    const content = ((lastBody()['messages'] as Json[])[0]?.['content'] ?? []) as Json[];
    expect(content.flatMap((b) => (b['document'] ? [(b['document'] as Json)['name']] : []))).toEqual(['notes', 'notes (2)']);
  });
});

describe('Adapter: bedrockConverse errors from the simulator, parsed by the SDK', () => {
  it('maps a 429 with Retry-After to a retryable upstream_rate_limited with retryAfterMs', async () => {
    fault({ status: 429, retryAfter: '2' });

    const error = await failure();

    expect(error.code).toBe('upstream_rate_limited');
    expect(error.message).toBe('Too many requests, please wait before trying again.');
    expect(error.details.upstreamStatus).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.details.retryAfterMs).toBe(2000);
  });

  it.each([
    [500, 'The system encountered an unexpected error during processing. Try your request again.', true],
    [502, 'Bedrock is unable to process your request.', true],
    [503, 'Bedrock is unable to process your request.', true],
    [400, 'Malformed input request, please reformat your input and try again.', false],
    [403, "You don't have access to the model with the specified model ID.", false],
    [404, 'Could not resolve the foundation model from the provided model identifier.', false],
    [408, 'Model has timed out in processing the request. Try your request again.', false],
    [424, 'The model encountered an error while processing the request.', false],
  ])(
    'maps a simulated %i to upstream_error (ServiceUnavailableException, which the simulator names 502 and 503: upstream_overloaded) with the vendor message (retryable %s)',
    async (status, message, retryable) => {
      fault({ status });

      const error = await failure();

      expect(error.code).toBe(status === 502 || status === 503 ? 'upstream_overloaded' : 'upstream_error');
      expect(error.message).toBe(message);
      expect(error.details.upstreamStatus).toBe(status);
      expect(error.retryable).toBe(retryable);
    },
  );

  it('keeps a custom error body message', async () => {
    fault({ status: 400, body: { message: 'The provided model identifier is invalid.' } });

    expect((await failure()).message).toBe('The provided model identifier is invalid.');
  });

  it('maps a request the simulator rejects to the vendor validation message', async () => {
    const error = await failure(call({ history: [{ role: 'assistant', content: 'I start.' }] }));

    expect(error.code).toBe('upstream_error');
    expect(error.details.upstreamStatus).toBe(400);
    expect(error.message).toBe('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    expect(error.retryable).toBe(false);
  });

  it('makes exactly one HTTP attempt per send on a 503: the SDK does not retry', async () => {
    fault({ status: 503, times: 1 });

    const error = await failure();
    expect(error.retryable).toBe(true);
    expect(sim.calls()).toHaveLength(1);

    await send();
    expect(sim.calls()).toHaveLength(2);
  });

  it('adds the SDK attempts and the gateway retries up to the gateway cap of 3', async () => {
    const options = { deadlineAt: Date.now() + 10_000, signals: [new AbortController().signal], random: () => 0 };
    fault({ status: 503, times: 1 });

    const recovered = await withRetry(() => send(), options);
    expect(recovered.attempts).toBe(2);
    expect(sim.calls()).toHaveLength(2);

    sim.reset();
    fault({ status: 503 });
    await expect(withRetry(() => send(), options)).rejects.toBeInstanceOf(UpstreamError);
    expect(sim.calls()).toHaveLength(3);
  });

  it.each([
    ['malformed', 'The provider answered 200 with a body that could not be read'],
    ['empty', 'The provider answered without a message'],
  ] as const)('maps a %s 200 body to upstream_malformed_response', async (kind, message) => {
    fault({ kind });

    const error = await failure();

    expect(error.code).toBe('upstream_malformed_response');
    expect(error.message).toBe(message);
    expect(error.retryable).toBe(false);
  });

  it('returns usage undefined with a warning when the answer has no usage block', async () => {
    fault({ kind: 'no-usage' });

    const reply = await send();

    expect(reply.output).not.toBe('');
    expect(reply.usage).toBeUndefined();
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).toEqual([]);
  });

  it('maps a reset connection to a retryable upstream_unreachable', async () => {
    fault({ kind: 'reset', times: 1 });

    const error = await failure();

    expect(error.code).toBe('upstream_unreachable');
    expect(error.retryable).toBe(true);
  });

  it('maps an abort while the provider hangs to timeout', async () => {
    fault({ kind: 'hang' });
    const controller = new AbortController();

    const pending = failure(call(), controller.signal);
    await vi.waitFor(() => expect(sim.calls()).toHaveLength(1));
    controller.abort(new Error('deadline'));
    const error = await pending;

    expect(error.code).toBe('timeout');
    expect(error.retryable).toBe(false);
  });
});

describe('Protocol: simulated Bedrock Converse over plain HTTP', () => {
  const url = (): string => `${sim.baseUrl('bedrock')}/model/${encodeURIComponent('amazon.nova-lite-v1:0')}/converse`;
  const body = { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] };

  it('refuses a request without a signature as Bedrock does', async () => {
    const res = await fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    expect(res.status).toBe(403);
    expect(res.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException:/);
    expect(await res.json()).toEqual({ message: 'Missing Authentication Token' });
  });

  it.each([
    ['a temperature above 1', { ...body, inferenceConfig: { temperature: 1.5 } }, 'The inferenceConfig.temperature field must be between 0 and 1; got 1.5.'],
    [
      'a blank text block',
      { messages: [{ role: 'user', content: [{ text: ' ' }] }] },
      'The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, and try again.',
    ],
    [
      'a document name with a dot',
      { messages: [{ role: 'user', content: [{ document: { format: 'pdf', name: 'a.pdf', source: { bytes: PDF } } }, { text: 'Hi' }] }] },
      'The messages.0.content.0.document.name field can only contain alphanumeric characters, whitespace characters (no more than one in a row), hyphens, parentheses and square brackets.',
    ],
    [
      'six documents',
      { messages: [{ role: 'user', content: [...Array.from({ length: 6 }, (_, i) => ({ document: { format: 'pdf', name: `d${i}`, source: { bytes: PDF } } })), { text: 'Hi' }] }] },
      'The messages.0.content.5 field is a document past the 5 a request can include.',
    ],
    [
      'two user turns in a row',
      { messages: [body.messages[0], body.messages[0]] },
      'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.',
    ],
    [
      'a conversation that starts with an assistant turn',
      { messages: [{ role: 'assistant', content: [{ text: 'Hello!' }] }, body.messages[0]] },
      'A conversation must start with a user message. Try again with a conversation that starts with a user message.',
    ],
    ['a blank system text', { ...body, system: [{ text: '\n' }] }, 'The text field in the ContentBlock object at system.0 is blank. Add text to the text field, and try again.'],
    [
      'a tool input schema whose top level is not an object',
      { ...body, toolConfig: { tools: [{ toolSpec: { name: 'a', inputSchema: { json: { type: 'array' } } } }], toolChoice: { tool: { name: 'a' } } } },
      'The toolConfig.tools.0.toolSpec.inputSchema.json field must have a top-level type of object.',
    ],
    [
      'a forced tool that is not defined',
      { ...body, toolConfig: { tools: [{ toolSpec: { name: 'a', inputSchema: { json: { type: 'object' } } } }], toolChoice: { tool: { name: 'b' } } } },
      'The toolConfig.toolChoice.tool.name field names a tool that is not in toolConfig.tools: b.',
    ],
  ])('answers %s with a 400 ValidationException', async (_label, request, message) => {
    const res = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'AWS4-HMAC-SHA256 Credential=x' },
      body: JSON.stringify(request),
    });

    expect(res.status).toBe(400);
    expect(res.headers.get('x-amzn-errortype')).toMatch(/^ValidationException:/);
    expect(await res.json()).toEqual({ message });
  });

  it('answers in the exact Converse response shape, with any Bedrock API key accepted', async () => {
    const res = await fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bedrock-api-key' }, body: JSON.stringify(body) });

    expect(res.status).toBe(200);
    expect(res.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    const answer = (await res.json()) as Json;
    expect(Object.keys(answer)).toEqual(['output', 'stopReason', 'usage', 'metrics']);
    expect(answer).toEqual({
      output: { message: { role: 'assistant', content: [{ text: expect.stringMatching(/^Simulated answer from amazon\.nova-lite-v1:0:/) }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: expect.any(Number), totalTokens: expect.any(Number) },
      metrics: { latencyMs: expect.any(Number) },
    });
    expect(sim.calls()[0]?.model).toBe('amazon.nova-lite-v1:0');
  });
});

describe('Bedrock connections', () => {
  it('closes a pooled connection after 4 s idle, as every other call does, so a thawed function never sends on a stale one', async () => {
    // A Converse endpoint that would keep the connection open for a minute: any close is the gateway's.
    const closed: Promise<void>[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
            stopReason: 'end_turn',
            usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
            metrics: { latencyMs: 1 },
          }),
        );
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket: Socket) => closed.push(new Promise((resolve) => socket.once('close', () => resolve()))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const local: Endpoint = { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, simulated: true };
      const reply = await bedrockConverse.prepare(call(), local).send(new AbortController().signal);
      expect(reply.output).toBe('hi');
      const started = performance.now();
      expect(closed).toHaveLength(1);
      await closed[0];
      expect(performance.now() - started).toBeGreaterThan(3_500);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 15_000);
});

describe('Bedrock answer size', () => {
  /** A Converse endpoint on the loopback answering `text` (the rest of a valid answer around it); resolves with its endpoint and the close of each connection. */
  async function converseAnswering(text: string): Promise<{ local: Endpoint; closed: Promise<void>[]; stop: () => Promise<void> }> {
    const body = JSON.stringify({
      output: { message: { role: 'assistant', content: [{ text }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      metrics: { latencyMs: 1 },
    });
    const closed: Promise<void>[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    });
    server.on('connection', (socket: Socket) => closed.push(new Promise((resolve) => socket.once('close', () => resolve()))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      local: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, simulated: true },
      closed,
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('refuses an answer over the 8 MiB the HTTP adapters read as malformed, not retried, and closes its connection', async () => {
    const { local, closed, stop } = await converseAnswering('x'.repeat(MAX_ANSWER_BYTES));
    try {
      const error = await bedrockConverse
        .prepare(call(), local)
        .send(new AbortController().signal)
        .then(
          (reply) => reply,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ code: 'upstream_malformed_response', message: `The provider's answer exceeded ${MAX_ANSWER_BYTES} bytes`, retryable: false });
      await closed[0];
    } finally {
      await stop();
    }
  });

  it('reads an answer just under the cap whole', async () => {
    const text = 'x'.repeat(MAX_ANSWER_BYTES - 1024);
    const { local, stop } = await converseAnswering(text);
    try {
      const reply = await bedrockConverse.prepare(call(), local).send(new AbortController().signal);
      expect(reply.output).toBe(text);
    } finally {
      await stop();
    }
  });
});
