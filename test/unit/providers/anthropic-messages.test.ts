import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../../shared/catalog/types.js';
import { chargeCall } from '../../../shared/pricing/charge.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { anthropicMessages, anthropicOutputBound, ANTHROPIC_VERSION } from '../../../shared/providers/anthropic-messages/index.js';
import { errorBodyToUpstreamError } from '../../../shared/providers/anthropic-messages/errors.js';
import { toMessagesRequest } from '../../../shared/providers/anthropic-messages/request.js';
import { fromMessagesResponse } from '../../../shared/providers/anthropic-messages/response.js';
import { MessagesStream } from '../../../shared/providers/anthropic-messages/stream.js';
import { planThinking } from '../../../shared/providers/anthropic-messages/thinking.js';
import { toUsage } from '../../../shared/providers/anthropic-messages/usage.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { schemaInstruction } from '../../../shared/providers/structured-output.js';
import type { ModelCall } from '../../../shared/providers/types.js';
import { catalogEntry as model, scriptedVendor } from '../../support/model-calls.js';

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../../fixtures/anthropic-messages/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
}

const SONNET = model('fam_a-sonnet-4-6');
const OPUS_46 = model('fam_a-opus-4-6');
const OPUS_47 = model('fam_a-opus-4-7');
const HAIKU = model('fam_a-haiku-4-5');

function call(overrides: Partial<ModelCall> = {}): ModelCall {
  return { entry: SONNET, system: [], history: [], prompt: 'Compare two ways to cache HTTP responses.', attachments: [], maxTokens: 4096, tuning: {}, ...overrides };
}

/** A catalog entry with a smaller output maximum, for the cap rules. */
function withMaxOutput(entry: ModelEntry, maxOutputTokens: number): ModelEntry {
  return { ...entry, maxOutputTokens };
}

const SCHEMA = {
  type: 'object',
  properties: { verdict: { type: 'string' }, reasons: { type: 'array', items: { type: 'string' } } },
  required: ['verdict', 'reasons'],
  additionalProperties: false,
};

