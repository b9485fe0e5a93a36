import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { schemaChecker } from '../../shared/contract/schema-checker.js';
import { usdToMicroCredits } from '../../shared/credits/credits.js';
import { parseServerTiming } from '../../shared/http/server-timing.js';
import { UNCHARGED_CONTENT_BYTES } from '../../shared/orchestrator/prompt-service.js';
import { PNG_BASE64, body, chatCompletionAnswer } from '../support/fixtures.js';
import { post, startTestHost } from '../support/local.js';

let host: LocalHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(async () => {
  await host?.close();
});
beforeEach(() => host.simulator.reset());

async function balanceMicro(): Promise<number> {
  return (await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro;
}

describe('POST /api/v1/prompt', () => {
  it('answers with one completed result per model, in request order, and charges what they cost', async () => {
    const before = await balanceMicro();
    const { status, body: answer } = await post(host, body({ models: ['fam_c-5.4', 'claude-opus-4-6', 'fam_b-3.1-pro'] }));
    expect(status).toBe(200);
    expect(Object.keys(answer).sort()).toEqual(['creditsUsed', 'evaluations', 'promptLogId', 'results']);
    expect(answer.promptLogId).toMatch(/^pl_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(answer.evaluations).toEqual([]);
    expect(answer.results.map((r: any) => r.modelId)).toEqual(['fam_c-5.4', 'claude-opus-4-6', 'fam_b-3.1-pro']);
    for (const result of answer.results) {
      expect(result).toMatchObject({ status: 'completed', output: expect.stringMatching(/\S/) });
      expect(Number.isInteger(result.tokensIn) && result.tokensIn > 0).toBe(true);
      expect(Number.isInteger(result.tokensOut) && result.tokensOut > 0).toBe(true);
      expect(Number.isInteger(result.latencyMs)).toBe(true);
      expect(result.providerCost).toBeGreaterThan(0);
    }
    const totalUsd = answer.results.reduce((sum: number, r: any) => sum + r.providerCost, 0);
    const charged = usdToMicroCredits(totalUsd, host.gateway.config);
    expect(answer.creditsUsed).toBe(charged / 1e6);
    expect(await balanceMicro()).toBe(before - charged);
  });

  it('sends every model to its provider concurrently', async () => {
    host.simulator.setLatency(300);
    const started = performance.now();
    const { status } = await post(host, body({ models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro', 'fam_d-4.3', 'fam_g-large'] }));
    const elapsed = performance.now() - started;
    expect(status).toBe(200);
    const calls = host.simulator.calls();
    expect(calls.map((c) => c.provider).sort()).toEqual(['anthropic', 'google', 'mistral', 'openai', 'xai']);
    // All five calls arrived before the first could have been answered.
    const arrivals = calls.map((c) => c.at);
    expect(Math.max(...arrivals) - Math.min(...arrivals)).toBeLessThan(300);
    expect(elapsed).toBeGreaterThanOrEqual(300);
  });

  it('tells OpenAI, Anthropic, xAI, Groq and Cerebras which account each call is for, streamed or not, and no other vendor', async () => {
    const models = ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro', 'fam_d-4.3', 'fam_i-gpt-oss-20b', 'fam_e-gpt-oss-120b', 'fam_g-large', 'fam_f-v4-flash', 'fam_h-pro'];
    const json = await post(host, body({ models }));
    const streamed = await fetch(`${host.url}/api/v1/prompt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body({ models })),
    });
    expect(await streamed.text()).toContain('event: done');
    await host.settled();
    expect([json.status, streamed.status]).toEqual([200, 200]);
    const calls = host.simulator.calls();
    expect(calls).toHaveLength(18);
    const endUser = (c: (typeof calls)[number]) => {
      const sent = c.body as { safety_identifier?: unknown; metadata?: { user_id?: unknown }; user?: unknown };
      return sent.safety_identifier ?? sent.metadata?.user_id ?? sent.user;
    };
    const told = ['openai', 'anthropic', 'xai', 'groq', 'cerebras'];
    for (const c of calls) expect([c.provider, endUser(c)]).toEqual([c.provider, told.includes(c.provider) ? host.demo.accountId : undefined]);
    expect(new Set(calls.map((c) => c.provider))).toEqual(new Set([...told, 'google', 'mistral', 'deepseek', 'bedrock']));
  });

  it('isolates a failing model: the others complete and only they are charged', async () => {
    host.simulator.setFault({ kind: 'status', status: 400, provider: 'anthropic' });
    const before = await balanceMicro();
    const { status, body: answer } = await post(host, body());
    expect(status).toBe(200);
    const [openai, anthropic, google] = answer.results;
    expect(openai.status).toBe('completed');
    expect(google.status).toBe('completed');
    expect(anthropic).toMatchObject({
      modelId: 'fam_a-opus-4-6',
      status: 'failed',
      output: '',
      tokensIn: 0,
      tokensOut: 0,
      providerCost: 0,
      error: { code: 'upstream_error', upstreamStatus: 400 },
    });
    expect(answer.creditsUsed).toBe(usdToMicroCredits(openai.providerCost + google.providerCost, host.gateway.config) / 1e6);
    expect(await balanceMicro()).toBe(before - Math.round(answer.creditsUsed * 1e6));
  });

  it('retries a 503 and completes within the attempt cap', async () => {
    host.simulator.setFault({ kind: 'status', status: 503, provider: 'openai', times: 2 });
    const { body: answer } = await post(host, body({ models: ['fam_c-5.4'] }));
    expect(answer.results[0].status).toBe('completed');
    expect(host.simulator.calls().filter((c) => c.provider === 'openai')).toHaveLength(3);
  });

  it('charges nothing when every model fails', async () => {
    host.simulator.setFault({ kind: 'status', status: 401 });
    const before = await balanceMicro();
    const { body: answer } = await post(host, body());
    expect(answer.results.every((r: any) => r.status === 'failed')).toBe(true);
    expect(answer.creditsUsed).toBe(0);
    expect(await balanceMicro()).toBe(before);
  });

  it('clamps maxTokens above a model maximum with a warning on that result', async () => {
    const { body: answer } = await post(host, body({ models: ['fam_h-micro', 'fam_c-5.4'], generation_settings: { maxTokens: 20_000 } }));
    expect(answer.results[0].warnings).toEqual([expect.stringMatching(/above fam_h-micro's maximum; 10000 was used/)]);
    expect(answer.results[1].warnings).toBeUndefined();
    const sent = host.simulator.calls().find((c) => c.protocol === 'bedrock-converse')!.body as { inferenceConfig: { maxTokens: number } };
    expect(sent.inferenceConfig.maxTokens).toBe(10_000);
  });

  it('says an output was cut at maxTokens in the same words for every vendor, and names the default it ran with where the request gave none', async () => {
    // One model of each wire protocol.
    const models = ['fam_c-5.4-mini', 'fam_a-haiku-4-5', 'fam_b-3.5-flash', 'fam_h-micro', 'fam_g-small'];
    const { body: cut } = await post(host, body({ models, generation_settings: { maxTokens: 16 } }));
    const said = /^(The output was cut at maxTokens|maxTokens was used up before any output: reasoning tokens count toward it)$/;
    for (const result of cut.results) expect([result.modelId, result.status, result.warnings]).toEqual([result.modelId, 'completed', [expect.stringMatching(said)]]);
    // No maxTokens: the catalog's default, which a long answer reaches (it said "cut at maxTokens", as though the caller had set it).
    const long = { type: 'object', properties: { answer: { type: 'string', minLength: 100_000 } }, required: ['answer'], additionalProperties: false };
    const { body: defaulted } = await post(host, body({ models: ['fam_g-small'], response_schema: long }));
    const sent = host.simulator.calls().at(-1)!.body as { max_tokens: number };
    expect(sent.max_tokens).toBe(resolveModel('fam_g-small')!.defaultMaxTokens);
    expect(defaulted.results[0].warnings).toContain(
      "The output was cut at maxTokens; it was fam_g-small's default of 4096, the request giving none (generation_settings.maxTokens may be up to 262144)",
    );
  });

  it('answers the time of each phase in a Server-Timing header: what the gateway added around the models', async () => {
    host.simulator.setLatency(120);
    const started = performance.now();
    const { status, headers } = await post(host, body({ models: ['fam_c-5.4', 'fam_a-opus-4-6'] }));
    const elapsed = performance.now() - started;
    expect(status).toBe(200);
    const phases = parseServerTiming(headers.get('server-timing'));
    // Settling follows the answer: it is no phase of it.
    expect(Object.keys(phases)).toEqual(['reserve', 'models', 'total']);
    expect(phases.models).toBeGreaterThanOrEqual(119);
    expect(phases.total).toBeGreaterThanOrEqual(phases.reserve! + phases.models! - 0.2);
    expect(phases.total).toBeLessThanOrEqual(elapsed);
  });

  it("serves the spec's legacy fam_b-3.1-flash with Gemini 3 Flash (Google has no 3.1 Flash text model), and says so on its result", async () => {
    const { status, body: answer } = await post(host, body({ models: ['fam_b-3.1-flash', 'fam_b-3.1-pro'] }));
    expect(status).toBe(200);
    expect(answer.results[0]).toMatchObject({
      modelId: 'fam_b-3.1-flash',
      status: 'completed',
      warnings: [expect.stringMatching(/no Gemini 3\.1 Flash text model; gemini-3-flash-preview/)],
    });
    expect(answer.results[1].warnings).toBeUndefined();
    expect(
      host.simulator
        .calls()
        .map((c) => c.model)
        .sort(),
    ).toEqual(['gemini-3-flash-preview', 'gemini-3.1-pro-preview']);
  });

  it('answers a retired ID with its successor, at its prices, and says so on its result', async () => {
    // OpenAI shut o3-mini down on 2026-10-23; gpt-5.4-mini answers it.
    const successor = resolveModel('fam_c-5.4-mini')!;
    const { status, body: answer } = await post(host, body({ models: ['o3-mini'], model_tuning: { 'o3-mini': { reasoningEffort: 'high' } } }));
    expect(status).toBe(200);
    const [result] = answer.results;
    expect(result).toMatchObject({
      modelId: 'o3-mini',
      status: 'completed',
      warnings: [expect.stringMatching(/^OpenAI shut o3-mini down on 2026-10-23; gpt-5\.4-mini \(fam_c-5\.4-mini\) answers/)],
    });
    const [call] = host.simulator.calls();
    expect(call!.model).toBe('gpt-5.4-mini');
    expect((call!.body as { reasoning?: unknown }).reasoning).toEqual({ effort: 'high' });
    expect(result.usage).toMatchObject({ cachedTokensIn: 0, cacheWriteTokensIn: 0 });
    expect(result.providerCost).toBeCloseTo((result.tokensIn * successor.prices.input + result.tokensOut * successor.prices.output) / 1e6, 12);
    expect(successor.prices.output).not.toBe(resolveModel('o3-mini', 0)!.prices.output);
  });

  it("prices a prompt above a model's long-context threshold at its long-context rates, all its tokens", async () => {
    // About 300,000 input tokens (a prompt and two earlier turns near their size limits): above
    // gpt-5.4's 272K threshold and grok-4.3's 200K; Sonnet 4.6 has one price up to 1M.
    const chunk = 'Part of a long document. '.repeat(16_000);
    const history = [
      { role: 'user', content: chunk },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: chunk },
      { role: 'assistant', content: 'Noted.' },
    ];
    const payload = body({ prompt: `${chunk} Summarise it all.`, history, models: ['fam_c-5.4', 'fam_d-4.3', 'fam_a-sonnet-4-6'], generation_settings: { maxTokens: 64 } });
    // Its reserve counts a token a byte (1.2 million), capped at each model's context: more than the demo account holds.
    await host.gateway.credits.topUp(host.demo.accountId, usdToMicroCredits(20, host.gateway.config));
    const { status, body: answer } = await post(host, payload);
    expect(status).toBe(200);
    // USD per million tokens (input, cached input, output), from the vendors' pages: gpt-5.4
    // and grok-4.3 at their long-context rates (twice their base input price), Sonnet 4.6 at its one price.
    const rates = [
      [5, 0.5, 22.5],
      [2.5, 0.4, 5],
      [3, 0.3, 15],
    ];
    answer.results.forEach((result: { tokensIn: number; tokensOut: number; providerCost: number; usage: { cachedTokensIn: number } }, i: number) => {
      const [input, cached, output] = rates[i]!;
      const { cachedTokensIn } = result.usage;
      expect(result.tokensIn).toBeGreaterThan(272_000);
      expect(result.providerCost).toBeCloseTo(((result.tokensIn - cachedTokensIn) * input! + cachedTokensIn * cached! + result.tokensOut * output!) / 1e6, 9);
    });
    expect(resolveModel('fam_c-5.4')!.prices.longContext!.input).toBe(2 * resolveModel('fam_c-5.4')!.prices.input);
  });

  it('prices DeepSeek by the time of day: half its listed (peak) rates outside 01-04 and 06-10 UTC on weekdays', async () => {
    const peakHour = (at: number) => [1, 2, 3, 4, 5].includes(new Date(at).getUTCDay()) && [1, 2, 3, 6, 7, 8, 9].includes(new Date(at).getUTCHours());
    const before = Date.now();
    const { body: answer } = await post(host, body({ models: ['fam_f-v4-pro'] }));
    const after = Date.now();
    const [result] = answer.results;
    const { prices } = resolveModel('fam_f-v4-pro')!;
    const uncached = result.tokensIn - result.usage.cachedTokensIn;
    const atPeak = (uncached * prices.input + result.usage.cachedTokensIn * prices.cachedInput! + result.tokensOut * prices.output) / 1e6;
    const possible = new Set([peakHour(before), peakHour(after)].map((peak) => (peak ? atPeak : atPeak / 2)));
    expect([...possible].some((cost) => Math.abs(cost - result.providerCost) < 1e-12)).toBe(true);
    expect(answer.creditsUsed).toBe(usdToMicroCredits(result.providerCost, host.gateway.config) / 1e6);
  });

  it('passes attachments to the models that take them', async () => {
    const { status, body: answer } = await post(host, body({ models: ['fam_c-5.4'], attachments: [{ name: 'a.png', type: 'image/png', base64: PNG_BASE64 }] }));
    expect(status).toBe(200);
    expect(answer.results[0].status).toBe('completed');
    expect(JSON.stringify(host.simulator.calls()[0]!.body)).toContain(PNG_BASE64);
  });

  it("answers text a strict JSON reader takes when a vendor's output holds half a surrogate pair, in its text or in JSON it wrote (U+FFFD in its place)", async () => {
    // The vendor's JSON sends a lone \ud800 in its output, and the output's own JSON writes one (\\udc00) in a value.
    const output = 'caf\ud800 {"a": "b\\udc00"}';
    host.simulator.setFault({
      kind: 'status',
      status: 200,
      provider: 'cerebras',
      body: chatCompletionAnswer(output, { prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 }),
    });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const response = await fetch(`${host.url}/api/v1/prompt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body({ models: ['fam_e-gpt-oss-120b', 'fam_k-8b'], response_schema: schema })),
    });
    const text = await response.text();
    await host.settled();
    expect(response.status, text).toBe(200);
    // No \udXXX escape (JSON.stringify's spelling of half a pair) whose backslash is not itself escaped.
    expect(/(?<!\\)(?:\\\\)*\\ud[89a-f]/i.test(text)).toBe(false);
    const answer = JSON.parse(text);
    expect(answer.results.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed']);
    expect(answer.results[0].output).toBe('caf\ufffd {"a": "b\\udc00"}');
    expect(answer.results[0].structuredOutput).toEqual({ conforms: true, value: { a: 'b\ufffd' } });
    // The prompt log keeps the output as the answer gave it.
    const log = await host.gateway.promptLogs.get(answer.promptLogId);
    expect(log?.content?.outputs[0]?.output).toBe('caf\ufffd {"a": "b\\udc00"}');
  });
});

describe('Prompt log', () => {
  it('keeps metadata and content by default', async () => {
    const marker = `marker-${Date.now()}`;
    const { body: answer } = await post(host, body({ prompt: `Tell me about ${marker}`, system_prompt: `sys ${marker}` }));
    const log = await host.gateway.promptLogs.get(answer.promptLogId);
    expect(log).toMatchObject({
      promptLogId: answer.promptLogId,
      accountId: host.demo.accountId,
      zeroDataRetention: false,
      creditsUsedMicro: Math.round(answer.creditsUsed * 1e6),
    });
    expect(log!.models.map((m) => m.modelId)).toEqual(['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro']);
    expect(log!.content?.prompt).toContain(marker);
    expect(log!.content?.systemPrompt).toBe(`sys ${marker}`);
    expect(log!.content?.outputs.map((o) => o.output)).toEqual(answer.results.map((r: any) => r.output));
  });

  it('keeps at most UNCHARGED_CONTENT_BYTES of content for a request charged nothing, and says how much it left out', async () => {
    const large = `${'filler '.repeat(6_000)}end`;
    // Every model refused, free (as a vendor refuses an input past its context window).
    host.simulator.setFault({ kind: 'status', status: 400, body: { error: { message: 'context_length_exceeded' } } });
    const free = await post(host, body({ prompt: large }));
    const small = await post(host, body({ prompt: 'A short prompt' }));
    host.simulator.reset();
    for (const answer of [free, small]) {
      expect(answer.body.creditsUsed).toBe(0);
      expect(answer.body.results.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed', 'failed']);
    }
    const freeLog = await host.gateway.promptLogs.get(free.body.promptLogId);
    expect(freeLog?.content).toBeUndefined();
    expect(freeLog?.contentLeftOutBytes).toBeGreaterThan(UNCHARGED_CONTENT_BYTES);
    expect(freeLog?.models).toHaveLength(3);
    // A small one is kept whole, as a request that pays is, however large.
    expect((await host.gateway.promptLogs.get(small.body.promptLogId))?.content?.prompt).toBe('A short prompt');
    const paid = await post(host, body({ prompt: large }));
    expect(paid.body.creditsUsed).toBeGreaterThan(0);
    const paidLog = await host.gateway.promptLogs.get(paid.body.promptLogId);
    expect(paidLog?.content?.prompt).toBe(large);
    expect(paidLog?.contentLeftOutBytes).toBeUndefined();
  });

  it('keeps no prompt, system prompt, history or output under zero data retention', async () => {
    const marker = `zdr-${Date.now()}`;
    const { body: answer } = await post(
      host,
      body({
        prompt: `secret ${marker}`,
        system_prompt: `system ${marker}`,
        history: [{ role: 'user', content: `history ${marker}` }],
        zero_data_retention: true,
      }),
    );
    const log = await host.gateway.promptLogs.get(answer.promptLogId);
    expect(log?.zeroDataRetention).toBe(true);
    expect(log?.content).toBeUndefined();
    expect(log?.models).toHaveLength(3);
    // Nothing in the whole table holds the marker or an output.
    const scan = await host.gateway.storeClient.documents.send(new ScanCommand({ TableName: host.gateway.config.tables.promptLogs }));
    const everything = JSON.stringify(scan.Items, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
    expect(everything).not.toContain(marker);
    for (const result of answer.results) expect(everything).not.toContain(result.output);
  });

  it('follows the account preference when the request does not say', async () => {
    const account = await host.gateway.credits.openAccount({ balanceMicro: 1_000_000_000, zeroDataRetention: true });
    const { generateApiKey, hashApiKey, keyPrefix } = await import('../../shared/auth/keys.js');
    const key = generateApiKey();
    await host.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId: account.accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
    const { body: answer } = await post(host, body(), { authorization: `Bearer ${key}` });
    expect((await host.gateway.promptLogs.get(answer.promptLogId))?.content).toBeUndefined();
    const overridden = await post(host, body({ zero_data_retention: false }), { authorization: `Bearer ${key}` });
    expect((await host.gateway.promptLogs.get(overridden.body.promptLogId))?.content?.prompt).toBe('Compare these models');
  });

  it('stores content larger than one DynamoDB item in parts', async () => {
    const prompt = 'x'.repeat(450_000);
    const { status, body: answer } = await post(host, body({ prompt, models: ['fam_c-5.4'] }));
    expect(status).toBe(200);
    const log = await host.gateway.promptLogs.get(answer.promptLogId);
    expect(log?.content?.prompt).toBe(prompt);
  });
});

const object = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
const MODELS = ['fam_c-5.4', 'fam_k-8b'];

describe('POST /api/v1/prompt with a hostile response_schema', () => {
  // Issue 17: a caller's schema must not hold the gateway's thread. The simulator answers
  // every model with the schema's `const`, so the model output here is chosen by the test.
  it('checks a 10,000-character output that a backtracking regex would never finish, for every model', async () => {
    // Prepare: V8's engine tries 2^9,999 ways through (a+)+ before the second alternative; RE2 reads the output once.
    const adversarial = `${'a'.repeat(9_999)}!`;
    const schema = object({ x: { type: 'string', pattern: '^(a+)+$|!$', const: adversarial } });

    // Act
    const answer = await post(host, body({ models: MODELS, response_schema: schema }));

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.body.results).toHaveLength(MODELS.length);
    for (const result of answer.body.results) {
      expect(result.status, result.modelId).toBe('completed');
      expect(result.structuredOutput, result.modelId).toEqual({ conforms: true, value: { x: adversarial } });
    }
  });

  it("checks each output with the schema compiled for the request's account", async () => {
    const schema = object({ x: { type: 'string', const: 'scoped' } });
    const checks = vi.spyOn(schemaChecker(), 'check');
    try {
      const answer = await post(host, body({ models: MODELS, response_schema: schema }));
      expect(answer.status).toBe(200);
      expect(checks.mock.calls.length).toBe(MODELS.length);
      for (const call of checks.mock.calls) expect(call[2]).toBe(host.demo.accountId);
    } finally {
      checks.mockRestore();
    }
  });

  it('checks outputs on a new schema thread after the last one was ended: the next request is answered and checked', async () => {
    const schema = object({ x: { type: 'string', const: 'restarted' } });
    const first = await post(host, body({ models: MODELS, response_schema: schema }));
    const thread = schemaChecker();
    const started = thread.started;

    await thread.close();
    const answer = await post(host, body({ models: MODELS, response_schema: schema }));

    expect(first.status).toBe(200);
    expect(answer.status).toBe(200);
    expect(thread.started).toBe(started + 1);
    for (const result of answer.body.results) expect(result.structuredOutput, result.modelId).toEqual({ conforms: true, value: { x: 'restarted' } });
  });

  it.each([
    ['a backreference', object({ x: { type: 'string', pattern: '^(a)\\1$' } }), '/response_schema/properties/x/pattern', 'linear time'],
    [
      'a lookahead in patternProperties',
      { type: 'object', patternProperties: { '^(?=x)': {} }, additionalProperties: false },
      '/response_schema/patternProperties/^(?=x)',
      'linear time',
    ],
    // The main thread's checks pass it (an object root, closed); ajv refuses it on the schema thread.
    ['a type JSON Schema does not have', object({ x: { type: 'strin' } }), '/response_schema', 'is not a valid JSON Schema'],
    [
      'more objects than the limit',
      object(Object.fromEntries(Array.from({ length: LIMITS.responseSchemaObjects }, (_, i) => [`p${i}`, { type: 'string' }]))),
      '/response_schema',
      `the limit is ${LIMITS.responseSchemaObjects}`,
    ],
  ])('refuses %s with a 400 naming the field, before any provider call or charge', async (_name, schema, field, message) => {
    const before = await balanceMicro();

    const answer = await post(host, body({ models: MODELS, response_schema: schema }));

    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_request');
    expect(answer.body.error.details).toEqual([{ field, message: expect.stringContaining(message) }]);
    expect(host.simulator.calls()).toHaveLength(0);
    expect(await balanceMicro()).toBe(before);
  });
});
