import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { planCall } from '../../shared/compare/model-call.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { estimateMicroCredits } from '../support/model-calls.js';
import { callCostBound, OUTPUT_TOLERANCE_TOKENS } from '../../shared/pricing/bound.js';
import { chargeCall } from '../../shared/pricing/charge.js';
import { providerCost } from '../../shared/pricing/cost.js';
import { fromMessagesResponse } from '../../shared/providers/anthropic-messages/response.js';
import { fromConverseResponse } from '../../shared/providers/bedrock-converse/response.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import { fromGenerateContentResponse } from '../../shared/providers/gemini-generate-content/response.js';
import { dialectFor } from '../../shared/providers/openai-chat/dialects.js';
import { fromChatResponse } from '../../shared/providers/openai-chat/response.js';
import { fromResponsesResponse } from '../../shared/providers/openai-responses/response.js';
import type { ModelReply } from '../../shared/providers/types.js';
import { balanceOf, openTestAccount } from '../support/accounts.js';
import { post, startTestHost } from '../support/local.js';

/**
 * Vendors' usage blocks are input from outside. Whatever a vendor claims (1e300 tokens,
 * negative or fractional counts, strings, nesting where a number belongs, parts that do not
 * add up, zeros), a call's cost is a finite number above zero no larger than its bound allows, or unavailable
 * with an estimate charged that never exceeds what was reserved; the request answers, logs
 * and settles, and no account goes below zero.
 */
const fixture = (path: string): Record<string, any> => JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8'));

/** Counts as a hostile vendor may send them: plausible, absurd, and not numbers at all. */
const hostileCount = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 5_000 }) },
  fc.integer({ min: -1_000_000, max: 2_000_000_000 }),
  // biome-ignore lint/correctness/noPrecisionLoss: a count above 2^53, which JSON.parse rounds, is the point of the case
  fc.constantFrom(1e300, -1, 2.5, 9_007_199_254_740_993, 1e21, -0, 0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom('12', null, true, {}, [], { tokens: 3 }),
);

/** Every usage field a protocol reads, each maybe absent, maybe hostile. */
const usageOf = (fields: readonly string[]) => fc.record(Object.fromEntries(fields.map((field) => [field, hostileCount])), { requiredKeys: [] });

interface Protocol {
  model: string;
  fields: readonly string[];
  /** The vendor's answer with `usage` in place of its usage block. */
  answer(usage: Record<string, unknown>): unknown;
  parse(answer: unknown): ModelReply;
}

const PROTOCOLS: Record<string, Protocol> = {
  'openai-responses': {
    model: 'fam_c-5.4',
    fields: ['input_tokens', 'output_tokens', 'total_tokens'],
    answer: (usage) => ({
      ...fixture('openai-responses/plain.json'),
      usage: { ...usage, input_tokens_details: { cached_tokens: usage['input_tokens'] === undefined ? 0 : 1 }, output_tokens_details: { reasoning_tokens: 2 } },
    }),
    parse: fromResponsesResponse,
  },
  'openai-chat (Cerebras)': {
    model: 'fam_e-gpt-oss-120b',
    fields: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
    answer: (usage) => ({ ...fixture('openai-chat/cerebras-reasoning.json'), usage }),
    parse: (answer) => fromChatResponse(answer, dialectFor('cerebras')),
  },
  'openai-chat (xAI)': {
    model: 'fam_d-4.3',
    fields: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
    answer: (usage) => ({ ...fixture('openai-chat/xai-reasoning.json'), usage: { ...usage, completion_tokens_details: { reasoning_tokens: usage['total_tokens'] } } }),
    parse: (answer) => fromChatResponse(answer, dialectFor('xai')),
  },
  'anthropic-messages': {
    model: 'fam_a-sonnet-4-6',
    fields: ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'],
    answer: (usage) => ({ ...fixture('anthropic-messages/plain.json'), usage }),
    parse: fromMessagesResponse,
  },
  'gemini-generate-content': {
    model: 'fam_b-3.1-pro',
    fields: ['promptTokenCount', 'candidatesTokenCount', 'thoughtsTokenCount', 'cachedContentTokenCount', 'totalTokenCount'],
    answer: (usage) => ({ ...fixture('gemini-generate-content/plain.json'), usageMetadata: usage }),
    parse: (answer) => fromGenerateContentResponse(answer),
  },
  'bedrock-converse': {
    model: 'fam_h-pro',
    fields: ['inputTokens', 'outputTokens', 'totalTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens'],
    answer: (usage) => ({ ...fixture('bedrock-converse/converse-plain.json'), usage }),
    parse: (answer) => fromConverseResponse(answer, false),
  },
};

