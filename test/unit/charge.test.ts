import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { allModels, resolveModel } from '../../shared/catalog/index.js';
import type { ModelEntry } from '../../shared/catalog/types.js';
import { planCall } from '../../shared/compare/model-call.js';
import { planRequest } from '../../shared/plan/request-plan.js';
import { answerAllowance, judgeCall, showAnswerWithin } from '../../shared/judging/judge-prompt.js';
import { PNG_BASE64 } from '../support/fixtures.js';
import { pdfOf } from '../support/pdfs.js';
import { loadAjv } from '../../shared/contract/ajv.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { usdToMicroCredits, usdToMicroCreditsUp } from '../../shared/credits/credits.js';
import { estimateJudgingMicroCredits, estimateMicroCredits } from '../support/model-calls.js';
import {
  believedOutputTokens,
  cacheWriteBound,
  callCostBound,
  inputTokenBound,
  inputTokenEstimate,
  MAX_SEARCH_QUERIES_CHARGED,
  modelInputTokens,
  OUTPUT_TOLERANCE_TOKENS,
  outputTokenBound,
  PDF_PAGE_TEXT_TOKENS,
  textInputBound,
} from '../../shared/pricing/bound.js';
import { chargeCall, chargedUsd, implausibleUsage } from '../../shared/pricing/charge.js';
import { providerCost } from '../../shared/pricing/cost.js';
import { toMessagesRequest } from '../../shared/providers/anthropic-messages/request.js';
import { fromMessagesResponse } from '../../shared/providers/anthropic-messages/response.js';
import { toConverseRequest } from '../../shared/providers/bedrock-converse/request.js';
import { toGenerateContentRequest } from '../../shared/providers/gemini-generate-content/request.js';
import { toChatRequest } from '../../shared/providers/openai-chat/request.js';
import { toResponsesRequest } from '../../shared/providers/openai-responses/request.js';
import type { ModelCall, Usage } from '../../shared/providers/types.js';

const RATES = { creditsPerUsd: 100, markup: 1 };

beforeAll(loadAjv);

function callOf(body: Record<string, unknown>, index = 0): ModelCall {
  const request = validatePromptRequest(body);
  return planCall(request, request.models[index]!).call;
}

function usage(parts: Partial<Usage>): Usage {
  return { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 10, reasoningTokens: 0, ...parts };
}

/**
 * The most output a vendor may bill for the body the adapter actually built, read from that
 * body and the vendor's documented rule (docs/credits.md), independently of the adapters'
 * own bound: the limit sent counts reasoning everywhere but at xAI, whose reasoning models
 * bill reasoning beside completion_tokens with no documented bound (the model's maximum).
 */
function billableOutput(call: ModelCall): number {
  const { entry } = call;
  switch (entry.protocol) {
    case 'openai-responses':
      return toResponsesRequest(call).body.max_output_tokens;
    case 'anthropic-messages':
      return toMessagesRequest(call).body.max_tokens;
    case 'gemini-generate-content':
      return toGenerateContentRequest(call).body.generationConfig.maxOutputTokens;
    case 'bedrock-converse':
      return toConverseRequest(call).input.inferenceConfig!.maxTokens!;
    case 'openai-chat': {
      const body = toChatRequest(call).body;
      const sent = (body.max_completion_tokens ?? body.max_tokens) as number;
      const xaiReasons = entry.provider === 'xai' && /grok-4\.20-0309-reasoning|grok-4\.3/.test(entry.upstreamModel) && body.reasoning_effort !== 'none';
      return xaiReasons ? entry.maxOutputTokens : sent;
    }
  }
}

/** A random request the contract accepts: any models, output limits, thinking budgets and efforts they take. */
const requests = fc
  .record({
    entries: fc.uniqueArray(fc.constantFrom(...allModels()), { minLength: 1, maxLength: 4, selector: (e: ModelEntry) => e.id }),
    maxTokens: fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: undefined }),
    prompt: fc.string({ minLength: 1, maxLength: 400 }).map((text) => `Q ${text}`),
    system: fc.option(
      fc.string({ minLength: 1, maxLength: 200 }).map((text) => `S ${text}`),
      { nil: undefined },
    ),
    schema: fc.boolean(),
    seed: fc.nat(),
  })
  .map(({ entries, maxTokens, prompt, system, schema, seed }) => {
    const model_tuning: Record<string, Record<string, unknown>> = {};
    entries.forEach((entry, i) => {
      const { thinkingBudget, reasoningEffort } = entry.capabilities.tuning;
      const tuning: Record<string, unknown> = {};
      if (thinkingBudget && (seed + i) % 2 === 0)
        tuning.thinkingBudget = (seed * (i + 7)) % 3 === 0 ? 0 : thinkingBudget.min + ((seed * 31 + i) % (thinkingBudget.max - thinkingBudget.min + 1));
      if (reasoningEffort && (seed + i) % 3 !== 0) tuning.reasoningEffort = reasoningEffort[(seed + i) % reasoningEffort.length];
      if (Object.keys(tuning).length > 0) model_tuning[entry.id] = tuning;
    });
    return {
      prompt,
      models: entries.map((e) => e.id),
      ...(system ? { system_prompt: system } : {}),
      ...(maxTokens ? { generation_settings: { maxTokens } } : {}),
      ...(Object.keys(model_tuning).length > 0 ? { model_tuning } : {}),
      ...(schema ? { response_schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false } } : {}),
    };
  });

