import { describe, expect, it } from 'vitest';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { planCall } from '../../shared/compare/model-call.js';
import { judgeCall } from '../../shared/judging/judge-prompt.js';
import { inputTokenBound, OUTPUT_TOLERANCE_TOKENS, outputTokenBound } from '../../shared/pricing/bound.js';
import { estimateMicroCredits } from '../support/model-calls.js';

describe('Function: estimateMicroCredits with cache breakpoints', () => {
  const RATES = { creditsPerUsd: 100, markup: 1 };
  const request = (system: unknown, prompt: string, history?: unknown) =>
    validatePromptRequest({ prompt, system_prompt: system, ...(history ? { history } : {}), models: ['fam_a-sonnet-4-6'], generation_settings: { maxTokens: 16 } });
  const marked = (text: string) => [{ type: 'text', text, cache_control: { type: 'ephemeral' } }];

  it('prices the prefix up to the last breakpoint at the cache-write price (1.25 times input on Anthropic), and no more', () => {
    const document = 'x'.repeat(40_000); // 40,000 tokens at most: a token a byte
    const plain = estimateMicroCredits(request(document, 'Summarise.'), RATES);
    const cached = estimateMicroCredits(request(marked(document), 'Summarise.'), RATES);
    // 40,000 tokens and the 512 of framing a vendor may add x (3.75 - 3) USD per million x 100 credits per USD.
    expect(cached - plain).toBe((40_000 + 512) * 0.75 * 100);
    // A long prompt after a tiny marked block is not written to cache: it stays at the input price (the block and the framing
    // are held at the write price, not the 400,000 bytes after them, which would add 30,000,000).
    const longPrompt = 'y'.repeat(400_000);
    expect(estimateMicroCredits(request(marked('Be brief.'), longPrompt), RATES) - estimateMicroCredits(request('Be brief.', longPrompt), RATES)).toBeLessThan(
      (100 + 512) * 0.75 * 100,
    );
    // A breakpoint in the history covers the system prompt and the turns up to it.
    const history = [
      { role: 'user', content: 'z'.repeat(4_000), cache_control: { type: 'ephemeral' } },
      { role: 'assistant', content: 'w'.repeat(4_000) },
    ];
    const withHistory = estimateMicroCredits(request(document, 'Go on.', history), RATES);
    const withoutMark = estimateMicroCredits(
      request(
        document,
        'Go on.',
        history.map(({ role, content }) => ({ role, content })),
      ),
      RATES,
    );
    // Each estimate is rounded up: a micro-credit either way.
    expect(Math.abs(withHistory - withoutMark - (40_000 + 4_000 + 4 + 512) * 0.75 * 100)).toBeLessThanOrEqual(1);
  });

  it('reserves a request above a long-context threshold at the long-context rates', () => {
    const long = (models: string[]) =>
      validatePromptRequest({
        prompt: 'x'.repeat(120_000),
        history: [
          { role: 'user', content: 'y'.repeat(120_000) },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'z'.repeat(60_000) },
        ],
        models,
        generation_settings: { maxTokens: 16 },
      });
    // About 300,000 input tokens at most (a token a byte): gpt-5.4 at $5 a million above 272K, not $2.50.
    expect(estimateMicroCredits(long(['fam_c-5.4']), RATES)).toBeGreaterThan(300_000 * 5 * 100);
    expect(estimateMicroCredits(long(['fam_a-sonnet-4-6']), RATES)).toBeLessThan(301_000 * 3 * 100 + 16 * 15 * 100);
  });

  it('counts a token a UTF-8 byte, the most any tokenizer makes of a text: 3 a Chinese character', () => {
    const estimate = (text: string) => estimateMicroCredits(validatePromptRequest({ prompt: `Q${text}`, models: ['fam_c-5.4'], generation_settings: { maxTokens: 16 } }), RATES);
    const base = estimate('123');
    // 400 ASCII characters: 400 tokens; 400 Chinese characters: 1,200 (at $2.50 a million, 100 credits a USD). Each estimate is rounded up: a micro-credit either way.
    expect(Math.abs(estimate(`123${'a'.repeat(400)}`) - base - 400 * 2.5 * 100)).toBeLessThanOrEqual(1);
    expect(Math.abs(estimate(`123${'文'.repeat(400)}`) - base - 1_200 * 2.5 * 100)).toBeLessThanOrEqual(1);
    // 480,000 Chinese characters (under the 500,000-character prompt limit) are above gpt-5.4's 272K long-context threshold.
    expect(estimate('文'.repeat(480_000))).toBeGreaterThan(480_000 * 5 * 100);
  });

  it('leaves models whose cache writes cost no more than input at the input price', () => {
    const body = (system: unknown) => validatePromptRequest({ prompt: 'Hi.', system_prompt: system, models: ['fam_c-5.4'] });
    expect(estimateMicroCredits(body(marked('x'.repeat(40_000))), RATES)).toBe(estimateMicroCredits(body('x'.repeat(40_000)), RATES));
  });
});

