/**
 * Hostile vendor JSON: an answer, an error body or a streamed event whose shape would hold
 * the thread in JSON.parse for seconds (millions of nested arrays or keys in a few MB) is
 * refused before it is parsed, through the real adapters and HTTP.
 */
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import { eventJson } from '../../shared/providers/stream-http.js';
import type { ModelCall } from '../../shared/providers/types.js';
import { MAX_VENDOR_JSON_FIELDS, parseVendorJson, VendorJsonShapeError } from '../../shared/providers/vendor-json.js';
import { startFakeHttp, type HttpAnswer } from '../support/fake-http.js';
import { modelCall } from '../support/model-calls.js';

let answer: HttpAnswer = { body: {} };
const vendor = await startFakeHttp(() => answer);
afterAll(() => vendor.close());
afterEach(() => vi.restoreAllMocks());

const CHAT = modelCall('fam_e-gpt-oss-120b');
const GEMINI = modelCall('fam_b-3.1-pro');
const ANTHROPIC = modelCall('fam_a-sonnet-4-6');
/** 8 MB of nested arrays: JSON.parse took 3 to 7 s of it here. */
const NESTED = `${'['.repeat(4_000_000)}${']'.repeat(4_000_000)}`;
/** 3 MB of them, within the 4 MiB a streamed line may hold. */
const NESTED_EVENT = `${'['.repeat(1_500_000)}${']'.repeat(1_500_000)}`;

function chatAnswer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'c',
    object: 'chat.completion',
    model: 'gpt-oss-120b',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
    ...extra,
  };
}

/** Whether JSON.parse was ever given a text as long as `text` (the hostile one) during `run`. */
async function parsedDuring(text: string, run: () => Promise<unknown>): Promise<{ result: unknown; parsedIt: boolean }> {
  const parse = vi.spyOn(JSON, 'parse');
  const result = await run();
  return { result, parsedIt: parse.mock.calls.some(([parsed]) => typeof parsed === 'string' && parsed.length >= text.length) };
}

function send(call: ModelCall, stream = false): Promise<unknown> {
  return ADAPTERS[call.entry.protocol]
    .prepare(call, { baseUrl: `${vendor.url}/v1`, apiKey: 'k', simulated: false }, stream ? () => undefined : undefined)
    .send(AbortSignal.timeout(20_000))
    .catch((error: unknown) => error);
}

describe('Function: parseVendorJson', () => {
  it(`parses up to ${MAX_VENDOR_JSON_FIELDS} fields and refuses one more, before the parse`, () => {
    const fields = (n: number) => `{"a":[${Array.from({ length: n - 1 }, () => '0').join(',')}]}`;
    expect((parseVendorJson(fields(MAX_VENDOR_JSON_FIELDS)) as { a: number[] }).a).toHaveLength(MAX_VENDOR_JSON_FIELDS - 1);
    expect(() => parseVendorJson(fields(MAX_VENDOR_JSON_FIELDS + 1))).toThrow(VendorJsonShapeError);
    // Commas and brackets inside strings are text, not fields: an answer's long output costs nothing.
    expect(parseVendorJson(JSON.stringify({ text: '[,{'.repeat(100_000) }))).toEqual({ text: '[,{'.repeat(100_000) });
    // Still a SyntaxError, as the parse's own, for the readers that catch one.
    expect(() => parseVendorJson(NESTED)).toThrow(SyntaxError);
  });
});

describe('Hostile vendor JSON through the adapters', () => {
  it('refuses an answer of millions of nested arrays as malformed, without parsing it', async () => {
    answer = { body: JSON.stringify(chatAnswer()).replace('"usage":', `"x":${NESTED},"usage":`) };
    const { result, parsedIt } = await parsedDuring(NESTED, () => send(CHAT));
    expect(parsedIt).toBe(false);
    expect(result).toBeInstanceOf(UpstreamError);
    expect(result).toMatchObject({
      code: 'upstream_malformed_response',
      retryable: false,
      message: `The provider answered 200 with a body that holds more than ${MAX_VENDOR_JSON_FIELDS} JSON fields`,
    });
  });

  it('reads an answer with many fields under the cap as any other', async () => {
    answer = { body: chatAnswer({ x: Array.from({ length: MAX_VENDOR_JSON_FIELDS - 100 }, (_, i) => i) }) };
    expect(await send(CHAT)).toMatchObject({ output: 'Hello.', usage: { inputTokens: 12, outputTokens: 2 } });
  });

  it.each([
    ['chat completions', CHAT, /answered 500$/],
    ['Gemini', GEMINI, /answered 500$/],
    ['Anthropic', ANTHROPIC, /answered 500$/],
  ])('answers a %s error body of millions of keys with the status alone, without parsing it', async (_name, call, message) => {
    const keys = `{${Array.from({ length: 300_000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    answer = { status: 500, body: keys };
    const { result, parsedIt } = await parsedDuring(keys, () => send(call));
    expect(parsedIt).toBe(false);
    expect(result).toBeInstanceOf(UpstreamError);
    expect((result as UpstreamError).message).toMatch(message);
  });

  it('refuses a streamed event of millions of nested arrays as malformed, without parsing it', async () => {
    const events = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\ndata: {"choices":${NESTED_EVENT}}\n\n`;
    answer = { headers: { 'content-type': 'text/event-stream' }, body: events };
    const { result, parsedIt } = await parsedDuring(NESTED_EVENT, () => send(CHAT, true));
    expect(parsedIt).toBe(false);
    expect(result).toMatchObject({
      code: 'upstream_malformed_response',
      message: `The provider streamed an event (message) whose data holds more than ${MAX_VENDOR_JSON_FIELDS} JSON fields`,
    });
  });
});