describe('Property: the estimate bounds what every call can be billed', () => {
  it('prices the largest usage each vendor can bill for the sent body within the call’s reserved share, and believes it', () => {
    fc.assert(
      fc.property(requests, (body) => {
        const request = validatePromptRequest(body);
        let reservedMicro = 0;
        let worstMicro = 0;
        let worstUsd = 0;
        for (const model of request.models) {
          const call = planCall(request, model).call;
          const largest = usage({ inputTokens: callCostBound(call).inputTokens, outputTokens: billableOutput(call) });
          // Believed as it is: the vendor may bill that much.
          expect(implausibleUsage(largest, call)).toBeUndefined();
          const shareMicro = usdToMicroCreditsUp(callCostBound(call).usd, RATES);
          const worst = usdToMicroCreditsUp(providerCost(call.entry.prices, largest), RATES);
          // The most a usage block may claim and still be believed (the framing beyond the input's bound, the tolerance above the
          // output's) is held too: it had cost up to about twice a small call's hold, the rest uncollected.
          const mostBelieved = usage({
            inputTokens: Math.min(textInputBound(call) + modelInputTokens(call), call.entry.contextWindow),
            outputTokens: outputTokenBound(call) + OUTPUT_TOLERANCE_TOKENS,
          });
          expect(implausibleUsage(mostBelieved, call)).toBeUndefined();
          expect(usdToMicroCreditsUp(providerCost(call.entry.prices, mostBelieved), RATES), model.entry.id).toBeLessThanOrEqual(shareMicro);
          expect(worst, `${model.entry.id} ${JSON.stringify(body.generation_settings)} ${JSON.stringify(model.tuning)}`).toBeLessThanOrEqual(shareMicro);
          reservedMicro += shareMicro;
          worstMicro += worst;
          worstUsd += providerCost(call.entry.prices, largest);
        }
        expect(estimateMicroCredits(request, RATES)).toBe(reservedMicro);
        expect(worstMicro).toBeLessThanOrEqual(reservedMicro);
        // The settle rounds the request's total once, to the nearest: never above the estimate, rounded up call by call.
        expect(usdToMicroCredits(worstUsd, RATES)).toBeLessThanOrEqual(reservedMicro);
      }),
      { numRuns: 300 },
    );
  });
});