describe('Function: toMessagesRequest', () => {
  it('maps a bare call to model, max_tokens and one user message', () => {
    const { body, warnings } = toMessagesRequest(call());

    expect(body).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'Compare two ways to cache HTTP responses.' }],
    });
    expect(warnings).toEqual([]);
  });

  it('sends the account a call is for as metadata.user_id, and no metadata without one', () => {
    expect(toMessagesRequest(call({ endUser: 'acct_01jz8k2v7c0000000000000000' })).body.metadata).toEqual({ user_id: 'acct_01jz8k2v7c0000000000000000' });
    expect(toMessagesRequest(call()).body).not.toHaveProperty('metadata');
  });

  it('passes system blocks through in order with cache_control exactly as written', () => {
    const { body } = toMessagesRequest(
      call({
        system: [
          { type: 'text', text: 'You are a contracts analyst.' },
          { type: 'text', text: 'Long reference document.', cache_control: { type: 'ephemeral' } },
        ],
      }),
    );

    expect(body.system).toEqual([
      { type: 'text', text: 'You are a contracts analyst.' },
      { type: 'text', text: 'Long reference document.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.system?.[0]).not.toHaveProperty('cache_control');
  });

  it('maps history turns one for one, block form only for a turn with a breakpoint', () => {
    const { body } = toMessagesRequest(
      call({
        history: [
          { role: 'user', content: 'First question.' },
          { role: 'assistant', content: 'First answer.', cache_control: { type: 'ephemeral' } },
          { role: 'user', content: 'A note.' },
        ],
        prompt: 'Second question.',
      }),
    );

    expect(body.messages).toEqual([
      { role: 'user', content: 'First question.' },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer.', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: 'A note.' },
      { role: 'user', content: 'Second question.' },
    ]);
  });

  it('maps images and PDFs to base64 image and document blocks before the prompt text', () => {
    const { body } = toMessagesRequest(
      call({
        attachments: [
          { name: 'chart.png', type: 'image/png', base64: 'iVBORw0KGgo=' },
          { name: 'photo.jpg', type: 'image/jpeg', base64: '/9j/4AAQSkZJRg==' },
          { name: 'contract.pdf', type: 'application/pdf', base64: 'JVBERi0xLjQK' },
        ],
      }),
    );

    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
          { type: 'text', text: 'Compare two ways to cache HTTP responses.' },
        ],
      },
    ]);
  });

  it.each([
    { name: 'temperature alone', temperature: 0.2, topP: undefined, sent: { temperature: 0.2 }, warning: undefined },
    { name: 'topP alone', temperature: undefined, topP: 0.9, sent: { top_p: 0.9 }, warning: undefined },
    { name: 'temperature 0', temperature: 0, topP: undefined, sent: { temperature: 0 }, warning: undefined },
    { name: 'both (top_p dropped)', temperature: 0.7, topP: 0.9, sent: { temperature: 0.7 }, warning: 'topP 0.9 not sent: Claude models accept temperature or top_p, not both' },
    {
      name: 'temperature above 1 (lowered)',
      temperature: 1.5,
      topP: undefined,
      sent: { temperature: 1 },
      warning: "temperature 1.5 is above Anthropic's maximum of 1; 1 was sent",
    },
  ])('maps sampling settings: $name', ({ temperature, topP, sent, warning }) => {
    const { body, warnings } = toMessagesRequest(call({ temperature, topP }));

    expect({ temperature: body.temperature, top_p: body.top_p }).toEqual({ temperature: undefined, top_p: undefined, ...sent });
    expect(warnings).toEqual(warning ? [warning] : []);
  });

  it('appends the schema instruction as a last system block, after the caller’s breakpoints', () => {
    const system = [{ type: 'text' as const, text: 'Reference.', cache_control: { type: 'ephemeral' as const } }];
    const { body, warnings } = toMessagesRequest(call({ system, responseSchema: SCHEMA }));

    expect(body.system).toEqual([
      { type: 'text', text: 'Reference.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: schemaInstruction(SCHEMA) },
    ]);
    expect(body.output_config).toBeUndefined();
    expect(warnings).toEqual([]);
    expect(system).toHaveLength(1);
  });

  it('sends the schema instruction as the only system block when the caller gave none', () => {
    const { body } = toMessagesRequest(call({ entry: HAIKU, responseSchema: SCHEMA }));

    expect(body.system).toEqual([{ type: 'text', text: schemaInstruction(SCHEMA) }]);
  });

  it('uses output_config.format for an entry marked native', () => {
    const native: ModelEntry = { ...SONNET, capabilities: { ...SONNET.capabilities, structuredOutput: 'native' } };
    const { body } = toMessagesRequest(call({ entry: native, responseSchema: SCHEMA }));

    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
    expect(body.system).toBeUndefined();
  });

  it('sends no thinking when thinkingBudget is 0', () => {
    const { body, warnings } = toMessagesRequest(call({ tuning: { thinkingBudget: 0 } }));

    expect(body.thinking).toBeUndefined();
    expect(body.max_tokens).toBe(4096);
    expect(warnings).toEqual([]);
  });

  it('enables thinking with the budget on top of the answer’s allowance', () => {
    const { body, warnings } = toMessagesRequest(call({ entry: OPUS_46, maxTokens: 2000, tuning: { thinkingBudget: 8000 } }));

    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(body.max_tokens).toBe(10_000);
    expect(warnings).toEqual([]);
  });

  it.each([
    { name: 'temperature 0.5', temperature: 0.5, topP: undefined, sent: {}, warnings: ['temperature 0.5 not sent: Anthropic allows only temperature 1 with extended thinking'] },
    { name: 'temperature 1', temperature: 1, topP: undefined, sent: { temperature: 1 }, warnings: [] },
    { name: 'topP 0.9', temperature: undefined, topP: 0.9, sent: {}, warnings: ['topP 0.9 not sent: Anthropic restricts top_p with extended thinking'] },
    {
      name: 'temperature 0.3 and topP 0.96',
      temperature: 0.3,
      topP: 0.96,
      sent: {},
      warnings: ['temperature 0.3 not sent: Anthropic allows only temperature 1 with extended thinking', 'topP 0.96 not sent: Anthropic restricts top_p with extended thinking'],
    },
  ])('drops sampling settings thinking forbids: $name', ({ temperature, topP, sent, warnings }) => {
    const result = toMessagesRequest(call({ temperature, topP, tuning: { thinkingBudget: 2048 } }));

    expect(result.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect({ temperature: result.body.temperature, top_p: result.body.top_p }).toEqual({ temperature: undefined, top_p: undefined, ...sent });
    expect(result.warnings).toEqual(warnings);
  });

  it.each([
    [1024, 'low'],
    [1025, 'medium'],
    [8192, 'medium'],
    [16_000, 'high'],
    [16_385, 'xhigh'],
    [32_000, 'xhigh'],
  ])('maps thinkingBudget %i to adaptive thinking at effort %s on claude-opus-4-7, the budget as headroom (the budget had reached the model in no form)', (budget, effort) => {
    const { body, warnings } = toMessagesRequest(call({ entry: OPUS_47, maxTokens: 4096, tuning: { thinkingBudget: budget } }));

    expect(body.thinking).toEqual({ type: 'adaptive' });
    expect(body.max_tokens).toBe(4096 + budget);
    expect(body.output_config).toEqual({ effort });
    expect(warnings).toEqual([
      `fam_a-opus-4-7 takes an effort, not a thinking budget: thinkingBudget ${budget} was sent as effort '${effort}', the model deciding how much to think within max_tokens ${4096 + budget}`,
    ]);
  });

  it('sends the effort beside a native schema in output_config', () => {
    const schema = { type: 'object', properties: {}, additionalProperties: false };
    const { body } = toMessagesRequest(
      call({ entry: { ...OPUS_47, capabilities: { ...OPUS_47.capabilities, structuredOutput: 'native' } }, responseSchema: schema, tuning: { thinkingBudget: 2048 } }),
    );

    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema }, effort: 'medium' });
  });

  it.each([
    { name: 'temperature', temperature: 0.2, topP: undefined, warning: 'fam_a-opus-4-7 rejects temperature and top_p: temperature not sent' },
    { name: 'topP', temperature: undefined, topP: 0.8, warning: 'fam_a-opus-4-7 rejects temperature and top_p: topP not sent' },
    { name: 'both', temperature: 1, topP: 0.8, warning: 'fam_a-opus-4-7 rejects temperature and top_p: temperature and topP not sent' },
  ])('drops $name on claude-opus-4-7 with or without thinking', ({ temperature, topP, warning }) => {
    for (const tuning of [{}, { thinkingBudget: 2048 }]) {
      const { body, warnings } = toMessagesRequest(call({ entry: OPUS_47, temperature, topP, tuning }));

      expect(body).not.toHaveProperty('temperature');
      expect(body).not.toHaveProperty('top_p');
      expect(warnings).toContain(warning);
    }
  });

  it('does not send thinking to a model without extended thinking, and says so', () => {
    const { body, warnings } = toMessagesRequest(call({ entry: HAIKU, tuning: { thinkingBudget: 2048 } }));

    expect(body.thinking).toBeUndefined();
    expect(body.max_tokens).toBe(4096);
    expect(warnings).toEqual(['fam_a-haiku-4-5 has no extended thinking; thinkingBudget was not sent']);
  });
});