describe('Function: eventJson', () => {
  it('names a streamed event by a vendor word, never by a cut piece of what the vendor wrote there', () => {
    // 30 characters, then what could be a key: cut at 40 characters, its first 10 were in the message.
    const event = { event: `${'x'.repeat(30)}ZZKEY7c1f4e2a9b3d5e6f0011${'y'.repeat(20)}`, data: 'not json' };
    expect(() => eventJson(event)).toThrow('The provider streamed an event (unrecognised) whose data is not JSON');
    // A word is named whole (a key whole is what the redaction of results finds).
    expect(() => eventJson({ event: 'response.created', data: '[1]' })).toThrow('The provider streamed an event (response.created) whose data is not a JSON object');
  });
});

describe('Hostile vendor answers: an error body too large to read', () => {
  it("is the status's error, retried as that status is (it had been a malformed answer, its status lost, not retried)", async () => {
    answer = { status: 500, body: 'x'.repeat(9 * 1024 * 1024) };
    const error = await send(CHAT);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { upstreamStatus: 500 } });
  });
});

describe('Hostile vendor answers: a body broken off after its head', () => {
  /** Answers every request with `head` (its status line and headers), 6 bytes of the body it declared 3,000 long, and a reset. */
  let head = '';
  const cutting = createServer((socket) => {
    socket.once('data', () => {
      socket.write(`${head}\r\ncontent-type: application/json\r\ncontent-length: 3000\r\n\r\n{"id":`, () => socket.resetAndDestroy());
    });
  });
  beforeAll(() => new Promise<void>((resolve) => cutting.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => cutting.close(() => resolve())));

  const GROQ = modelCall('fam_i-gpt-oss-120b');
  it.each([
    ['a 200', CHAT, 'HTTP/1.1 200 OK', { code: 'upstream_malformed_response', retryable: false, details: { upstreamStatus: 200 } }],
    ['a 400', CHAT, 'HTTP/1.1 400 Bad Request', { code: 'upstream_error', retryable: false, details: { upstreamStatus: 400 } }],
    ['a 500', CHAT, 'HTTP/1.1 500 Internal Server Error', { code: 'upstream_error', retryable: true, details: { upstreamStatus: 500 } }],
    // As its vendor's error mapper makes them: Groq's capacity status, and a Retry-After the head carried.
    ['a Groq 498', GROQ, 'HTTP/1.1 498 Flex Tier Capacity Exceeded', { code: 'upstream_overloaded', retryable: true, details: { upstreamStatus: 498 } }],
    [
      'a 429 with Retry-After',
      CHAT,
      'HTTP/1.1 429 Too Many Requests\r\nretry-after: 30',
      { code: 'upstream_rate_limited', retryable: true, details: { upstreamStatus: 429, retryAfterMs: 30_000 } },
    ],
  ])(
    'is %s the vendor answered, whole and streamed, not a vendor out of reach (it had been upstream_unreachable, retried: a generated answer paid for again)',
    async (_name, call, status, expected) => {
      head = status;
      const port = (cutting.address() as AddressInfo).port;
      for (const onDelta of [undefined, () => undefined]) {
        const error = await ADAPTERS[call.entry.protocol]
          .prepare(call, { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k', simulated: false }, onDelta)
          .send(AbortSignal.timeout(20_000))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(UpstreamError);
        // A streamed success cut short is a stream broken off, as any: left out here.
        if (onDelta && status.includes(' 200 ')) continue;
        expect(error, onDelta ? 'streamed' : 'whole').toMatchObject(expected);
      }
    },
  );
});