describe('Function: callCostBound', () => {
  it("reserves the search queries a Gemini 3 call with webSearch may be charged, at the catalog's price a query", () => {
    const plain = callOf({ prompt: 'Hi', models: ['fam_b-3.5-flash'] });
    const searched = callOf({ prompt: 'Hi', models: ['fam_b-3.5-flash'], model_tuning: { 'fam_b-3.5-flash': { webSearch: true } } });
    expect(callCostBound(plain).searchQueries).toBe(0);
    expect(callCostBound(searched).searchQueries).toBe(MAX_SEARCH_QUERIES_CHARGED);
    expect(callCostBound(searched).usd - callCostBound(plain).usd).toBeCloseTo(MAX_SEARCH_QUERIES_CHARGED * 0.014, 12);
    // A model whose search the catalog prices at no price a query reserves none.
    const legacy = callOf({ prompt: 'Hi', models: ['fam_b-2.5-flash'] });
    expect(callCostBound(legacy).searchQueries).toBe(0);
  });

  it('reserves the 16 tokens the Responses API is sent for maxTokens 1, not 1', () => {
    const call = callOf({ prompt: 'Hi', models: ['fam_c-5.4'], generation_settings: { maxTokens: 1 } });
    expect(callCostBound(call).outputTokens).toBe(16);
  });

  it('reserves the thinking budget Anthropic bills within max_tokens', () => {
    const plain = callOf({ prompt: 'Hi', models: ['fam_a-sonnet-4-6'], generation_settings: { maxTokens: 1000 } });
    const thinking = callOf({
      prompt: 'Hi',
      models: ['fam_a-sonnet-4-6'],
      generation_settings: { maxTokens: 1000 },
      model_tuning: { 'fam_a-sonnet-4-6': { thinkingBudget: 8000 } },
    });
    expect(callCostBound(plain).outputTokens).toBe(1000);
    expect(callCostBound(thinking).outputTokens).toBe(9000);
  });

  it("reserves an xAI reasoning model's maximum output, and the limit alone where it does not reason", () => {
    const reasoning = callOf({ prompt: 'Hi', models: ['fam_d-4.20-0309-reasoning'], generation_settings: { maxTokens: 1 } });
    const off = callOf({ prompt: 'Hi', models: ['fam_d-4.3'], generation_settings: { maxTokens: 1 }, model_tuning: { 'fam_d-4.3': { reasoningEffort: 'none' } } });
    const plain = callOf({ prompt: 'Hi', models: ['fam_d-4.20-0309-non-reasoning'], generation_settings: { maxTokens: 1 } });
    expect(callCostBound(reasoning).outputTokens).toBe(1 + reasoning.entry.maxOutputTokens);
    expect(callCostBound(off).outputTokens).toBe(1);
    expect(callCostBound(plain).outputTokens).toBe(1);
  });

  it("bounds a text's input by its UTF-8 bytes, which a text made to tokenize badly comes close to, and by the model's context", () => {
    // Digits and spaces take about a token a character (4 characters a token would reserve a quarter of them).
    const digits = callOf({ prompt: '7 '.repeat(4_000), models: ['fam_c-5.4'], generation_settings: { maxTokens: 16 } });
    expect(callCostBound(digits).inputTokens).toBeGreaterThanOrEqual(8_000);
    const accented = callOf({ prompt: 'é字🙂'.repeat(1_000), models: ['fam_c-5.4'], generation_settings: { maxTokens: 16 } });
    expect(callCostBound(accented).inputTokens).toBeGreaterThanOrEqual((2 + 3 + 4) * 1_000);
    // The whole context at most: the vendor takes no more, and bills no more.
    const huge = callOf({ prompt: 'x'.repeat(10_000), models: ['fam_c-4o-mini'], generation_settings: { maxTokens: 16 } });
    expect(callCostBound(huge, 5_000_000).inputTokens).toBe(huge.entry.contextWindow);
  });

  it("reserves each image as its model counts it at most: gpt-4o-mini's tiles count 33 times gpt-4o's, the patch-counted models by their multiplier", () => {
    const image = { name: 'a.png', type: 'image/png', base64: PNG_BASE64 };
    const validated = validatePromptRequest({ prompt: 'Describe it.', models: ['fam_c-4o', 'fam_c-4o-mini', 'fam_c-5-nano'], attachments: [image, image] });
    // These vendor models, as the catalog declares them: their retirements give these IDs other models' counts.
    const request = { ...validated, models: validated.models.map((model) => ({ ...model, entry: resolveModel(model.requestedId, 0)! })) };
    const [big, mini, nano] = planRequest(request).calls;
    const text = inputTokenBound({ ...big!.call, attachments: [] });
    expect(big!.bound.inputTokens - text).toBe(2 * 1_600);
    expect(mini!.bound.inputTokens - text).toBe(2 * (2_833 + 8 * 5_667));
    expect(nano!.bound.inputTokens - text).toBe(2 * Math.ceil(1_536 * 2.46));
  });

  it("reserves a PDF as its pages, each an image on its model and a dense page of text, or its bytes where more, and by the model's context where its pages cannot be counted", () => {
    const withPdf = (pdf: Buffer, model = 'fam_a-sonnet-4-6') =>
      callOf({ prompt: 'Summarise it.', models: [model], attachments: [{ name: 'a.pdf', type: 'application/pdf', base64: pdf.toString('base64') }] });
    const text = (model = 'fam_a-sonnet-4-6') => inputTokenBound(callOf({ prompt: 'Summarise it.', models: [model] }));
    // A 100-page report of 130 KB: 100 times (1,600 + 1,500) tokens, where its bytes alone had reserved 6,500.
    const report = pdfOf({ pages: 100, body: ' '.repeat(130_000) });
    expect(inputTokenBound(withPdf(report)) - text()).toBe(100 * (1_600 + PDF_PAGE_TEXT_TOKENS));
    // Opus 4.7 reads images up to 3.75 megapixels: its pages are reserved as its images.
    expect(inputTokenBound(withPdf(report, 'fam_a-opus-4-7')) - text('fam_a-opus-4-7')).toBe(100 * (5_000 + PDF_PAGE_TEXT_TOKENS));
    // One page of 200 KB: its bytes, a token each 20.
    const page = pdfOf({ pages: 1, body: ' '.repeat(200_000) });
    expect(inputTokenBound(withPdf(page)) - text()).toBe(Math.ceil(page.length / 20));
    // A root whose /Count says 2,000 over one page: held as 2,000 pages, estimated (charged where usage is missing) as the one a reader walks.
    const declared = withPdf(pdfOf({ pages: 1, count: '2000' }));
    expect(inputTokenBound(declared) - text()).toBe(2_000 * (1_600 + PDF_PAGE_TEXT_TOKENS));
    expect(inputTokenEstimate(declared) - inputTokenEstimate({ ...declared, attachments: [] })).toBe(1_600 + PDF_PAGE_TEXT_TOKENS);
    // No page to count: the bound is the context (callCostBound caps it there), the estimate its bytes.
    const uncounted = withPdf(Buffer.concat([Buffer.from('%PDF-1.4\n', 'latin1'), Buffer.alloc(200_000 - 9, 0x20)]));
    expect(callCostBound(uncounted).inputTokens).toBe(uncounted.entry.contextWindow);
    expect(inputTokenEstimate(uncounted) - inputTokenEstimate({ ...uncounted, attachments: [] })).toBe(Math.max(1_600 + PDF_PAGE_TEXT_TOKENS, 200_000 / 20));
  });

  it('bounds the text input by its bytes and 4 tokens of framing for the prompt and each history turn', () => {
    const prompt = 'Go on.';
    const turns = [
      { role: 'user', content: 'First question, about caches.' },
      { role: 'assistant', content: 'An answer with an é and a 字.' },
      { role: 'user', content: 'A second question.' },
      { role: 'assistant', content: 'A second answer.' },
    ];
    for (const n of [0, 1, 2, 4]) {
      const history = turns.slice(0, n);
      const call = callOf({ prompt, models: ['fam_a-sonnet-4-6'], ...(n > 0 ? { history } : {}) });
      const bytes = Buffer.byteLength(prompt, 'utf8') + history.reduce((sum, turn) => sum + Buffer.byteLength(turn.content, 'utf8'), 0);
      expect(textInputBound(call), `${n} history turns`).toBe(bytes + 4 * (1 + n));
      // The hold adds the framing a vendor may bill beside the text (tooManyInputTokens believes as much).
      expect(inputTokenBound(call), `${n} history turns`).toBe(bytes + 4 * (1 + n) + 512);
    }
  });

  it("reserves a Gemini cachedContent as the cached input the model's context can still hold: the request does not say its size", () => {
    const cached = callOf({ prompt: 'Summarise the cached report.', models: ['fam_b-3.1-pro'], model_tuning: { 'fam_b-3.1-pro': { cachedContent: 'cachedContents/report-1' } } });
    const plain = callOf({ prompt: 'Summarise the cached report.', models: ['fam_b-3.1-pro'] });
    // A 600,000-token cache, as the vendor reports it (prompt tokens include the cached ones): within the bound, and believed.
    const billed = usage({ inputTokens: 600_020, cachedInputTokens: 600_000, outputTokens: callCostBound(cached).outputTokens });
    expect(implausibleUsage(billed, cached)).toBeUndefined();
    expect(providerCost(cached.entry.prices, billed)).toBeLessThanOrEqual(callCostBound(cached).usd);
    expect(providerCost(plain.entry.prices, billed)).toBeGreaterThan(callCostBound(plain).usd);
  });

  it('counts the response schema in the input, as the instruction or native format that carries it', () => {
    const plain = callOf({ prompt: 'Hi', models: ['fam_g-large'] });
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const structured = callOf({ prompt: 'Hi', models: ['fam_g-large'], response_schema: schema });
    expect(inputTokenBound(structured) - inputTokenBound(plain)).toBeGreaterThan(JSON.stringify(schema).length / 4);
  });
});

