import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../../shared/catalog/types.js';
import { chargeCall } from '../../../shared/pricing/charge.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { fromErrorResponse, parseDuration, retryDelayOf } from '../../../shared/providers/gemini-generate-content/errors.js';
import { toGenerateContentRequest } from '../../../shared/providers/gemini-generate-content/request.js';
import { fromGenerateContentResponse } from '../../../shared/providers/gemini-generate-content/response.js';
import { GenerateContentStream } from '../../../shared/providers/gemini-generate-content/stream.js';
import { undocumentedUses, unenforcedKeywords } from '../../../shared/providers/gemini-generate-content/schema.js';
import { levelForBudget, thinkingLevelsOf, toThinkingConfig } from '../../../shared/providers/gemini-generate-content/thinking.js';
import { generateContentUrl } from '../../../shared/providers/gemini-generate-content/index.js';
import { toUsage } from '../../../shared/providers/gemini-generate-content/usage.js';
import { schemaInstruction } from '../../../shared/providers/structured-output.js';
import type { ModelCall } from '../../../shared/providers/types.js';
import { catalogEntry as entry, thrownUpstream as thrown, modelCall } from '../../support/model-calls.js';
function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../fixtures/gemini-generate-content/${name}.json`, import.meta.url), 'utf8')) as unknown;
}

function fixtureText(name: string): string {
  return readFileSync(new URL(`../../fixtures/gemini-generate-content/${name}.json`, import.meta.url), 'utf8');
}

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return modelCall('fam_b-3.5-flash', overrides);
}

const SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
  },
  required: ['verdict', 'confidence'],
  additionalProperties: false,
};

describe('Function: toGenerateContentRequest', () => {
  it('maps the prompt alone to one user turn with the output limit and nothing else', () => {
    const { body, warnings } = toGenerateContentRequest(call());

    expect(body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Compare two ways to cache HTTP responses.' }] }],
      generationConfig: { maxOutputTokens: 4096 },
    });
    expect(warnings).toEqual([]);
  });

  it('maps each system block to one part of systemInstruction', () => {
    const { body } = toGenerateContentRequest(
      call({
        system: [
          { type: 'text', text: 'You are concise.' },
          { type: 'text', text: 'Answer in English.' },
        ],
      }),
    );

    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You are concise.' }, { text: 'Answer in English.' }] });
  });

  it('maps history with assistant as model and keeps the prompt as the last user turn', () => {
    const { body } = toGenerateContentRequest(
      call({
        history: [
          { role: 'user', content: 'What is a CDN?' },
          { role: 'assistant', content: 'A content delivery network.' },
        ],
      }),
    );

    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'What is a CDN?' }] },
      { role: 'model', parts: [{ text: 'A content delivery network.' }] },
      { role: 'user', parts: [{ text: 'Compare two ways to cache HTTP responses.' }] },
    ]);
  });

  it('merges consecutive turns of one role into one content of several parts, the prompt included', () => {
    const { body } = toGenerateContentRequest(
      call({
        history: [
          { role: 'assistant', content: 'Hello, how can I help?' },
          { role: 'assistant', content: 'I know about caching.' },
          { role: 'user', content: 'What is a CDN?' },
        ],
      }),
    );

    expect(body.contents).toEqual([
      { role: 'model', parts: [{ text: 'Hello, how can I help?' }, { text: 'I know about caching.' }] },
      { role: 'user', parts: [{ text: 'What is a CDN?' }, { text: 'Compare two ways to cache HTTP responses.' }] },
    ]);
  });

  it('maps an image and a PDF to inlineData parts before the prompt text', () => {
    const { body, warnings } = toGenerateContentRequest(
      call({
        attachments: [
          { name: 'chart.png', type: 'image/png', base64: 'iVBORw0KGgo=' },
          { name: 'report.pdf', type: 'application/pdf', base64: 'JVBERi0xLjQ=' },
        ],
      }),
    );

    expect(body.contents.at(-1)).toEqual({
      role: 'user',
      parts: [
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
        { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLjQ=' } },
        { text: 'Compare two ways to cache HTTP responses.' },
      ],
    });
    expect(warnings).toEqual([]);
  });

  it('leaves a GIF out with a warning, since Gemini does not read GIF', () => {
    const { body, warnings } = toGenerateContentRequest(call({ attachments: [{ name: 'anim.gif', type: 'image/gif', base64: 'R0lGODlh' }] }));

    expect(body.contents.at(-1)?.parts).toEqual([{ text: 'Compare two ways to cache HTTP responses.' }]);
    expect(warnings).toEqual(['The attachment anim.gif was not sent: Gemini does not accept image/gif']);
  });

  it('maps temperature, topP and maxTokens under generationConfig', () => {
    const { body } = toGenerateContentRequest(call({ temperature: 0.4, topP: 0.9, maxTokens: 1234 }));

    expect(body.generationConfig).toEqual({ temperature: 0.4, topP: 0.9, maxOutputTokens: 1234 });
  });

  it('warns that cache_control breakpoints have no Gemini equivalent', () => {
    const { body, warnings } = toGenerateContentRequest(call({ system: [{ type: 'text', text: 'Long manual.', cache_control: { type: 'ephemeral' } }] }));

    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Long manual.' }] });
    expect(warnings).toEqual(['Gemini has no cache_control breakpoints; they were ignored (use model_tuning.cachedContent)']);
  });

  describe('tuning', () => {
    it.each<[string, string, number, string, string]>([
      [
        '0 on a Flash model',
        'fam_b-3.5-flash',
        0,
        'minimal',
        "gemini-3.5-flash cannot turn thinking off; thinkingBudget 0 was sent as thinkingLevel 'minimal', which may still think a little",
      ],
      ['0 on the Pro model', 'fam_b-3.1-pro', 0, 'low', "gemini-3.1-pro-preview cannot turn thinking off; thinkingBudget 0 was sent as its lowest thinkingLevel 'low'"],
      ['512', 'fam_b-3.1-flash-lite', 512, 'low', "gemini-3.1-flash-lite takes a thinking level, not a token budget; thinkingBudget 512 was sent as thinkingLevel 'low'"],
      ['4096', 'fam_b-3.1-pro', 4096, 'medium', "gemini-3.1-pro-preview takes a thinking level, not a token budget; thinkingBudget 4096 was sent as thinkingLevel 'medium'"],
      ['24576', 'fam_b-3.5-flash', 24576, 'high', "gemini-3.5-flash takes a thinking level, not a token budget; thinkingBudget 24576 was sent as thinkingLevel 'high'"],
    ])('sends thinkingBudget %s of %s as thinkingConfig.thinkingLevel, with a warning', (_label, id, budget, level, warning) => {
      const { body, warnings } = toGenerateContentRequest(call({ entry: entry(id), tuning: { thinkingBudget: budget } }));

      expect(body.generationConfig.thinkingConfig).toEqual({ thinkingLevel: level });
      expect(warnings).toEqual([warning]);
    });

    it('sends no thinkingConfig when no budget is given (the model default applies)', () => {
      expect(toGenerateContentRequest(call({ entry: entry('fam_b-3.1-pro') })).body.generationConfig.thinkingConfig).toBeUndefined();
    });

    it('maps webSearch to the google_search tool', () => {
      const { body, warnings } = toGenerateContentRequest(call({ tuning: { webSearch: true } }));

      expect(body.tools).toEqual([{ google_search: {} }]);
      expect(warnings).toEqual([]);
    });

    it('sends no tool when webSearch is false', () => {
      expect(toGenerateContentRequest(call({ tuning: { webSearch: false } })).body.tools).toBeUndefined();
    });

    it('maps cachedContent to the top-level field', () => {
      const { body, warnings } = toGenerateContentRequest(call({ tuning: { cachedContent: 'cachedContents/abc123' } }));

      expect(body.cachedContent).toBe('cachedContents/abc123');
      expect(warnings).toEqual([]);
    });

    it('drops systemInstruction and tools with warnings when cachedContent is set (Gemini rejects them together)', () => {
      const { body, warnings } = toGenerateContentRequest(
        call({ system: [{ type: 'text', text: 'You are concise.' }], tuning: { cachedContent: 'cachedContents/abc123', webSearch: true } }),
      );

      expect(body.cachedContent).toBe('cachedContents/abc123');
      expect(body.systemInstruction).toBeUndefined();
      expect(body.tools).toBeUndefined();
      expect(warnings).toEqual([
        'The system prompt was not sent: with cachedContent, Gemini takes the system instruction stored in the cache',
        'webSearch was not enabled: with cachedContent, Gemini takes the tools stored in the cache',
      ]);
    });
  });

  describe('structured output', () => {
    it('enforces the schema natively with responseMimeType and responseJsonSchema, unchanged', () => {
      const { body, warnings } = toGenerateContentRequest(call({ responseSchema: SCHEMA }));

      expect(body.generationConfig).toEqual({ maxOutputTokens: 4096, responseMimeType: 'application/json', responseJsonSchema: SCHEMA });
      expect(body.systemInstruction).toBeUndefined();
      expect(warnings).toEqual([]);
    });

    it('combines the native schema with google_search on Gemini 3 models', () => {
      const { body, warnings } = toGenerateContentRequest(call({ responseSchema: SCHEMA, tuning: { webSearch: true } }));

      expect(body.generationConfig.responseJsonSchema).toEqual(SCHEMA);
      expect(body.tools).toEqual([{ google_search: {} }]);
      expect(warnings).toEqual([]);
    });

    it('falls back to the instruction on a pre-3 model asked for search and a schema together', () => {
      const { body, warnings } = toGenerateContentRequest(call({ entry: entry('fam_b-2.5-flash'), responseSchema: SCHEMA, tuning: { webSearch: true } }));

      expect(body.generationConfig.responseJsonSchema).toBeUndefined();
      expect(body.generationConfig.responseMimeType).toBeUndefined();
      expect(body.systemInstruction).toEqual({ parts: [{ text: schemaInstruction(SCHEMA) }] });
      expect(warnings).toEqual(['gemini-2.5-flash cannot combine Google Search with a response schema; the schema was sent as an instruction']);
    });

    it('appends the instruction to the system parts for a model without native enforcement', () => {
      const instructionOnly: ModelEntry = { ...entry('fam_b-3.5-flash'), capabilities: { ...entry('fam_b-3.5-flash').capabilities, structuredOutput: 'instruction' } };
      const { body } = toGenerateContentRequest(call({ entry: instructionOnly, system: [{ type: 'text', text: 'Be brief.' }], responseSchema: SCHEMA }));

      expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: schemaInstruction(SCHEMA) }] });
      expect(body.generationConfig.responseJsonSchema).toBeUndefined();
    });

    it('puts the instruction into the prompt turn when cachedContent forbids a system instruction', () => {
      const instructionOnly: ModelEntry = { ...entry('fam_b-3.5-flash'), capabilities: { ...entry('fam_b-3.5-flash').capabilities, structuredOutput: 'instruction' } };
      const { body } = toGenerateContentRequest(call({ entry: instructionOnly, responseSchema: SCHEMA, tuning: { cachedContent: 'cachedContents/abc' } }));

      expect(body.systemInstruction).toBeUndefined();
      expect(body.contents.at(-1)?.parts).toEqual([{ text: `Compare two ways to cache HTTP responses.\n\n${schemaInstruction(SCHEMA)}` }]);
    });

    it('warns about schema keywords Gemini does not enforce', () => {
      const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]+$', minLength: 2 } }, required: ['code'], additionalProperties: false };
      const { warnings } = toGenerateContentRequest(call({ responseSchema: schema }));

      expect(warnings).toEqual(['Gemini does not enforce the schema keywords minLength, pattern; the output is validated against them afterwards']);
    });

    it('warns where the schema departs from what Gemini documents: a $ref beside other keywords, an enum of booleans or null; not a $ref beside $-keywords', () => {
      const schema = {
        type: 'object',
        properties: { a: { $ref: '#/$defs/x', description: 'the x' }, b: { enum: [true, false, null] }, c: { $ref: '#/$defs/x', $comment: 'fine' } },
        required: ['a', 'b', 'c'],
        additionalProperties: false,
        $defs: { x: { type: 'string', enum: ['x', 1] } },
      };
      const { warnings } = toGenerateContentRequest(call({ responseSchema: schema }));

      expect(warnings).toContain(
        'Gemini documents no support for $ref beside other keywords or enum values other than strings and numbers in a response schema: it may refuse the schema or not enforce it; the output is validated against it afterwards',
      );
      expect(undocumentedUses({ type: 'object', properties: { c: { $ref: '#/$defs/x', $comment: 'fine' } }, $defs: { x: { enum: ['x', 1] } } })).toEqual([]);
    });
  });
});

describe('Function: toThinkingConfig', () => {
  it('passes the budget through for a model that takes budgets (Gemini 2.5)', () => {
    expect(toThinkingConfig('gemini-2.5-flash', 0)).toEqual({ config: { thinkingBudget: 0 } });
    expect(toThinkingConfig('gemini-2.5-flash', 2048)).toEqual({ config: { thinkingBudget: 2048 } });
  });

  it.each<[number, string]>([
    [0, 'minimal'],
    [1, 'low'],
    [1024, 'low'],
    [1025, 'medium'],
    [8192, 'medium'],
    [8193, 'high'],
  ])('reads budget %i as level %s', (budget, level) => {
    expect(levelForBudget(budget)).toBe(level);
  });

  it.each<[string, readonly string[] | undefined]>([
    ['gemini-3.1-pro-preview', ['low', 'medium', 'high']],
    ['gemini-3-pro-preview', ['low', 'high']],
    ['gemini-3.5-flash', ['minimal', 'low', 'medium', 'high']],
    ['gemini-3.1-flash-lite', ['minimal', 'low', 'medium', 'high']],
    ['gemini-2.5-flash', undefined],
  ])('knows the levels of %s', (model, levels) => {
    expect(thinkingLevelsOf(model)).toEqual(levels);
  });

  it('rounds up to a level the model supports', () => {
    expect(toThinkingConfig('gemini-3-pro-preview', 4096).config).toEqual({ thinkingLevel: 'high' });
  });
});

describe('Function: unenforcedKeywords', () => {
  it('finds nothing in a schema of supported keywords, additionalProperties included', () => {
    expect(unenforcedKeywords(SCHEMA)).toEqual([]);
  });

  it('walks properties, items, $defs and anyOf without mistaking property names for keywords', () => {
    const schema = {
      type: 'object',
      properties: {
        pattern: { type: 'string' },
        tags: { type: 'array', items: { type: 'string', maxLength: 10 }, uniqueItems: true },
        choice: { anyOf: [{ type: 'integer', multipleOf: 5 }, { type: 'null' }] },
        ref: { $ref: '#/$defs/id' },
      },
      $defs: { id: { type: 'string', const: 'x' } },
      required: ['pattern'],
      additionalProperties: false,
    };

    expect(unenforcedKeywords(schema)).toEqual(['const', 'maxLength', 'multipleOf', 'uniqueItems']);
  });

  it("names a keyword whose value is names or data, not the names inside it (dependentRequired's properties), and walks the keywords that hold sub-schemas", () => {
    const schema = {
      type: 'object',
      properties: { card: { type: 'string' }, billing: { type: 'string' } },
      dependentRequired: { card: ['billing'] },
      'x-note': { minLength: 1 },
      if: { required: ['card'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword, in a schema, never awaited
      then: { properties: { billing: { pattern: '^b' } } },
      not: { maxProperties: 0 },
      required: [],
      additionalProperties: false,
    };

    expect(unenforcedKeywords(schema)).toEqual(['dependentRequired', 'if', 'maxProperties', 'not', 'pattern', 'then', 'x-note']);
  });
});

describe('Function: fromGenerateContentResponse', () => {
  it('maps a plain answer with its usage and cost to the last digit', () => {
    const reply = fromGenerateContentResponse(fixture('plain'));

    expect(reply.output).toBe('Caching HTTP responses at the CDN keeps latency low for every visitor, while an application cache gives finer control over invalidation.');
    expect(reply.finishReason).toBe('STOP');
    expect(reply.warnings).toEqual([]);
    expect(reply.usage).toEqual({ inputTokens: 24, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 27, reasoningTokens: 0 });
    // 24 × 0.25 + 27 × 1.5 = 46.5 micro-USD
    expect(providerCost(entry('fam_b-3.1-flash-lite').prices, reply.usage!)).toBe(0.0000465);
  });

  it('repeats no finishReason that is not a vendor word: a lying vendor cannot put the key, the prompt or megabytes in a warning', () => {
    const answer = fixture('plain') as { candidates: { finishReason: string }[] };
    answer.candidates[0]!.finishReason = `OTHER AIzaSECRET-MARKER-123 the prompt ${'x'.repeat(100_000)}`;

    const reply = fromGenerateContentResponse(answer);

    expect(reply.finishReason).toBe('unrecognised');
    expect(reply.warnings).toEqual(['The provider ended the output with finishReason unrecognised']);
  });

  it('maps a cachedContent answer: cached tokens are a subset of the prompt, thinking is output', () => {
    const reply = fromGenerateContentResponse(fixture('cached'));

    expect(reply.output).toBe("The contract's termination clause requires ninety days of written notice.");
    expect(reply.usage).toEqual({ inputTokens: 41250, cachedInputTokens: 40960, cacheWriteTokens: 0, outputTokens: 426, reasoningTokens: 411 });
    // 290 × 1.5 + 40960 × 0.15 + 426 × 9 = 435 + 6144 + 3834 = 10413 micro-USD
    expect(providerCost(entry('fam_b-3.5-flash').prices, reply.usage!)).toBe(0.010413);
  });

  it('leaves thought parts out of the output and counts thinking as reasoning output', () => {
    const reply = fromGenerateContentResponse(fixture('thinking'));

    expect(reply.output).toBe('There are **3** "r"s in strawberry.');
    expect(reply.usage).toEqual({ inputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 270, reasoningTokens: 258 });
    // 9 × 2 + 270 × 12 = 3258 micro-USD
    expect(providerCost(entry('fam_b-3.1-pro').prices, reply.usage!)).toBe(0.003258);
  });

  it('returns structured output as the JSON text', () => {
    const reply = fromGenerateContentResponse(fixture('structured'));

    expect(JSON.parse(reply.output)).toEqual({ verdict: 'cache at the edge', confidence: 0.82 });
    expect(reply.usage).toEqual({ inputTokens: 58, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 109, reasoningTokens: 92 });
  });

  it('counts tool-use prompt tokens of search grounding as input, and charges each search query at the catalog price', () => {
    const reply = fromGenerateContentResponse(fixture('grounded'));

    expect(reply.output).toBe('Spain won Euro 2024, beating England 2-1 in the final in Berlin.');
    expect(reply.usage).toEqual({ inputTokens: 77, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 142, reasoningTokens: 82, searchQueries: 2 });
    expect(reply.hints).toEqual({ inputTokens: 77, unseenOutputTokens: 82, reasoningCounted: true, searchQueries: 2 });
    expect(reply.warnings).toEqual([]);
    // 77 × 1.5 + 142 × 9 = 115.5 + 1278 = 1393.5 micro-USD, and 2 queries at $14 a thousand: 28,000 micro-USD
    const charge = chargeCall(call({ entry: entry('fam_b-3.5-flash'), tuning: { webSearch: true } }), reply.usage, reply.output, Date.now());
    expect(charge).toEqual({
      kind: 'observed',
      usage: reply.usage,
      providerCost: 0.0293935,
      warning: 'Google Search grounding ran 2 search queries: 2 charged at 0.014 USD each',
    });
  });

  it('counts each distinct, non-empty search query once, as Gemini bills them', () => {
    const grounded = fixture('grounded') as { candidates: { groundingMetadata: { webSearchQueries: unknown[] } }[] };
    grounded.candidates[0]!.groundingMetadata.webSearchQueries = ['', 'who won euro 2024', '  ', 'who won euro 2024', 'euro 2024 final score', 7, null];
    expect(fromGenerateContentResponse(grounded).usage?.searchQueries).toBe(2);
    grounded.candidates[0]!.groundingMetadata.webSearchQueries = ['', ''];
    expect(fromGenerateContentResponse(grounded).usage).not.toHaveProperty('searchQueries');
  });

  it('charges a grounded call whose usage is missing its search queries beside the estimate, and at most the queries its reserve held', () => {
    const grounded = fixture('grounded') as { candidates: { groundingMetadata: { webSearchQueries: string[] } }[]; usageMetadata?: unknown };
    grounded.candidates[0]!.groundingMetadata.webSearchQueries = Array.from({ length: 14 }, (_, i) => `query ${i}`);
    const searched = call({ entry: entry('fam_b-3.5-flash'), tuning: { webSearch: true } });
    const observed = chargeCall(searched, fromGenerateContentResponse(grounded).usage, 'x', Date.now());
    expect(observed.kind === 'observed' && observed.providerCost).toBe(0.0013935 + 10 * 0.014);
    expect(observed.warning).toBe('Google Search grounding ran 14 search queries: 10 charged at 0.014 USD each (the most a call is charged: its reservation held 10)');

    delete grounded.usageMetadata;
    const reply = fromGenerateContentResponse(grounded);
    const estimated = chargeCall(searched, reply.usage, reply.output, Date.now(), reply.hints);
    const withoutSearch = chargeCall(searched, reply.usage, reply.output, Date.now());
    expect(estimated.kind).toBe('estimated');
    expect(estimated.kind === 'estimated' && withoutSearch.kind === 'estimated' && estimated.estimatedCost - withoutSearch.estimatedCost).toBeCloseTo(10 * 0.014, 12);
  });

  it('charges no search query to a call that did not ask for search grounding, and says so', () => {
    const charge = chargeCall(call({ entry: entry('fam_b-3.5-flash') }), fromGenerateContentResponse(fixture('grounded')).usage, 'x', Date.now());
    expect(charge.kind === 'observed' && charge.providerCost).toBe(0.0013935);
    expect(charge.warning).toBe('The provider reported 2 search queries, though the call did not ask for search grounding; not charged');
  });

  it('keeps the request warnings first', () => {
    expect(fromGenerateContentResponse(fixture('plain'), ['from the request']).warnings).toEqual(['from the request']);
  });

  it('says when the output was cut at maxTokens', () => {
    const reply = fromGenerateContentResponse(fixture('max-tokens'));

    expect(reply.output).toBe('There are three common places to cache HTTP responses: the browser, a shared');
    expect(reply.finishReason).toBe('MAX_TOKENS');
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
  });

  it('answers empty, cut at maxTokens, when thinking used the whole allowance', () => {
    const reply = fromGenerateContentResponse(fixture('max-tokens-thinking-only'));

    expect(reply.output).toBe('');
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
    expect(reply.usage).toEqual({ inputTokens: 24, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 32, reasoningTokens: 32 });
  });

  it.each<[string, string]>([
    ['safety-blocked', 'The provider blocked the answer (SAFETY)'],
    ['prompt-blocked', 'The provider blocked the answer (PROHIBITED_CONTENT)'],
  ])('throws a non-retryable upstream_blocked for %s', (name, message) => {
    const error = thrown(() => fromGenerateContentResponse(fixture(name)));

    expect(error.code).toBe('upstream_blocked');
    expect(error.message).toBe(message);
    expect(error.retryable).toBe(false);
  });

  it("maps an error a 200 carried instead of an answer as its status would, keeping Google's message", () => {
    const error = thrown(() => fromGenerateContentResponse({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }));
    // It had been "The provider answered without a candidate", the vendor's word lost and never retried.
    expect([error.code, error.message, error.retryable]).toEqual(['upstream_overloaded', 'UNAVAILABLE: The model is overloaded. Please try again later.', true]);
    expect(thrown(() => fromGenerateContentResponse({ error: { message: 'boom' } })).message).toBe('boom');
    // A code that is no HTTP error status is not repeated as one (the answer's upstreamStatus is one, 100 to 599).
    for (const code of [7, 200, 1000, 2.5]) expect(thrown(() => fromGenerateContentResponse({ error: { code, message: 'odd' } })).details.upstreamStatus, String(code)).toBe(500);
    // Its google.rpc status says which, where its code is no HTTP status: a refusal is not retried as a 500 would be.
    const refused = thrown(() => fromGenerateContentResponse({ error: { code: 7, message: 'denied', status: 'PERMISSION_DENIED' } }));
    expect([refused.details.upstreamStatus, refused.retryable]).toEqual([403, false]);
    expect(thrown(() => fromGenerateContentResponse({ error: { code: 8, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } })).code).toBe('upstream_rate_limited');
  });

  it('keeps text stopped by a safety filter, with a warning', () => {
    const body = { candidates: [{ content: { role: 'model', parts: [{ text: 'Partial answer' }] }, finishReason: 'RECITATION', index: 0 }] };
    const reply = fromGenerateContentResponse(body);

    expect(reply.output).toBe('Partial answer');
    expect(reply.warnings).toContain('The provider stopped the output early (RECITATION); it may be incomplete');
    expect(reply.cutShort).toBe(true);
    expect(fromGenerateContentResponse({ candidates: [{ ...body.candidates[0], finishReason: 'STOP' }] })).not.toHaveProperty('cutShort');
  });

  it('takes a content of no parts that STOPs (Gemini with nothing to say) as an answer of no text, its usage charged as any', () => {
    const reply = fromGenerateContentResponse({
      candidates: [{ content: { role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 20, thoughtsTokenCount: 160, totalTokenCount: 180 },
    });
    expect(reply).toMatchObject({ output: '', usage: { inputTokens: 20, outputTokens: 160, reasoningTokens: 160 } });
  });

  it.each<[string, unknown]>([
    ['no candidates', { usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }],
    ['an empty candidates list', { candidates: [] }],
    ['a candidate without content', { candidates: [{ finishReason: 'STOP', index: 0 }] }],
    ['a body that is not an object', 'OK'],
  ])('throws upstream_malformed_response for %s', (_label, body) => {
    expect(thrown(() => fromGenerateContentResponse(body)).code).toBe('upstream_malformed_response');
  });

  it('drops usage with a warning when usageMetadata is absent', () => {
    const body = fixture('plain') as Record<string, unknown>;
    delete body['usageMetadata'];
    const reply = fromGenerateContentResponse(body);

    expect(reply.usage).toBeUndefined();
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).toEqual([]);
  });
});

describe('Function: toUsage', () => {
  it.each<[string, Record<string, unknown>]>([
    ['no promptTokenCount', { candidatesTokenCount: 3 }],
    ['a negative count', { promptTokenCount: 5, candidatesTokenCount: -1 }],
    ['a count that is not a number', { promptTokenCount: '5' }],
    ['cached tokens above the prompt', { promptTokenCount: 5, cachedContentTokenCount: 6 }],
    ['a total that disagrees with its parts', { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 9 }],
  ])('is undefined for %s', (_label, metadata) => {
    expect(toUsage(metadata)).toBeUndefined();
  });

  it('reads omitted classes as 0 (proto3 leaves zero counts out)', () => {
    expect(toUsage({ promptTokenCount: 9, totalTokenCount: 9 })).toEqual({
      inputTokens: 9,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
    });
  });
});

describe('Class: GenerateContentStream, a stream stopped before its finishReason', () => {
  /** 800 tokens of thinking, then the answer's start; each chunk with Gemini's running usageMetadata, `running` on the last. */
  function stopped(running: Record<string, unknown>) {
    const stream = new GenerateContentStream(() => undefined);
    const chunks = [
      { candidates: [{ content: { parts: [{ text: 'Let me think', thought: true }] } }], usageMetadata: { promptTokenCount: 12, thoughtsTokenCount: 800, totalTokenCount: 812 } },
      { candidates: [{ content: { parts: [{ text: 'Caching HTTP responses ' }] } }], usageMetadata: running },
    ];
    for (const chunk of chunks) stream.onEvent({ event: 'message', data: JSON.stringify(chunk) });
    return stream.partial();
  }

  it('keeps the search queries its grounding listed before it stopped: they are billed', () => {
    const stream = new GenerateContentStream(() => undefined);
    const grounded = { webSearchQueries: ['who won euro 2024', 'euro 2024 final score'] };
    stream.onEvent({
      event: 'message',
      data: JSON.stringify({
        candidates: [{ content: { parts: [{ text: 'Spain ' }] }, groundingMetadata: grounded }],
        usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
      }),
    });
    const partial = stream.partial();
    expect(partial.hints?.searchQueries).toBe(2);
    expect(partial.usage?.searchQueries ?? partial.hints?.searchQueries).toBe(2);
  });

  it('is charged its last running usage, thinking included', () => {
    const partial = stopped({ promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 800, totalTokenCount: 817 });
    const usage = { inputTokens: 12, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 805, reasoningTokens: 800 };
    expect(partial.usage).toEqual(usage);
    expect(chargeCall(call(), partial.usage, partial.output, Date.now(), partial.hints)).toEqual({
      kind: 'observed',
      usage,
      providerCost: providerCost(call().entry.prices, usage),
    });
  });

  it('takes a running usage that cannot be used (a total that is not its sum) as hints: its thinking is charged', () => {
    const partial = stopped({ promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 800, totalTokenCount: 99 });
    expect(partial.usage).toBeUndefined();
    const charge = chargeCall(call(), partial.usage, partial.output, Date.now(), partial.hints);
    // 23 characters of text (6 tokens as the estimate counts them) and the 800 of thinking the vendor counted.
    expect(charge).toMatchObject({ kind: 'estimated', warning: expect.stringMatching(/ input and 806 output tokens at uncached prices/) });
  });
});

describe('Class: GenerateContentStream, a running usage that parts came after', () => {
  // 100 characters with a running count of 20 output tokens and 700 of thinking, then 660 more characters.
  const head = 'a'.repeat(100);
  const tail = ' b'.repeat(330);
  const running = { promptTokenCount: 2000, candidatesTokenCount: 20, thoughtsTokenCount: 700, totalTokenCount: 2720 };
  function streamed(last: Record<string, unknown>) {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: head }] } }], usageMetadata: running }) });
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: tail }] }, ...last }] }) });
    return stream;
  }

  it('finished without a count of its own: estimated from the whole text, the running prompt and thinking taken as hints', () => {
    const reply = streamed({ finishReason: 'STOP' }).finish();
    expect(reply.usage).toBeUndefined();
    expect(reply.hints).toEqual({ inputTokens: 2000, unseenOutputTokens: 700, outputTokensAtLeast: 720, reasoningCounted: true });
    expect(reply.usageMissing).toBe("the vendor's last token usage came before the end of its answer");
    const charge = chargeCall(call(), reply.usage, reply.output, Date.now(), reply.hints, reply.usageMissing);
    if (charge.kind !== 'estimated') throw new Error(`charged as ${charge.kind}`);
    // Said once, by the charge: why the cost is unavailable, and what was charged instead.
    expect(charge.warning).toMatch(/^Cost unavailable: the vendor's last token usage came before the end of its answer\. Charged an estimate/);
    expect(reply.warnings).not.toContainEqual(expect.stringContaining('cost is unavailable'));
    // Never the 20 output tokens the running count showed: the whole text's estimate and the 700 of thinking.
    const tokensOut = Number(/and (\d+) output tokens/.exec(charge.warning)![1]);
    expect(tokensOut).toBeGreaterThan(700 + 100);
  });

  it('finished with no usage at all: no running count to say came early, the charge says none came', () => {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: head }] }, finishReason: 'STOP' }] }) });
    const reply = stream.finish();
    expect(reply.usage).toBeUndefined();
    expect(reply.usageMissing).toBeUndefined();
    const charge = chargeCall(call(), reply.usage, reply.output, Date.now(), reply.hints, reply.usageMissing);
    expect(charge).toMatchObject({ kind: 'estimated', warning: expect.stringMatching(/^Cost unavailable: the vendor sent no usable usage\./) });
  });

  it('stopped before its finishReason: the same, its running count only hints', () => {
    const partial = streamed({}).partial();
    expect(partial.usage).toBeUndefined();
    expect(partial.hints).toEqual({ inputTokens: 2000, unseenOutputTokens: 700, outputTokensAtLeast: 720, reasoningCounted: true });
  });

  it('withheld after it (SAFETY, no text of its own): billed, at the estimate', () => {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'thinking', thought: true }] } }], usageMetadata: running }) });
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'more thinking', thought: true }] }, finishReason: 'SAFETY' }] }) });
    const error = thrown(() => stream.finish());
    expect(error.code).toBe('upstream_blocked');
    expect(error.details.billed).toEqual({ usage: undefined, hints: { inputTokens: 2000, unseenOutputTokens: 700, outputTokensAtLeast: 720, reasoningCounted: true } });
  });

  it("is charged no fewer output tokens than its running count said, where the text's estimate says fewer (hex)", () => {
    const stream = new GenerateContentStream(() => undefined);
    const hex = 'a3f9'.repeat(750);
    stream.onEvent({
      event: 'message',
      data: JSON.stringify({ candidates: [{ content: { parts: [{ text: hex }] } }], usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 1500, totalTokenCount: 1520 } }),
    });
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: '.' }] }, finishReason: 'STOP' }] }) });
    const reply = stream.finish();
    const charge = chargeCall(call(), reply.usage, reply.output, Date.now(), reply.hints);
    if (charge.kind !== 'estimated') throw new Error(`charged as ${charge.kind}`);
    expect(charge.warning).toMatch(/ and 1500 output tokens/);
  });

  it.each([
    ['a prompt count alone', { promptTokenCount: 2000 }],
    ['fewer output tokens', { promptTokenCount: 2000, candidatesTokenCount: 5, totalTokenCount: 2005 }],
  ])('finished with a last count of less output than the running one (%s): never believed, charged at least the running count', (_name, last) => {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: head }] } }], usageMetadata: running }) });
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }], usageMetadata: last }) });
    // Whole at its final chunk: a vendor that keeps the connection open is not waited for.
    expect(stream.ended()).toBe(true);
    const reply = stream.finish();
    expect(reply.usage).toBeUndefined();
    expect(reply.hints).toEqual({ inputTokens: 2000, unseenOutputTokens: 700, outputTokensAtLeast: 720, reasoningCounted: true });
    const charge = chargeCall(call(), reply.usage, reply.output, Date.now(), reply.hints);
    if (charge.kind !== 'estimated') throw new Error(`charged as ${charge.kind}`);
    // The text's estimate and the 700 of thinking, never fewer than the 720 the running count said.
    expect(Number(/and (\d+) output tokens/.exec(charge.warning)![1])).toBeGreaterThanOrEqual(720);
  });

  it("takes a last count's input beside the higher output of a count before it (search results it read, say)", () => {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: head }] } }], usageMetadata: running }) });
    const last = { promptTokenCount: 2000, toolUsePromptTokenCount: 5000, totalTokenCount: 7000 };
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }], usageMetadata: last }) });
    expect(stream.ended()).toBe(true);
    expect(stream.finish().hints).toEqual({ inputTokens: 7000, unseenOutputTokens: 700, outputTokensAtLeast: 720, reasoningCounted: true });
  });

  it("takes no input count lower than the earlier count's from a last count that goes back", () => {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: head }] } }], usageMetadata: running }) });
    stream.onEvent({
      event: 'message',
      data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } }),
    });
    expect(stream.finish().hints).toEqual({ inputTokens: 2000, unseenOutputTokens: 700, outputTokensAtLeast: 720, reasoningCounted: true });
  });

  it('with the count on its last chunk, after every part: that count is its usage', () => {
    const stream = new GenerateContentStream(() => undefined);
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: head }] } }], usageMetadata: running }) });
    const whole = { promptTokenCount: 2000, candidatesTokenCount: 190, thoughtsTokenCount: 700, totalTokenCount: 2890 };
    stream.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: tail }] }, finishReason: 'STOP' }], usageMetadata: whole }) });
    expect(stream.finish().usage).toEqual({ inputTokens: 2000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 890, reasoningTokens: 700 });
  });
});

describe('Function: fromErrorResponse', () => {
  it('maps 429 RESOURCE_EXHAUSTED to a retryable rate-limit error waiting the RetryInfo delay', () => {
    const error = fromErrorResponse(429, fixtureText('error-429'), null);

    expect(error.code).toBe('upstream_rate_limited');
    expect(error.message).toMatch(/^RESOURCE_EXHAUSTED: You exceeded your current quota/);
    expect(error.details).toMatchObject({ upstreamStatus: 429, retryable: true, retryAfterMs: 34_400 });
  });

  it('prefers the Retry-After header when both are sent', () => {
    expect(fromErrorResponse(429, fixtureText('error-429'), '2').details.retryAfterMs).toBe(2000);
  });

  it.each<[string, number, boolean]>([
    ['error-400', 400, false],
    ['error-cached-content', 400, false],
    ['error-503', 503, true],
  ])('maps %s (%i) with retryable %s, a 503 (overloaded) as upstream_overloaded', (name, status, retryable) => {
    const error = fromErrorResponse(status, fixtureText(name), null);

    expect(error.code).toBe(status === 503 ? 'upstream_overloaded' : 'upstream_error');
    expect(error.retryable).toBe(retryable);
    expect(error.details.upstreamStatus).toBe(status);
    expect(error.details.retryAfterMs).toBeUndefined();
  });

  it('keeps Google status and message', () => {
    expect(fromErrorResponse(400, fixtureText('error-400'), null).message).toBe(
      'INVALID_ARGUMENT: Thinking level MINIMAL is not supported for this model. Please retry with other thinking level.',
    );
  });

  it.each([500, 504])('treats %i as retryable', (status) => {
    expect(fromErrorResponse(status, '{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}', null).retryable).toBe(true);
  });

  it('says the status when the body is not Google-shaped', () => {
    const error = fromErrorResponse(502, '<html>Bad gateway</html>', null);

    expect(error.message).toBe('The provider answered 502');
    expect(error.retryable).toBe(true);
  });

  it("names a status that is no word of Google's enum 'unrecognised', not as the vendor sent it (a megabyte)", () => {
    const error = fromErrorResponse(500, JSON.stringify({ error: { code: 500, status: 'X'.repeat(1_000_000) } }), null);

    expect(error.message).toBe('The provider answered 500 unrecognised');
  });

  it('names a megabyte block reason unrecognised', () => {
    expect(() => fromGenerateContentResponse({ promptFeedback: { blockReason: 'B'.repeat(1_000_000) } })).toThrow('The provider blocked the answer (unrecognised)');
    expect(() => fromGenerateContentResponse({ promptFeedback: { blockReason: 'SAFETY' } })).toThrow('The provider blocked the answer (SAFETY)');
  });
});

describe('Function: parseDuration / retryDelayOf', () => {
  it.each<[unknown, number | undefined]>([
    ['2s', 2000],
    ['34.4s', 34_400],
    ['0.500s', 500],
    ['2', undefined],
    [2, undefined],
  ])('reads %j as %j ms', (value, ms) => {
    expect(parseDuration(value)).toBe(ms);
  });

  it('ignores details that are not RetryInfo', () => {
    expect(retryDelayOf([{ '@type': 'type.googleapis.com/google.rpc.Help', links: [] }])).toBeUndefined();
  });
});

describe('Function: generateContentUrl', () => {
  it('puts the model in the path and never a key', () => {
    expect(generateContentUrl('https://generativelanguage.googleapis.com/v1beta', 'gemini-3.5-flash')).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3.5-flash:generateContent',
    );
  });
});