describe('Property: a hostile usage block never makes a cost unbounded, negative or not a number', () => {
  it.each(Object.entries(PROTOCOLS))('%s', (_name, protocol) => {
    const request = validatePromptRequest({ prompt: 'Say hello.', models: [protocol.model], generation_settings: { maxTokens: 1_000 } });
    const call = planCall(request, request.models[0]!).call;
    const bound = callCostBound(call);
    // The most believable usage: the whole context in, the bound (and its tolerance) out.
    const ceiling = providerCost(call.entry.prices, {
      inputTokens: call.entry.contextWindow,
      cachedInputTokens: 0,
      cacheWriteTokens: call.entry.contextWindow,
      outputTokens: bound.outputTokens + OUTPUT_TOLERANCE_TOKENS,
      reasoningTokens: 0,
    });
    fc.assert(
      fc.property(usageOf(protocol.fields), (usage) => {
        let reply: ModelReply;
        try {
          reply = protocol.parse(protocol.answer(usage));
        } catch (error) {
          // An answer the adapter cannot read is a failed call (it costs nothing), never a crash.
          expect(error).toBeInstanceOf(UpstreamError);
          return;
        }
        const charge = chargeCall(call, reply.usage, reply.output, Date.now());
        // Never free: every call sends input, and this one answered text.
        expect(charge.kind === 'observed' ? charge.providerCost : charge.estimatedCost, JSON.stringify(usage)).toBeGreaterThan(0);
        if (charge.kind === 'observed') {
          expect(Number.isFinite(charge.providerCost)).toBe(true);
          expect(charge.providerCost).toBeGreaterThanOrEqual(0);
          expect(charge.providerCost).toBeLessThanOrEqual(ceiling);
          // And within the call's hold: a usage believed is never one that costs more than was reserved for it.
          expect(charge.providerCost, JSON.stringify(usage)).toBeLessThanOrEqual(bound.usd);
          for (const count of Object.values(charge.usage)) expect(Number.isSafeInteger(count) && count >= 0).toBe(true);
        } else {
          expect(Number.isFinite(charge.estimatedCost)).toBe(true);
          expect(charge.estimatedCost).toBeGreaterThanOrEqual(0);
          expect(charge.estimatedCost).toBeLessThanOrEqual(bound.usd);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('Hostile usage blocks through the gateway', () => {
  let host: LocalHost;
  beforeAll(async () => {
    host = await startTestHost();
  });
  afterAll(async () => {
    await host?.close();
  });

  it('answers, logs and settles every request, and never charges more than was reserved (40 vendor answers)', async () => {
    const payload = { prompt: 'Say hello.', models: ['fam_e-gpt-oss-120b', 'fam_k-8b'], generation_settings: { maxTokens: 200 } };
    const estimate = estimateMicroCredits(validatePromptRequest(payload), host.gateway.config);
    const { accountId, auth } = await openTestAccount(host, 40 * estimate);
    const cerebras = PROTOCOLS['openai-chat (Cerebras)']!;
    const samples = fc.sample(usageOf(cerebras.fields), { numRuns: 40, seed: 20261123 });
    let charged = 0;
    for (const usage of samples) {
      host.simulator.reset();
      host.simulator.setFault({ kind: 'status', status: 200, provider: 'cerebras', body: cerebras.answer(usage) });
      const answer = await post(host, payload, auth);
      const context = JSON.stringify(usage);
      expect(answer.status, context).toBe(200);
      expect(
        answer.body.results.map((r: { status: string }) => r.status),
        context,
      ).toEqual(['completed', 'completed']);
      const micro = Math.round(answer.body.creditsUsed * 1e6);
      expect(micro, context).toBeLessThanOrEqual(estimate);
      // The prompt log and the ledger say what the answer says was charged.
      expect(await host.gateway.promptLogs.get(answer.body.promptLogId), context).toMatchObject({ creditsUsedMicro: micro });
      const settlement = (await host.gateway.ledger.list(accountId)).filter((entry) => entry.requestId === answer.body.promptLogId);
      expect(settlement, context).toMatchObject([{ kind: 'settle', amountMicro: -micro, chargedMicro: micro }]);
      charged += micro;
    }
    const final = await balanceOf(host, accountId);
    expect(final).toBe(40 * estimate - charged);
    expect(final).toBeGreaterThanOrEqual(0);
    expect((await host.gateway.accounts.get(accountId))!.reservations).toEqual({});
    expect(await host.gateway.credits.ledgerSum(accountId)).toBe(final);
  });
});