describe('Function: estimateJudgingMicroCredits', () => {
  it("shows each judge the longest answer a contestant can give: an Anthropic thinking budget's share of max_tokens too", () => {
    const judged = (tuning: Record<string, unknown>) =>
      estimateJudgingMicroCredits(
        validatePromptRequest({ prompt: 'Hi', models: ['fam_a-sonnet-4-6', 'fam_g-large'], judges: ['fam_c-4.1'], generation_settings: { maxTokens: 1000 }, model_tuning: tuning }),
        RATES,
      );
    const thinking = judged({ 'fam_a-sonnet-4-6': { thinkingBudget: 8000 } });
    const plain = judged({});
    // 2 judge calls each see the Claude answer, now up to 9,000 tokens instead of 1,000: at fam_c-4.1's input price.
    const inputPrice = resolveModel('fam_c-4.1')!.prices.input;
    // Each call's estimate is rounded up: a micro-credit either way a call.
    expect(Math.abs(thinking - plain - 2 * 8000 * inputPrice * 100)).toBeLessThanOrEqual(2);
  });
});

describe('Function: outputTokenBound', () => {
  it("bounds fam_d-3 as the reasoning model that now serves its slug (grok-4.3): the model's maximum, not the limit sent", () => {
    const call = callOf({ prompt: 'Hi', models: ['fam_d-3'], generation_settings: { maxTokens: 4_096 } });
    expect(outputTokenBound(call)).toBe(4_096 + call.entry.maxOutputTokens);
    // 800 completion and 6,000 reasoning tokens are believed, not refused as beyond 4,096.
    expect(implausibleUsage(usage({ inputTokens: 10, outputTokens: 6_800, reasoningTokens: 6_000 }), call, 'An answer.')).toBeUndefined();
    // Reasoning billed beside the answer: the model's whole maximum of it and an answer at the limit sent, believed too.
    const most = call.entry.maxOutputTokens + 4_096;
    expect(implausibleUsage(usage({ inputTokens: 10, outputTokens: most, reasoningTokens: call.entry.maxOutputTokens }), call, 'An answer.')).toBeUndefined();
  });
});