describe('Function: planThinking', () => {
  it.each([
    { name: 'room for both', max: 64_000, maxTokens: 4096, budget: 10_000, sent: 14_096, budgetTokens: 10_000, warning: undefined },
    {
      name: 'cap shared, budget still fits',
      max: 64_000,
      maxTokens: 60_000,
      budget: 10_000,
      sent: 64_000,
      budgetTokens: 10_000,
      warning: "max_tokens capped at fam_a-sonnet-4-6's maximum of 64000: thinking (up to 10000) and the answer share it",
    },
    {
      name: 'cap below the budget lowers it',
      max: 8000,
      maxTokens: 4096,
      budget: 10_000,
      sent: 8000,
      budgetTokens: 6976,
      warning: 'thinkingBudget lowered from 10000 to 6976: fam_a-sonnet-4-6 allows 8000 output tokens, thinking included',
    },
    {
      name: 'lowered budget stays at the minimum',
      max: 1500,
      maxTokens: 1000,
      budget: 4096,
      sent: 1500,
      budgetTokens: 1024,
      warning: 'thinkingBudget lowered from 4096 to 1024: fam_a-sonnet-4-6 allows 1500 output tokens, thinking included',
    },
    {
      name: 'no room for the minimum budget',
      max: 1024,
      maxTokens: 1000,
      budget: 2048,
      sent: 1024,
      budgetTokens: undefined,
      warning: 'fam_a-sonnet-4-6 allows 1024 output tokens, too few for the minimum thinking budget of 1024: thinking was not enabled',
    },
  ])('plans max_tokens and budget_tokens: $name', ({ max, maxTokens, budget, sent, budgetTokens, warning }) => {
    const input = { entry: withMaxOutput(SONNET, max), maxTokens, tuning: { thinkingBudget: budget } };
    const plan = planThinking(input);

    expect(plan.maxTokens).toBe(sent);
    expect(plan.thinking).toEqual(budgetTokens === undefined ? undefined : { type: 'enabled', budget_tokens: budgetTokens });
    expect(plan.warnings).toEqual(warning ? [warning] : []);
    if (plan.thinking?.type === 'enabled') expect(plan.thinking.budget_tokens).toBeLessThan(plan.maxTokens);
  });

  it('caps the adaptive allowance at the model maximum too', () => {
    const plan = planThinking({ entry: OPUS_47, maxTokens: 120_000, tuning: { thinkingBudget: 32_000 } });

    expect(plan).toEqual({
      maxTokens: 128_000,
      thinking: { type: 'adaptive' },
      effort: 'xhigh',
      warnings: [
        "fam_a-opus-4-7 takes an effort, not a thinking budget: thinkingBudget 32000 was sent as effort 'xhigh', the model deciding how much to think within max_tokens 128000",
      ],
    });
  });
});