describe('Function: estimateMicroCredits of a judged request', () => {
  const RATES = { creditsPerUsd: 100, markup: 1 };
  const prompt = 'Compare two ways to cache HTTP responses.';
  // Two chat models that send maxTokens as it is (no reasoning), and the judge.
  const models = ['fam_g-large', 'fam_k-8b'];
  const judged = validatePromptRequest({ prompt, models, judges: ['fam_c-4.1'], generation_settings: { maxTokens: 300 } });
  /** Micro-credits of a call's bound, rounded up as the estimate rounds each call: prices are USD a million tokens. */
  const micro = (prices: { input: number; output: number }, inputTokens: number, outputTokens: number) =>
    Math.ceil((inputTokens * prices.input + outputTokens * prices.output) * RATES.creditsPerUsd);

  it("reserves each model's call and, beside them, both judge calls: each shown the longest answer either model can give", () => {
    // Each model's part, counted by hand: the prompt's bytes, 4 tokens for its turn and the 512 a vendor may add in; the
    // 300 tokens it is sent and the 16 above them a vendor may report out (OUTPUT_TOLERANCE_TOKENS).
    const promptTokens = Buffer.byteLength(prompt, 'utf8') + 4 + 512;
    const modelsPart = judged.models.reduce((sum, model) => sum + micro(model.entry.prices, promptTokens, 300 + OUTPUT_TOLERANCE_TOKENS), 0);
    // Each of the judge's 2 calls (one per order): what the judge is shown but the answers, both answers at their 300
    // tokens, and the verdict's output bound, at the judge's prices.
    const frame = judgeCall(judged, judged.judges[0]!, '', '').call;
    const judgeCallMicro = micro(frame.entry.prices, inputTokenBound(frame) + 300 + 300, outputTokenBound(frame) + OUTPUT_TOLERANCE_TOKENS);
    expect(judgeCallMicro).toBeGreaterThan(0);
    // Each call's bound is rounded up on its own: a micro-credit a call either way (4 calls).
    expect(Math.abs(estimateMicroCredits(judged, RATES) - (modelsPart + 2 * judgeCallMicro))).toBeLessThanOrEqual(4);
    // The models' part is what the same request reserves unjudged.
    const unjudged = validatePromptRequest({ prompt, models, generation_settings: { maxTokens: 300 } });
    expect(estimateMicroCredits(unjudged, RATES)).toBe(modelsPart);
  });
});