describe('Function: implausibleUsage', () => {
  const call = callOf({ prompt: 'Hi', models: ['fam_c-4.1'], generation_settings: { maxTokens: 100 } });

  it.each([
    ['an output count of 1e300', usage({ outputTokens: 1e300 }), /outputTokens is not a whole number/],
    ['a negative count', usage({ inputTokens: -5 }), /inputTokens is not a whole number/],
    ['a fraction', usage({ outputTokens: 2.5 }), /outputTokens is not a whole number/],
    ['NaN', usage({ cachedInputTokens: Number.NaN }), /cachedInputTokens/],
    ['more cached than input', usage({ inputTokens: 5, cachedInputTokens: 6 }), /cached/],
    ['more reasoning than output', usage({ outputTokens: 5, reasoningTokens: 6 }), /reasoning/],
    ['more input than the context', usage({ inputTokens: 2_000_000 }), /context/],
    ['more output than the call allowed', usage({ outputTokens: 100 + OUTPUT_TOLERANCE_TOKENS + 1 }), /beyond the 100/],
    ['no input (a free call)', usage({ inputTokens: 0, outputTokens: 0 }), /no input tokens/],
    ['no output for an answer with text (free output)', usage({ outputTokens: 0 }), /no output tokens/],
  ])('refuses %s', (_name, reported, reason) => {
    expect(implausibleUsage(reported, call, 'Hello there')).toMatch(reason);
  });

  it('believes no output tokens for an answer without text', () => {
    expect(implausibleUsage(usage({ outputTokens: 0 }), call, '')).toBeUndefined();
  });

  it('refuses counts far below the text they stand for: 1 output token for 400,000 characters, 1 input token for a 100,000-character prompt', () => {
    const long = 'word '.repeat(80_000);
    const wide = callOf({ prompt: 'Hi', models: ['fam_c-4.1'], generation_settings: { maxTokens: 32_000 } });
    expect(implausibleUsage(usage({ outputTokens: 1 }), wide, long)).toMatch(/1 output tokens, fewer than the 2500 its text takes at the least/);
    const bigPrompt = callOf({ prompt: 'x'.repeat(100_000), models: ['fam_c-4.1'], generation_settings: { maxTokens: 100 } });
    expect(implausibleUsage(usage({ inputTokens: 1 }), bigPrompt, 'ok')).toMatch(/1 input tokens, fewer than the 781 its text takes at the least/);
    // Counts a tokenizer could make of them are believed, whitespace runs however long.
    expect(implausibleUsage(usage({ outputTokens: 2_500 }), wide, long)).toBeUndefined();
    expect(implausibleUsage(usage({ outputTokens: 1 }), wide, ' '.repeat(100_000))).toBeUndefined();
    expect(implausibleUsage(usage({ inputTokens: 782 }), bigPrompt, 'ok')).toBeUndefined();
  });

  it('refuses input counts far above what the text can count (a token a byte, and some framing), but where the request does not hold all that is billed', () => {
    const short = callOf({ prompt: 'Say hello.', models: ['fam_a-sonnet-4-6'] });
    expect(implausibleUsage(usage({ inputTokens: 900_000, cachedInputTokens: 900_000 }), short, 'Hello.')).toMatch(/900000 input tokens, more than the 526 its text can count/);
    expect(implausibleUsage(usage({ inputTokens: 526 }), short, 'Hello.')).toBeUndefined();
    // An image, a Gemini cache or search results: billed input the request does not show.
    const image = callOf({ prompt: 'Say hello.', models: ['fam_a-sonnet-4-6'], attachments: [{ name: 'a.png', type: 'image/png', base64: PNG_BASE64 }] });
    const cached = callOf({ prompt: 'Say hello.', models: ['fam_b-3.1-pro'], model_tuning: { 'fam_b-3.1-pro': { cachedContent: 'cachedContents/a' } } });
    const grounded = callOf({ prompt: 'Say hello.', models: ['fam_b-3.1-pro'], model_tuning: { 'fam_b-3.1-pro': { webSearch: true } } });
    for (const call of [image, cached, grounded]) expect(implausibleUsage(usage({ inputTokens: 90_000 }), call, 'Hello.')).toBeUndefined();
  });

  it("believes a Grok call's input with the system prompt xAI adds to every call, reserves it, and still refuses more", () => {
    // A published grok-4 usage block for a one-line prompt: 686 prompt tokens, 679 of them cached.
    const grok = callOf({ prompt: 'Hello', models: ['fam_d-4.3'] });
    const published = usage({ inputTokens: 686, cachedInputTokens: 679, outputTokens: 123, reasoningTokens: 112 });
    expect(implausibleUsage(published, grok, 'Hello! How can I help you today?')).toBeUndefined();
    const charge = chargeCall(grok, published, 'Hello! How can I help you today?', 0);
    expect(charge).toEqual({ kind: 'observed', usage: published, providerCost: providerCost(grok.entry.prices, published) });
    // Reserved with the call, and past it and the framing, refused as on any model.
    const sameText = callOf({ prompt: 'Hello', models: ['fam_a-sonnet-4-6'] });
    expect(inputTokenBound(grok)).toBe(inputTokenBound(sameText) + 2_048);
    expect(implausibleUsage(usage({ inputTokens: 900_000 }), grok, 'Hi')).toMatch(/900000 input tokens, more than the 2569 its text can count/);
    // The same count on a model whose vendor adds nothing is not believed.
    expect(implausibleUsage(published, sameText, 'Hello! How can I help you today?')).toMatch(/686 input tokens, more than the 521/);
  });

  it('refuses an output count far below the thinking its vendor showed beside the answer, which the count includes', () => {
    const thinker = callOf({ prompt: 'Hi', models: ['fam_a-sonnet-4-6'], model_tuning: { 'fam_a-sonnet-4-6': { thinkingBudget: 32_000 } } });
    const thought = 'Let me weigh each case in turn. '.repeat(3_400); // 105 KB of thinking
    const answer = (usage: Record<string, number>) =>
      fromMessagesResponse({
        type: 'message',
        content: [
          { type: 'thinking', thinking: thought, signature: 's' },
          { type: 'text', text: 'Hello there' },
        ],
        stop_reason: 'end_turn',
        usage,
      });
    const lying = answer({ input_tokens: 20, output_tokens: 3 });
    const charge = chargeCall(thinker, lying.usage, lying.output, 0, lying.hints);
    // Believed, 105 KB of thinking had cost 3 tokens; refused, the thinking shown is charged as estimated.
    expect(charge).toMatchObject({
      kind: 'estimated',
      warning: expect.stringMatching(/^Cost unavailable: 3 output tokens, fewer than the \d+ its text and thinking take at the least/),
    });
    expect((charge as { estimatedCost: number }).estimatedCost).toBeGreaterThan(providerCost(thinker.entry.prices, usage({ inputTokens: 20, outputTokens: 20_000 })));
    // An honest count of the same answer is believed.
    const honest = answer({ input_tokens: 20, output_tokens: 24_000 });
    expect(chargeCall(thinker, honest.usage, honest.output, 0, honest.hints).kind).toBe('observed');
  });

  it('believes output up to the tolerance above the limit', () => {
    expect(implausibleUsage(usage({ outputTokens: 100 + OUTPUT_TOLERANCE_TOKENS }), call)).toBeUndefined();
  });
});

