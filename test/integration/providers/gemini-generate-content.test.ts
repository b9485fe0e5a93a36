import { Ajv } from 'ajv';
import { describe, expect, it, vi } from 'vitest';
import { chargeCall } from '../../../shared/pricing/charge.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { ADAPTERS } from '../../../shared/providers/adapters.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { geminiGenerateContent } from '../../../shared/providers/gemini-generate-content/index.js';
import type { Endpoint, ModelCall } from '../../../shared/providers/types.js';
import { catalogEntry as entry, modelCall } from '../../support/model-calls.js';
import { suiteSimulator } from '../../support/simulator.js';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF = 'JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoKdHJhaWxlcgo8PC9Sb290IDEgMCBSPj4KJSVFT0YK';

const SCHEMA = {
  type: 'object',
  properties: { verdict: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
  required: ['verdict', 'confidence'],
  additionalProperties: false,
};

const sim = await suiteSimulator();

function endpoint(): Endpoint {
  return { baseUrl: sim.baseUrl('google'), apiKey: 'test-key', simulated: true };
}

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return modelCall('fam_b-3.5-flash', overrides);
}

function send(c: ModelCall = call(), signal: AbortSignal = new AbortController().signal) {
  return geminiGenerateContent.prepare(c, endpoint()).send(signal);
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

function lastBody(): Record<string, unknown> {
  const recorded = sim.calls().at(-1);
  if (!recorded) throw new Error('no upstream call');
  return recorded.body as Record<string, unknown>;
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sim.url}/google${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('Adapter: geminiGenerateContent against the simulator', () => {
  it('is the registered adapter of the gemini-generate-content protocol (its limits at once, its calls once loaded)', async () => {
    const registered = ADAPTERS['gemini-generate-content'];
    expect(registered.billedOutputBound).toBe(geminiGenerateContent.billedOutputBound);
    expect(registered.sentOutputLimit).toBe(geminiGenerateContent.sentOutputLimit);
    const prepare = vi.spyOn(geminiGenerateContent, 'prepare');
    try {
      const reply = await registered.prepare(call(), endpoint()).send(AbortSignal.timeout(10_000));
      expect(prepare).toHaveBeenCalledTimes(1);
      expect(reply.output).not.toBe('');
    } finally {
      prepare.mockRestore();
    }
  });

  it('completes a reply with usage and a cost', async () => {
    const reply = await send();

    expect(reply.output).toMatch(/^Simulated answer from gemini-3\.5-flash:/);
    expect(reply.finishReason).toBe('STOP');
    expect(reply.warnings).toEqual([]);
    const usage = reply.usage!;
    expect(usage.inputTokens).toBeGreaterThan(0);
    // gemini-3.5-flash thinks by default: thinking is part of the output and billed as such.
    expect(usage.reasoningTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(usage.reasoningTokens!);
    expect(usage.cachedInputTokens).toBe(0);
    expect(providerCost(entry('fam_b-3.5-flash').prices, usage)).toBeGreaterThan(0);
  });

  it('sends the upstream request Gemini expects, field by field', async () => {
    await send(
      call({
        entry: entry('fam_b-3.1-pro'),
        system: [{ type: 'text', text: 'You are concise.' }],
        history: [
          { role: 'user', content: 'What is a CDN?' },
          { role: 'assistant', content: 'A content delivery network.' },
        ],
        attachments: [
          { name: 'pixel.png', type: 'image/png', base64: PNG },
          { name: 'doc.pdf', type: 'application/pdf', base64: PDF },
        ],
        temperature: 0.7,
        topP: 0.95,
        maxTokens: 2048,
        tuning: { thinkingBudget: 2048, webSearch: true },
      }),
    );

    const recorded = sim.calls();
    expect(recorded).toHaveLength(1);
    const upstream = recorded[0]!;
    expect(upstream.protocol).toBe('gemini-generate-content');
    expect(upstream.provider).toBe('google');
    expect(upstream.model).toBe('gemini-3.1-pro-preview');
    expect(upstream.path).toBe('/google/v1/models/gemini-3.1-pro-preview:generateContent');
    expect(upstream.headers['x-goog-api-key']).toBe('[redacted]');
    expect(upstream.headers['authorization']).toBeUndefined();
    expect(upstream.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'What is a CDN?' }] },
        { role: 'model', parts: [{ text: 'A content delivery network.' }] },
        {
          role: 'user',
          parts: [
            { inlineData: { mimeType: 'image/png', data: PNG } },
            { inlineData: { mimeType: 'application/pdf', data: PDF } },
            { text: 'Compare two ways to cache HTTP responses.' },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'You are concise.' }] },
      generationConfig: { maxOutputTokens: 2048, temperature: 0.7, topP: 0.95, thinkingConfig: { thinkingLevel: 'medium' } },
      tools: [{ google_search: {} }],
    });
  });

  it('maps search grounding: tool-use tokens as input, and the query it ran charged at the price a query', async () => {
    const searched = call({ tuning: { webSearch: true } });
    const reply = await send(searched);

    expect(reply.usage!.searchQueries).toBe(1);
    const plain = await send(call());
    expect(plain.usage!.searchQueries).toBeUndefined();
    expect(reply.usage!.inputTokens).toBeGreaterThan(plain.usage!.inputTokens);
    const charge = chargeCall(searched, reply.usage, reply.output, Date.now());
    const tokensOnly = providerCost(searched.entry.prices, { ...reply.usage!, searchQueries: 0 });
    expect(charge.kind === 'observed' && charge.providerCost).toBeCloseTo(tokensOnly + 0.014, 12);
    expect(charge.warning).toBe('Google Search grounding ran 1 search query: 1 charged at 0.014 USD each');
  });

  it('returns JSON that validates against the response schema, enforced natively', async () => {
    const reply = await send(call({ responseSchema: SCHEMA }));

    expect(lastBody()['generationConfig']).toEqual({ maxOutputTokens: 4096, responseMimeType: 'application/json', responseJsonSchema: SCHEMA });
    const validate = new Ajv().compile(SCHEMA);
    expect(validate(JSON.parse(reply.output))).toBe(true);
  });

  it('sends cachedContent without system instruction and reports the cached tokens', async () => {
    const reply = await send(call({ system: [{ type: 'text', text: 'You are concise.' }], tuning: { cachedContent: 'cachedContents/abc123' } }));

    const body = lastBody();
    expect(body['cachedContent']).toBe('cachedContents/abc123');
    expect(body['systemInstruction']).toBeUndefined();
    expect(reply.usage!.cachedInputTokens).toBe(Math.floor(reply.usage!.inputTokens * 0.8));
    expect(reply.warnings).toEqual(['The system prompt was not sent: with cachedContent, Gemini takes the system instruction stored in the cache']);
  });

  it('turns thinkingBudget 0 into a level the Pro model accepts (the simulator rejects minimal there, as Gemini does)', async () => {
    const reply = await send(call({ entry: entry('fam_b-3.1-pro'), tuning: { thinkingBudget: 0 } }));

    expect((lastBody()['generationConfig'] as Record<string, unknown>)['thinkingConfig']).toEqual({ thinkingLevel: 'low' });
    expect(reply.warnings).toEqual(["gemini-3.1-pro-preview cannot turn thinking off; thinkingBudget 0 was sent as its lowest thinkingLevel 'low'"]);
  });

  it('says when the output is cut at maxTokens (the fan-out words the warning)', async () => {
    const reply = await send(call({ entry: entry('fam_b-3.1-flash-lite'), maxTokens: 200, tuning: { thinkingBudget: 0 } }));
    const cut = await send(call({ entry: entry('fam_b-3.1-flash-lite'), maxTokens: 5, tuning: { thinkingBudget: 0 } }));

    expect(reply.finishReason).toBe('STOP');
    expect(cut.finishReason).toBe('MAX_TOKENS');
    expect([reply.cutAtMaxTokens, cut.cutAtMaxTokens]).toEqual([undefined, true]);
    expect(cut.usage!.outputTokens).toBeLessThanOrEqual(5);
  });

  it('maps a 429 with a retry delay to a retryable rate-limit error waiting 2 s', async () => {
    sim.setFault({ kind: 'status', status: 429, retryAfter: '2', provider: 'google' });

    const error = await rejection(send());

    expect(error.code).toBe('upstream_rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.details.upstreamStatus).toBe(429);
    expect(error.details.retryAfterMs).toBe(2000);
    expect(error.message).toMatch(/^RESOURCE_EXHAUSTED: /);
  });

  it.each<[number, boolean]>([
    [400, false],
    [403, false],
    [500, true],
    [503, true],
    [504, true],
  ])('maps a %i to retryable %s (503: upstream_overloaded, "The model is overloaded")', async (status, retryable) => {
    sim.setFault({ kind: 'status', status, provider: 'google' });

    const error = await rejection(send());

    expect(error.code).toBe(status === 503 ? 'upstream_overloaded' : 'upstream_error');
    expect(error.retryable).toBe(retryable);
    expect(error.details.upstreamStatus).toBe(status);
  });

  it('keeps the message of a vendor error body', async () => {
    sim.setFault({
      kind: 'status',
      status: 400,
      provider: 'google',
      body: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } },
    });

    const error = await rejection(send());

    expect(error.message).toBe('INVALID_ARGUMENT: API key not valid. Please pass a valid API key.');
    expect(error.retryable).toBe(false);
  });

  it.each(['malformed', 'empty'] as const)('maps a %s 200 body to upstream_malformed_response', async (kind) => {
    sim.setFault({ kind, provider: 'google' });

    const error = await rejection(send());

    expect(error.code).toBe('upstream_malformed_response');
    expect(error.retryable).toBe(false);
  });

  it('answers without usage when the vendor sends none', async () => {
    sim.setFault({ kind: 'no-usage', provider: 'google' });

    const reply = await send();

    expect(reply.output).not.toBe('');
    expect(reply.usage).toBeUndefined();
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).toEqual([]);
  });

  it('maps a reset connection to a retryable upstream_unreachable', async () => {
    sim.setFault({ kind: 'reset', provider: 'google' });

    const error = await rejection(send());

    expect(error.code).toBe('upstream_unreachable');
    expect(error.retryable).toBe(true);
  });

  it('maps an abort at the deadline to timeout', async () => {
    sim.setFault({ kind: 'hang', provider: 'google' });
    const controller = new AbortController();
    const pending = send(call(), controller.signal);
    await expect.poll(() => sim.calls().length).toBe(1);
    controller.abort();

    expect((await rejection(pending)).code).toBe('timeout');
  });
});