describe('Function: anthropicOutputBound', () => {
  it.each([
    { name: 'no thinking', entry: SONNET, maxTokens: 4096, tuning: {}, allowance: 4096 },
    { name: 'thinking', entry: SONNET, maxTokens: 4096, tuning: { thinkingBudget: 8000 }, allowance: 12_096 },
    { name: 'thinking at the cap', entry: SONNET, maxTokens: 120_000, tuning: { thinkingBudget: 32_000 }, allowance: 128_000 },
    { name: 'adaptive', entry: OPUS_47, maxTokens: 4096, tuning: { thinkingBudget: 1024 }, allowance: 5120 },
    { name: 'model without thinking', entry: HAIKU, maxTokens: 4096, tuning: { thinkingBudget: 8000 }, allowance: 4096 },
  ])('equals the max_tokens sent: $name', ({ entry, maxTokens, tuning, allowance }) => {
    expect(anthropicOutputBound({ entry, maxTokens, tuning })).toBe(allowance);
    expect(toMessagesRequest(call({ entry, maxTokens, tuning })).body.max_tokens).toBe(allowance);
  });
});

describe('Function: fromMessagesResponse', () => {
  it.each([
    {
      name: 'plain',
      entry: SONNET,
      output: 'Caching at the edge cuts latency; caching in the application keeps control over invalidation.',
      usage: { inputTokens: 2095, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 503 },
      // 2095 x $3 + 503 x $15 per million
      cost: 0.01383,
    },
    {
      name: 'cache-write',
      entry: SONNET,
      output: "The contract's main obligations are confidentiality, a 30-day payment term and a one-year warranty.",
      usage: { inputTokens: 188_107, cachedInputTokens: 0, cacheWriteTokens: 188_086, outputTokens: 393 },
      // 21 x $3 + 188086 x $3.75 + 393 x $15 per million
      cost: 0.7112805,
    },
    {
      name: 'cache-read',
      entry: SONNET,
      output: 'The warranty runs for one year from delivery and covers defects in materials and workmanship.',
      usage: { inputTokens: 188_120, cachedInputTokens: 188_086, cacheWriteTokens: 0, outputTokens: 287 },
      // 34 x $3 + 188086 x $0.30 + 287 x $15 per million
      cost: 0.0608328,
    },
    {
      name: 'thinking',
      entry: OPUS_46,
      output: 'Yes, there are infinitely many prime numbers such that n mod 4 = 3.',
      usage: { inputTokens: 52, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2741 },
      // 52 x $5 + 2741 x $25 per million (thinking billed as output)
      cost: 0.068785,
    },
    {
      name: 'structured',
      entry: HAIKU,
      output: '{"verdict":"edge","reasons":["lower latency","offloads the origin"]}',
      usage: { inputTokens: 412, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 24 },
      // 412 x $1 + 24 x $5 per million
      cost: 0.000532,
    },
  ])('maps the $name fixture, usage and cost to the last digit', ({ name, entry, output, usage, cost }) => {
    const reply = fromMessagesResponse(fixture(name));

    // The input it reported travels as a hint too, for the estimate should its usage not be believed.
    expect(reply).toEqual({ output, usage, finishReason: 'end_turn', warnings: [], hints: expect.objectContaining({ inputTokens: usage.inputTokens }) });
    expect(providerCost(entry.prices, reply.usage!)).toBe(cost);
  });

  it('returns the structured fixture as parseable JSON text', () => {
    expect(JSON.parse(fromMessagesResponse(fixture('structured')).output)).toEqual({ verdict: 'edge', reasons: ['lower latency', 'offloads the origin'] });
  });

  it('says when the output was cut at max_tokens', () => {
    const reply = fromMessagesResponse(fixture('max-tokens'));

    expect(reply.finishReason).toBe('max_tokens');
    expect(reply.output).toBe('There are three common places to cache HTTP responses: the browser, a shared');
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
  });

  it('joins several text blocks and skips thinking blocks', () => {
    const body = {
      ...fixture('plain'),
      content: [
        { type: 'thinking', thinking: 'hidden', signature: 'sig' },
        { type: 'text', text: 'Part one. ' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Part two.' },
      ],
    };

    expect(fromMessagesResponse(body).output).toBe('Part one. Part two.');
  });

  it('returns empty output, cut at max_tokens, when thinking used the whole allowance, and bills that allowance', () => {
    const thinking = call({ maxTokens: 1024, tuning: { thinkingBudget: 2048 } });
    const allowance = toMessagesRequest(thinking).body.max_tokens;
    expect(allowance).toBe(1024 + 2048);
    const body = {
      ...fixture('max-tokens'),
      content: [{ type: 'thinking', thinking: 'Let me see', signature: 'sig' }],
      usage: { input_tokens: 18, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: allowance },
    };
    const reply = fromMessagesResponse(body);

    expect(reply.output).toBe('');
    // Every token of the allowance, all of it thinking (which Anthropic counts as output and does not report apart).
    expect(reply.usage).toEqual({ inputTokens: 18, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: allowance });
    expect([reply.cutAtMaxTokens, reply.warnings]).toEqual([true, []]);
    // Believed though the answer shows no text: charged the whole allowance at the output price.
    expect(chargeCall(thinking, reply.usage, reply.output, 0)).toEqual({ kind: 'observed', usage: reply.usage, providerCost: providerCost(SONNET.prices, reply.usage!) });
    expect(providerCost(SONNET.prices, reply.usage!)).toBeCloseTo((18 * 3 + allowance * 15) / 1e6, 12);
  });

  it.each([
    { stop: 'refusal', warning: 'The model declined to answer (stop_reason refusal)' },
    { stop: 'model_context_window_exceeded', warning: "The output was cut at the model's context window" },
    // Named, and cut short (a judge's verdict is not read from it): it had been taken as whole, without a word.
    { stop: 'pause_turn', warning: 'The provider ended the output with stop_reason pause_turn' },
    { stop: 'some_new_reason', warning: 'The provider ended the output with stop_reason some_new_reason' },
  ])('warns on stop_reason $stop', ({ stop, warning }) => {
    expect(fromMessagesResponse({ ...fixture('plain'), stop_reason: stop })).toMatchObject({ warnings: [warning], cutShort: true });
    expect(fromMessagesResponse(fixture('plain'))).not.toHaveProperty('cutShort');
    for (const ended of ['end_turn', 'stop_sequence', 'tool_use']) expect(fromMessagesResponse({ ...fixture('plain'), stop_reason: ended }), ended).toMatchObject({ warnings: [] });
  });

  it('fails an answer of no text and no stop reason as malformed, whole or streamed, charged the usage reported with it, as Converse does (it had been a completed empty answer, charged an estimate)', () => {
    expect(() => fromMessagesResponse({ type: 'message', role: 'assistant', content: [] })).toThrow(
      expect.objectContaining({ code: 'upstream_malformed_response', message: 'The provider answered without text or a stop reason' }),
    );
    expect(() => fromMessagesResponse({ type: 'message', role: 'assistant', content: [], usage: { input_tokens: 1000, output_tokens: 5 } })).toThrow(
      expect.objectContaining({
        details: expect.objectContaining({ billed: expect.objectContaining({ usage: expect.objectContaining({ inputTokens: 1000, outputTokens: 5 }) }) }),
      }),
    );
    const streamed = new MessagesStream(() => undefined);
    for (const data of [{ type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }, { type: 'message_stop' }])
      streamed.onEvent({ event: 'message', data: JSON.stringify(data) });
    expect(() => streamed.finish()).toThrow(expect.objectContaining({ code: 'upstream_malformed_response', message: 'The provider answered without text or a stop reason' }));
    // Whitespace is no text either (it had completed where an empty text failed).
    expect(() => fromMessagesResponse({ type: 'message', role: 'assistant', content: [{ type: 'text', text: ' \n' }] })).toThrow(
      expect.objectContaining({ code: 'upstream_malformed_response' }),
    );
    // Streamed, its thinking counts toward the estimate its billed usage may need, as a whole answer's thinking blocks do (it had been dropped).
    const thinking = new MessagesStream(() => undefined);
    for (const data of [
      { type: 'message_start', message: { usage: { input_tokens: 20, output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Weighing it. '.repeat(500) } },
      { type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 3 } },
      { type: 'message_stop' },
    ])
      thinking.onEvent({ event: 'message', data: JSON.stringify(data) });
    let billed: unknown;
    try {
      thinking.finish();
    } catch (error) {
      billed = (error as { details?: { billed?: unknown } }).details?.billed;
    }
    expect(billed).toMatchObject({ hints: { unseenOutputTokens: expect.any(Number) } });
    expect((billed as { hints: { unseenOutputTokens: number } }).hints.unseenOutputTokens).toBeGreaterThan(1000);
    // With text, or with a stop reason, it is an answer.
    expect(fromMessagesResponse({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hi' }] }).output).toBe('Hi');
    expect(fromMessagesResponse({ type: 'message', role: 'assistant', content: [], stop_reason: 'end_turn' }).output).toBe('');
  });

  it.each([
    { name: 'absent', usage: undefined },
    { name: 'null', usage: null },
    { name: 'without output_tokens', usage: { input_tokens: 10 } },
    { name: 'with a negative count', usage: { input_tokens: -1, output_tokens: 5 } },
    { name: 'with a fractional count', usage: { input_tokens: 10.5, output_tokens: 5 } },
    { name: 'with a mistyped cache class', usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: '7' } },
  ])('drops usage $name and warns that cost is unavailable', ({ usage }) => {
    const reply = fromMessagesResponse({ ...fixture('plain'), usage });

    expect(reply.usage).toBeUndefined();
    expect(reply.output).not.toBe('');
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).toEqual([]);
  });

  it.each([
    { name: 'a non-object body', body: 'Overloaded' },
    { name: 'null', body: null },
    { name: 'an array', body: [] },
    { name: 'a message without content', body: { id: 'msg_01', type: 'message', role: 'assistant', stop_reason: 'end_turn' } },
    { name: 'content that is not a list', body: { type: 'message', content: 'text' } },
  ])('rejects $name as a malformed response', ({ body }) => {
    expect(() => fromMessagesResponse(body)).toThrow(expect.objectContaining({ code: 'upstream_malformed_response' }));
  });

  it.each([
    { name: 'error-overloaded', code: 'upstream_overloaded', retryable: true, message: 'Overloaded' },
    { name: 'error-api', code: 'upstream_error', retryable: true, message: 'Internal server error' },
    {
      name: 'error-invalid-request',
      code: 'upstream_error',
      retryable: false,
      message: 'max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6',
    },
  ])('maps an error body that came with 200 ($name)', ({ name, code, retryable, message }) => {
    let caught: unknown;
    try {
      fromMessagesResponse(fixture(name));
    } catch (error) {
      caught = error;
    }

    expect(caught).toBeInstanceOf(UpstreamError);
    expect(caught).toMatchObject({ code, message, retryable, details: { upstreamStatus: 200 } });
  });
});

describe('Function: errorBodyToUpstreamError', () => {
  it("names an error type that is no word of Anthropic's 'unrecognised', not as the vendor sent it (a megabyte)", () => {
    const error = errorBodyToUpstreamError({ error: { type: 'T'.repeat(1_000_000) } }, 200);

    expect(error.message).toBe('The provider answered with an unrecognised');
    expect(error.code).toBe('upstream_error');
  });
});

describe('Function: toUsage', () => {
  it('treats missing or null cache classes as zero', () => {
    expect(toUsage({ input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: null })).toEqual({
      inputTokens: 10,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 5,
    });
  });

  it('adds cache reads and writes to input_tokens for the total input', () => {
    expect(toUsage({ input_tokens: 50, output_tokens: 5, cache_creation_input_tokens: 1200, cache_read_input_tokens: 3000 })).toEqual({
      inputTokens: 4250,
      cachedInputTokens: 3000,
      cacheWriteTokens: 1200,
      outputTokens: 5,
    });
  });
});

describe('Object: anthropicMessages', () => {
  describe('Method: send', () => {
    const vendor = scriptedVendor('sk-ant-test');
    const answering = vendor.answering;

    it('POSTs the mapped body to {baseUrl}/messages with x-api-key and anthropic-version', async () => {
      const endpoint = await answering(200, fixture('plain'));
      const modelCall = call({ temperature: 0.4, system: [{ type: 'text', text: 'Be brief.' }] });

      await anthropicMessages.prepare(modelCall, endpoint).send(new AbortController().signal);

      expect(vendor.calls).toHaveLength(1);
      const [sent] = vendor.calls;
      expect([sent!.method, sent!.path]).toEqual(['POST', '/v1/messages']);
      expect(sent!.headers).toMatchObject({ 'x-api-key': 'sk-ant-test', 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' });
      expect(JSON.parse(sent!.body)).toEqual(toMessagesRequest(modelCall).body);
    });

    it('sends no x-api-key when the endpoint has no key', async () => {
      const { baseUrl } = await answering(200, fixture('plain'));

      await anthropicMessages.prepare(call(), { baseUrl, simulated: true }).send(new AbortController().signal);

      expect(vendor.calls[0]!.headers).not.toHaveProperty('x-api-key');
    });

    it('puts the request warnings before the response warnings', async () => {
      const endpoint = await answering(200, { ...fixture('max-tokens'), usage: null });

      const reply = await anthropicMessages.prepare(call({ temperature: 0.5, tuning: { thinkingBudget: 2048 } }), endpoint).send(new AbortController().signal);

      expect(reply.warnings).toEqual(['temperature 0.5 not sent: Anthropic allows only temperature 1 with extended thinking']);
    });

    it.each([
      { name: 'error-rate-limit', status: 429, retryAfter: '7', code: 'upstream_rate_limited', retryable: true, retryAfterMs: 7000 },
      { name: 'error-overloaded', status: 529, retryAfter: undefined, code: 'upstream_overloaded', retryable: true, retryAfterMs: undefined },
      { name: 'error-api', status: 500, retryAfter: undefined, code: 'upstream_error', retryable: true, retryAfterMs: undefined },
      { name: 'error-invalid-request', status: 400, retryAfter: undefined, code: 'upstream_error', retryable: false, retryAfterMs: undefined },
    ])('maps a $status $name answer to an UpstreamError', async ({ name, status, retryAfter, code, retryable, retryAfterMs }) => {
      const body = fixture(name);
      const endpoint = await answering(status, body, retryAfter ? { 'retry-after': retryAfter } : {});

      const error = await anthropicMessages
        .prepare(call(), endpoint)
        .send(new AbortController().signal)
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({
        code,
        message: (body['error'] as { message: string }).message,
        retryable,
        details: { upstreamStatus: status, retryAfterMs },
      });
      expect((error as Error).message).not.toContain('sk-ant-test');
    });
  });
});

describe('Class: MessagesStream', () => {
  /** A stream of `message_delta` usage `final`, after message_start's placeholder output count of 1. */
  function streamed(final: Record<string, unknown>) {
    const stream = new MessagesStream(() => undefined);
    const events = [
      { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hostile vendor answer text.' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: final },
      { type: 'message_stop' },
    ];
    for (const data of events) stream.onEvent({ event: data.type, data: JSON.stringify(data) });
    return stream.finish();
  }

  it('takes the output count from message_delta and the input classes from message_start', () => {
    expect(streamed({ output_tokens: 7 }).usage).toMatchObject({ inputTokens: 5, outputTokens: 7 });
  });

  it("keeps message_start's input (all its classes) and the thinking streamed for a stream stopped before its usage", () => {
    const stream = new MessagesStream(() => undefined);
    const events = [
      { type: 'message_start', message: { usage: { input_tokens: 30_000, cache_read_input_tokens: 2_000, cache_creation_input_tokens: 'lies', output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'abcd'.repeat(100) } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '134017' } },
    ];
    for (const data of events) stream.onEvent({ event: data.type, data: JSON.stringify(data) });
    // 100 tokens of thinking, never shown; the input as the vendor counted it, not as its text would be estimated.
    expect(stream.partial()).toEqual({ output: '134017', hints: { inputTokens: 32_000, unseenOutputTokens: 100 } });
  });

  describe('a stream stopped after message_start, before its usage', () => {
    /** A 1.5 MB cached system prompt, a short question, and the answer's start: the stream stops before message_delta. */
    const big = 'lorem ipsum dolor sit amet '.repeat(7_000);
    const cached = call({
      system: Array.from({ length: 8 }, (_, i) => ({ type: 'text' as const, text: big, ...(i === 7 ? { cache_control: { type: 'ephemeral' as const } } : {}) })),
      prompt: 'Summarise.',
    });
    function stopped(usage: Record<string, unknown>) {
      const stream = new MessagesStream(() => undefined);
      const events = [
        { type: 'message_start', message: { usage: { ...usage, output_tokens: 1 } } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'abcd'.repeat(10) } },
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'The text says lorem ipsum.' } },
      ];
      for (const data of events) stream.onEvent({ event: data.type, data: JSON.stringify(data) });
      return stream.partial();
    }

    it('is charged the cache reads it reported at the cache-read price, the output counted from its text and thinking', () => {
      const partial = stopped({ input_tokens: 8, cache_read_input_tokens: 350_000, cache_creation_input_tokens: 0 });
      expect(partial.usage).toBeUndefined();
      const charge = chargeCall(cached, partial.usage, partial.output, Date.now(), partial.hints);
      // 26 characters of text (25 letters and spaces, 4 a token, and a full stop, a token) and 40 letters of thinking: 7.25 + 10, 18 output tokens.
      const classed = { inputTokens: 350_008, cachedInputTokens: 350_000, cacheWriteTokens: 0, outputTokens: 18, reasoningTokens: 0 };
      expect(charge).toMatchObject({ kind: 'estimated', estimatedCost: providerCost(SONNET.prices, classed) });
      expect((charge as { warning: string }).warning).toMatch(/350000 of them cache reads and 0 cache writes, each at its price/);
      // Not the whole input at the input price (about 10 times as much).
      expect((charge as { estimatedCost: number }).estimatedCost * 5).toBeLessThan(providerCost(SONNET.prices, { ...classed, cachedInputTokens: 0 }));
    });

    it('is charged cache writes at the cache-write price', () => {
      const partial = stopped({ input_tokens: 8, cache_read_input_tokens: 0, cache_creation_input_tokens: 350_000 });
      const charge = chargeCall(cached, partial.usage, partial.output, Date.now(), partial.hints);
      expect(charge).toMatchObject({
        estimatedCost: providerCost(SONNET.prices, { inputTokens: 350_008, cachedInputTokens: 0, cacheWriteTokens: 350_000, outputTokens: 18, reasoningTokens: 0 }),
      });
    });

    it('is charged the uncached estimate where the classes it reported cannot be true of the call', () => {
      // 350,000 cache reads for a prompt of a few words: believed, they would charge for input never sent.
      const short = call({ prompt: 'Say hello.' });
      const partial = stopped({ input_tokens: 8, cache_read_input_tokens: 350_000 });
      const charge = chargeCall(short, partial.usage, partial.output, Date.now(), partial.hints);
      expect((charge as { warning: string }).warning).toMatch(/at uncached prices/);
    });
  });

  it.each([[{ input_tokens: null, output_tokens: null }], [{}]])(
    "reports no usage when message_delta carries no output count (%j): message_start's 1 is a placeholder, never charged as the call's",
    (final) => {
      expect(streamed(final).usage).toBeUndefined();
    },
  );
});

describe('Function: fromMessagesResponse, a lying stop_reason', () => {
  it.each(['toString', '__proto__', 'constructor', 'OTHER sk-ant-SECRET the prompt'])(
    'repeats %j as no vendor word: the warnings stay strings, the reason unrecognised',
    (reason) => {
      const reply = fromMessagesResponse({ ...fixture('plain'), stop_reason: reason });
      expect(reply.finishReason).toBe('unrecognised');
      for (const warning of reply.warnings) expect(typeof warning).toBe('string');
      expect(JSON.stringify(reply)).not.toMatch(/SECRET|prompt/);
    },
  );
});