describe('Function: chargeCall', () => {
  const call = callOf({ prompt: 'x'.repeat(400), models: ['fam_c-4.1'], generation_settings: { maxTokens: 100 } });

  it('prices believable usage as the provider cost', () => {
    const reported = usage({ inputTokens: 120, outputTokens: 80 });
    expect(chargeCall(call, reported, 'ok', Date.now())).toEqual({ kind: 'observed', usage: reported, providerCost: providerCost(call.entry.prices, reported) });
  });

  it('charges missing usage an estimate from the text at uncached prices, with a warning', () => {
    const charge = chargeCall(call, undefined, 'y'.repeat(200), Date.now());
    expect(charge.kind).toBe('estimated');
    if (charge.kind !== 'estimated') return;
    // The input as it usually counts (not its bound) and 50 tokens of output.
    expect(inputTokenEstimate(call)).toBe(104);
    expect(charge.estimatedCost).toBe(providerCost(call.entry.prices, usage({ inputTokens: 104, outputTokens: 50 })));
    expect(charge.warning).toMatch(/no usable usage.*estimate from the text/);
  });

  it('estimates from what else the vendor showed: the input it reported where that is more, and the reasoning it streamed', () => {
    const bound = callCostBound(call);
    const estimate = (hints: Parameters<typeof chargeCall>[4]) => chargeCall(call, undefined, 'y'.repeat(200), Date.now(), hints) as { estimatedCost: number; warning: string };
    // A dense prompt the vendor counted at 300 tokens, and 30 tokens of reasoning beside 50 of output.
    const shown = estimate({ inputTokens: 300, unseenOutputTokens: 30 });
    expect(shown.estimatedCost).toBe(providerCost(call.entry.prices, usage({ inputTokens: 300, outputTokens: 80 })));
    expect(shown.warning).toMatch(/\(300 input and 80 output tokens/);
    // Never less than the estimate of the input; an input its text cannot count not taken (a usage block
    // claiming it would have been refused, so that a stream and a whole answer are charged alike); never past the call's bound.
    expect(estimate({ inputTokens: 3 }).estimatedCost).toBe(providerCost(call.entry.prices, usage({ inputTokens: 104, outputTokens: 50 })));
    // Reasoning counted from the text streamed is charged, never past the bound; the vendor's own count up to what a
    // usage block could claim, and not at all past it (a thoughts count of 1e300 had charged a short answer the whole limit).
    expect(estimate({ inputTokens: 10 ** 9, unseenOutputTokens: 10 ** 9 }).estimatedCost).toBe(
      providerCost(call.entry.prices, usage({ inputTokens: 104, outputTokens: bound.outputTokens })),
    );
    expect(estimate({ unseenOutputTokens: believedOutputTokens(call), reasoningCounted: true }).estimatedCost).toBe(
      providerCost(call.entry.prices, usage({ inputTokens: 104, outputTokens: bound.outputTokens })),
    );
    for (const lie of [believedOutputTokens(call) + 1, 10 ** 9, 1e300, 30.5]) {
      expect(estimate({ unseenOutputTokens: lie, outputTokensAtLeast: lie, reasoningCounted: true }).estimatedCost).toBe(
        providerCost(call.entry.prices, usage({ inputTokens: 104, outputTokens: 50 })),
      );
    }
    expect(estimate({ inputTokens: 1e300 }).estimatedCost).toBe(estimate({}).estimatedCost);
    expect(estimate({ inputTokens: 300.5 }).estimatedCost).toBe(estimate({}).estimatedCost);
    // What is not a count counts nothing.
    expect(estimate({ inputTokens: Number.NaN, unseenOutputTokens: -5 }).estimatedCost).toBe(estimate({}).estimatedCost);
  });

  it('never believes cache writes an Anthropic call reserved none for: its input is charged at the input price, within its bound', () => {
    // No cache_control breakpoint: the bound holds no cache writes, each input token (the framing a vendor may add included) at the input price.
    const anthropic = callOf({ prompt: 'x'.repeat(400), models: ['fam_a-sonnet-4-6'], generation_settings: { maxTokens: 100 } });
    const bound = callCostBound(anthropic);
    expect(bound.usd).toBe(providerCost(anthropic.entry.prices, usage({ inputTokens: textInputBound(anthropic) + 512, outputTokens: 100 + OUTPUT_TOLERANCE_TOKENS })));
    // 500 tokens more than the text can count (within the framing a vendor may add, so believed), all reported as cache writes.
    const reported = textInputBound(anthropic) + 500;
    const classes = usage({ inputTokens: reported, cacheWriteTokens: reported, outputTokens: 100 });
    // Priced as reported, at 1.25 times the input price and the whole output limit, the call would cost more than its bound.
    expect(providerCost(anthropic.entry.prices, classes)).toBeGreaterThan(bound.usd);
    expect(implausibleUsage(classes, anthropic, 'y'.repeat(200))).toBe(`${reported} cache write tokens, more than the 0 its cache breakpoints can write`);
    // Reported before the usage went missing (a stream's message_start), the same: the input count is taken, its writes are not.
    const charge = chargeCall(anthropic, undefined, 'y'.repeat(200), 0, { inputTokens: reported, cacheWriteTokens: reported, outputLimitReached: true });
    const estimatedCost = providerCost(anthropic.entry.prices, usage({ inputTokens: reported, outputTokens: 100 }));
    expect(charge).toEqual({
      kind: 'estimated',
      estimatedCost,
      warning: expect.stringContaining(`Charged an estimate from the text instead (${reported} input and 100 output tokens`),
    });
    expect(estimatedCost).toBeLessThanOrEqual(bound.usd);
  });

  it('believes cache writes up to the prefix a call marked and the framing a vendor adds, which its bound holds', () => {
    const marked = callOf({
      prompt: 'Go on.',
      system_prompt: [{ type: 'text', text: 'z'.repeat(5_000), cache_control: { type: 'ephemeral' } }],
      models: ['fam_a-sonnet-4-6'],
      generation_settings: { maxTokens: 100 },
    });
    const writes = cacheWriteBound(marked)!;
    expect(writes).toBeGreaterThan(5_000);
    const most = usage({ inputTokens: inputTokenBound(marked), cacheWriteTokens: writes, outputTokens: 100 + OUTPUT_TOLERANCE_TOKENS });
    expect(implausibleUsage(most, marked, 'ok')).toBeUndefined();
    expect(providerCost(marked.entry.prices, most)).toBeLessThanOrEqual(callCostBound(marked).usd);
    expect(implausibleUsage({ ...most, cacheWriteTokens: writes + 1 }, marked, 'ok')).toMatch(/cache write tokens, more than the/);
    // Where a write costs no more than input (Nova), any count is within the hold.
    expect(cacheWriteBound(callOf({ prompt: 'Go on.', models: ['fam_h-pro'] }))).toBeUndefined();
  });

  it.each([
    ['an OpenAI reasoning model asked to reason', { models: ['fam_c-5.4'], model_tuning: { 'fam_c-5.4': { reasoningEffort: 'low' } } }, true],
    ['GPT-5.4 asked no effort, which OpenAI runs at none', { models: ['fam_c-5.4'] }, false],
    ['a -pro model, which always reasons', { models: ['fam_c-5.4-pro'] }, true],
    // Its limit bounds the answer alone: xAI bills reasoning beside it.
    ['an xAI reasoning model', { models: ['fam_d-4.3'] }, true, true],
    ['an xAI model told not to reason', { models: ['fam_d-4.3'], model_tuning: { 'fam_d-4.3': { reasoningEffort: 'none' } } }, false],
    ['a model that shows its thinking', { models: ['fam_a-sonnet-4-6'] }, false],
    ['a model that does not reason', { models: ['fam_c-4.1'] }, false],
    ['a Gemini 3 model, which always thinks and shows it as a count alone', { models: ['fam_b-3.1-pro'] }, true],
    ['a Gemini 3 model asked to think least', { models: ['fam_b-3.5-flash'], model_tuning: { 'fam_b-3.5-flash': { thinkingBudget: 0 } } }, true],
    ['Gemini 2.5 Flash, which thinks by default', { models: ['fam_b-2.5-flash'] }, true],
    ['Gemini 2.5 Flash-Lite, which does not think by default', { models: ['fam_b-2.5-flash-lite'] }, false],
  ])('says, charging %s without usage, whether reasoning its vendor bills unseen is left out', (_name, body, hidden, beyondLimit = false) => {
    const reasoner = callOf({ prompt: 'Why is the sky blue?', ...body });
    const warning = (chargeCall(reasoner, undefined, 'Scattering.', 0) as { warning: string }).warning;
    expect(warning.includes('which its vendor bills and does not show, is not charged')).toBe(hidden);
    // At its output limit the charge is the limit, which counts the reasoning where the limit bounds it: nothing is left out.
    const atLimit = (chargeCall(reasoner, undefined, 'Scattering.', 0, { outputLimitReached: true }) as { warning: string }).warning;
    expect(atLimit.includes('does not show')).toBe(beyondLimit);
    // The vendor's count of it, come some other way (Gemini's thoughts count), is charged: not left out either.
    const counted = (chargeCall(reasoner, undefined, 'Scattering.', 0, { unseenOutputTokens: 400, reasoningCounted: true }) as { warning: string }).warning;
    expect(counted).not.toContain('does not show');
    // Unless that count could not be true: not taken, and the warning says the reasoning is left out.
    const refused = (chargeCall(reasoner, undefined, 'Scattering.', 0, { unseenOutputTokens: 1e300, reasoningCounted: true }) as { warning: string }).warning;
    expect(refused.includes('does not show')).toBe(hidden);
  });

  it('never charges an estimate above the call’s bound, however long the output', () => {
    const charge = chargeCall(call, usage({ outputTokens: 1e300 }), 'z'.repeat(100_000), Date.now());
    const bound = callCostBound(call);
    expect(charge).toMatchObject({
      kind: 'estimated',
      estimatedCost: providerCost(call.entry.prices, usage({ inputTokens: inputTokenEstimate(call), outputTokens: bound.outputTokens })),
    });
    expect((charge as { estimatedCost: number }).estimatedCost).toBeLessThan(bound.usd);
  });

  it("charges a judge call without usage no more than the request held for it: its pair's share of the reservation", () => {
    const request = validatePromptRequest({ prompt: 'Draw a table.', models: ['fam_g-large', 'fam_k-8b'], judges: ['fam_c-5.4-mini'], generation_settings: { maxTokens: 1024 } });
    const [a, b] = request.models.map((model) => showAnswerWithin('An answer.', answerAllowance(planCall(request, model).call)));
    const { call } = judgeCall(request, request.judges[0]!, a!, b!);
    // What planJudges reserved for this pair.
    expect(call.heldUsd).toBe(planRequest(request).judges[0]!.bounds[0]!.usd);
    const verdict = '{"winner":"A","scoreA":8,"scoreB":6,"reasoning":"A is complete."}';
    const estimate = chargeCall(call, undefined, verdict, Date.now());
    expect(estimate).toMatchObject({ kind: 'estimated' });
    // An estimate above the share is charged the share: set lower than this one, it binds.
    const share = (estimate as { estimatedCost: number }).estimatedCost / 3;
    expect(chargeCall({ ...call, heldUsd: share }, undefined, verdict, Date.now())).toMatchObject({ kind: 'estimated', estimatedCost: share });
    // The vendor's own usage is not bound by it.
    const reported = usage({ inputTokens: Math.ceil(inputTokenEstimate(call)), outputTokens: 30 });
    expect(chargeCall({ ...call, heldUsd: share }, reported, verdict, Date.now())).toMatchObject({ kind: 'observed', providerCost: providerCost(call.entry.prices, reported) });
  });
});

describe('Function: chargedUsd', () => {
  it('adds provider costs and estimates of completed calls, and nothing of failed ones', () => {
    const total = chargedUsd([
      { status: 'completed', providerCost: 0.25 },
      { status: 'completed', providerCost: null, estimatedCost: 0.5 },
      { status: 'failed', providerCost: 0 },
      { status: 'completed', providerCost: null },
    ]);
    expect(total).toEqual({ usd: 0.75, estimatedUsd: 0.5 });
  });
});