describe('Function: planCall, cache breakpoints under the cache minimum', () => {
  const marked = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
  const warningsOf = (model: string, system: unknown[], history?: unknown[]) => {
    const request = validatePromptRequest({ prompt: 'Go on.', system_prompt: system, ...(history ? { history } : {}), models: [model] });
    return planCall(request, request.models[0]!).warnings;
  };

  it("flags each breakpoint whose prefix is under the model's minimum, where the breakpoint is sent: the vendor ignores it silently", () => {
    // Haiku 4.5: 4,096 tokens; about 1,000 here (4,000 characters) at the first breakpoint, about 3,000 at the second
    // (which Anthropic's own minimum for Haiku 4.5 leaves uncached too, where spec 2.9's 2,048 would not).
    const warnings = warningsOf(
      'fam_a-haiku-4-5',
      [marked('a'.repeat(4_000)), { type: 'text', text: 'b'.repeat(4_000) }],
      [
        { role: 'user', content: 'c'.repeat(4_000), cache_control: { type: 'ephemeral' } },
        { role: 'assistant', content: 'Noted.' },
      ],
    );
    expect(warnings).toEqual([
      "The cache_control breakpoint on system block 1 closes a prefix of about 1000 tokens, under fam_a-haiku-4-5's cache minimum of 4096: sent, but the vendor caches nothing there",
      "The cache_control breakpoint on history turn 1 closes a prefix of about 3004 tokens, under fam_a-haiku-4-5's cache minimum of 4096: sent, but the vendor caches nothing there",
    ]);
    // Sonnet-class: 1,024; Nova (Bedrock cache points): 1,000.
    expect(warningsOf('fam_a-sonnet-4-6', [marked('a'.repeat(4_000))])).toEqual([expect.stringContaining('under fam_a-sonnet-4-6')]);
    expect(warningsOf('fam_a-sonnet-4-6', [marked('a'.repeat(8_000))])).toEqual([]);
    // Opus 4.7 caches nothing under 4,096 either, as Opus 4.6: about 2,000 tokens is flagged (the catalog had its minimum at 1,024).
    expect(warningsOf('fam_a-opus-4-7', [marked('a'.repeat(8_000))])).toEqual([expect.stringContaining("under fam_a-opus-4-7's cache minimum of 4096")]);
    expect(warningsOf('fam_h-lite', [marked('Be brief.')])).toEqual([expect.stringContaining("fam_h-lite's cache minimum of 1000")]);
  });

  it("counts other alphabets' letters 4 a token for the warning, as ASCII's: a Russian prefix of about 1,300 tokens is flagged under a 4,096 minimum (counted a token a letter, it had not been); Chinese about a token a character", () => {
    const russian = 'Привет, это пример текста на русском языке для проверки подсчёта токенов. '.repeat(69);
    expect(warningsOf('fam_a-opus-4-6', [marked(russian)])).toEqual([
      expect.stringMatching(/closes a prefix of about 1\d{3} tokens, under fam_a-opus-4-6's cache minimum of 4096/),
    ]);
    // Past the minimum by this count: no warning.
    expect(warningsOf('fam_a-opus-4-6', [marked(russian.repeat(4))])).toEqual([]);
    // Chinese, Japanese and Korean characters a token each: 5,000 of them are past 4,096.
    expect(warningsOf('fam_a-opus-4-6', [marked('这是一个用于测试的中文句子。'.repeat(360))])).toEqual([]);
  });

  it("counts the response schema's instruction in the prefix of a history breakpoint on a model it goes to as a system block (Anthropic's)", () => {
    // About 900 tokens of history: under Sonnet's 1,024 alone, over it with a schema instruction of about 300 tokens before it.
    const history = [{ role: 'user', content: 'c'.repeat(3_600), cache_control: { type: 'ephemeral' } }];
    const schema = { type: 'object', description: 'd'.repeat(1_200), properties: {}, additionalProperties: false };
    const warningsWith = (responseSchema?: object) => {
      const request = validatePromptRequest({ prompt: 'Go on.', history, models: ['fam_a-sonnet-4-6'], ...(responseSchema ? { response_schema: responseSchema } : {}) });
      return planCall(request, request.models[0]!).warnings.filter((warning) => warning.includes('cache minimum'));
    };
    expect(warningsWith()).toEqual([expect.stringContaining('history turn 1 closes a prefix of about 904 tokens')]);
    expect(warningsWith(schema)).toEqual([]);
  });

  it('flags a Nova breakpoint that comes fewer than its minimum tokens after the one before it: Bedrock wants each its own', () => {
    const system = [marked('a'.repeat(8_000))];
    const history = [{ role: 'user', content: 'short turn', cache_control: { type: 'ephemeral' } }];
    expect(warningsOf('fam_h-lite', system, history)).toEqual([
      "The cache_control breakpoint on history turn 1 comes about 7 tokens after the one on system block 1, under fam_h-lite's cache minimum of 1000 between breakpoints: sent, but the vendor caches nothing there",
    ]);
    // Anthropic counts the whole prefix: the second breakpoint caches.
    expect(warningsOf('fam_a-sonnet-4-6', system, history)).toEqual([]);
  });

  it('says nothing of it where caching is automatic, or where the breakpoint is not sent (Gemini says that instead)', () => {
    expect(warningsOf('fam_c-5.4', [marked('Be brief.')])).toEqual([]);
    expect(warningsOf('fam_b-3.1-pro', [marked('Be brief.')]).filter((warning) => warning.includes('cache minimum'))).toEqual([]);
  });
});