describe('Simulator: gemini-generate-content', () => {
  const contents = [{ role: 'user', parts: [{ text: 'Hello' }] }];

  it.each(['/v1', '/v1beta'])('answers POST %s/models/{model}:generateContent in the GenerateContentResponse shape', async (version) => {
    const res = await post(`${version}/models/gemini-3.1-flash-lite:generateContent`, { contents });

    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: expect.stringMatching(/^Simulated answer from gemini-3\.1-flash-lite:/) }] }, finishReason: 'STOP', index: 0 }],
      modelVersion: 'gemini-3.1-flash-lite',
      responseId: expect.any(String),
    });
    const usage = body['usageMetadata'] as Record<string, number>;
    expect(usage['totalTokenCount']).toBe(usage['promptTokenCount']! + usage['candidatesTokenCount']! + (usage['thoughtsTokenCount'] ?? 0));
    expect(sim.calls().at(-1)?.model).toBe('gemini-3.1-flash-lite');
  });

  it('answers the same request with the same text', async () => {
    const a = await (await post('/v1beta/models/gemini-3.5-flash:generateContent', { contents })).text();
    const b = await (await post('/v1beta/models/gemini-3.5-flash:generateContent', { contents })).text();

    expect(a).toBe(b);
  });

  it('adds a thought part only when includeThoughts is asked for', async () => {
    const res = await post('/v1beta/models/gemini-3.5-flash:generateContent', {
      contents,
      generationConfig: { thinkingConfig: { thinkingLevel: 'high', includeThoughts: true } },
    });
    const body = (await res.json()) as { candidates: { content: { parts: { text: string; thought?: boolean }[] } }[] };

    expect(body.candidates[0]!.content.parts[0]!.thought).toBe(true);
    expect(body.candidates[0]!.content.parts[1]!.thought).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    ['missing contents', {}, /contents is not specified/],
    ['empty contents', { contents: [] }, /contents is not specified/],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, /parts must not be empty/],
    ['an unknown role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, /valid role: user, model/],
    [
      'an empty text part (no member of the data oneof set)',
      { contents: [{ role: 'user', parts: [{ text: '' }] }] },
      /contents\[0\]\.parts\[0\]\.data: required oneof field 'data' must have one initialized field/,
    ],
    ['an empty system instruction text', { contents, systemInstruction: { parts: [{ text: '' }] } }, /system_instruction\.parts\[0\]\.data: required oneof field 'data'/],
    ['an unknown field', { contents, max_tokens: 5 }, /Unknown name "max_tokens"/],
    ['an unknown generationConfig field', { contents, generationConfig: { maxTokens: 5 } }, /Unknown name "maxTokens" at 'generation_config'/],
    [
      'thinkingLevel with thinkingBudget',
      { contents, generationConfig: { thinkingConfig: { thinkingLevel: 'low', thinkingBudget: 10 } } },
      /only one of thinking budget and thinking level/,
    ],
    ['a schema without the JSON MIME type', { contents, generationConfig: { responseJsonSchema: { type: 'object' } } }, /response_mime_type/],
    ['cachedContent with a system instruction', { contents, cachedContent: 'cachedContents/x1', systemInstruction: { parts: [{ text: 's' }] } }, /CachedContent can not be used/],
    ['cachedContent with tools', { contents, cachedContent: 'cachedContents/x1', tools: [{ google_search: {} }] }, /CachedContent can not be used/],
  ])('rejects %s with 400 INVALID_ARGUMENT in Google error shape', async (_label, body, message) => {
    const res = await post('/v1beta/models/gemini-3.5-flash:generateContent', body);

    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { code: number; message: string; status: string } }).error;
    expect(error.code).toBe(400);
    expect(error.status).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(message);
  });

  it('rejects a thinking level the model does not support', async () => {
    const res = await post('/v1beta/models/gemini-3.1-pro-preview:generateContent', { contents, generationConfig: { thinkingConfig: { thinkingLevel: 'minimal' } } });

    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Thinking level MINIMAL is not supported for this model');
  });

  it('rejects a body that is not JSON', async () => {
    const res = await post('/v1beta/models/gemini-3.5-flash:generateContent', '{"contents": [');

    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
  });

  it('accepts a request without x-goog-api-key and rejects an empty one', async () => {
    expect((await post('/v1beta/models/gemini-3.5-flash:generateContent', { contents })).status).toBe(200);

    const res = await post('/v1beta/models/gemini-3.5-flash:generateContent', { contents }, { 'x-goog-api-key': ' ' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('API_KEY_INVALID');
  });

  it('sends the retry delay of a 429 as a RetryInfo detail', async () => {
    sim.setFault({ kind: 'status', status: 429, retryAfter: '2', provider: 'google' });

    const res = await post('/v1beta/models/gemini-3.5-flash:generateContent', { contents });

    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }],
      },
    });
  });
});
