import { readFileSync } from 'node:fs';
import { describe, it, expect } from 'vitest';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { dialectFor } from '../../../shared/providers/openai-chat/dialects.js';
import { fromErrorResponse, vendorMessage } from '../../../shared/providers/openai-chat/errors.js';
import { toChatRequest } from '../../../shared/providers/openai-chat/request.js';
import { fromChatResponse, toUsage } from '../../../shared/providers/openai-chat/response.js';
import { ChatStream } from '../../../shared/providers/openai-chat/stream.js';
import { finishStream } from '../../../shared/providers/stream-http.js';
import { defaultErrorMapper } from '../../../shared/providers/http.js';
import { schemaInstruction } from '../../../shared/providers/structured-output.js';
import type { ModelCall, ModelReply } from '../../../shared/providers/types.js';
import { providerCost } from '../../../shared/pricing/cost.js';
import { catalogEntry as entry, thrownUpstream as thrown } from '../../support/model-calls.js';
const FIXTURES = new URL('../../fixtures/openai-chat/', import.meta.url);

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as unknown;
}

interface ErrorFixture {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function errorFixture(name: string): ErrorFixture {
  return fixture(name) as ErrorFixture;
}

function call(id: string, overrides: Partial<ModelCall> = {}): ModelCall {
  return {
    entry: entry(id),
    system: [],
    history: [],
    prompt: 'Compare the two caching strategies.',
    attachments: [],
    maxTokens: 1000,
    tuning: {},
    ...overrides,
  };
}

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['winner', 'score'],
  properties: { winner: { type: 'string' }, score: { type: 'number' } },
};
const PNG = { name: 'chart.png', type: 'image/png' as const, base64: 'iVBORw0KGgo=' };
const PDF = { name: 'report.pdf', type: 'application/pdf' as const, base64: 'JVBERi0xLjQ=' };

describe('Function: toChatRequest', () => {
  it('sends the account a call is for as `user` to xAI, Groq and Cerebras, and to no vendor that documents no such field', () => {
    const endUser = 'acct_01jz8k2v7c0000000000000000';
    const sent = Object.fromEntries(
      ['fam_d-4.3', 'fam_i-gpt-oss-20b', 'fam_e-gpt-oss-120b', 'fam_g-large', 'fam_f-v4-flash'].map((id) => [id, toChatRequest(call(id, { endUser })).body.user]),
    );
    expect(sent).toEqual({ 'fam_d-4.3': endUser, 'fam_i-gpt-oss-20b': endUser, 'fam_e-gpt-oss-120b': endUser, 'fam_g-large': undefined, 'fam_f-v4-flash': undefined });
    expect(toChatRequest(call('fam_d-4.3')).body).not.toHaveProperty('user');
  });

  it.each([
    ['fam_d-4.3', 'grok-4.3', 'max_completion_tokens'],
    ['fam_e-gpt-oss-120b', 'gpt-oss-120b', 'max_completion_tokens'],
    ['fam_f-v4-pro', 'deepseek-v4-pro', 'max_tokens'],
    ['fam_g-large', 'mistral-large-2512', 'max_tokens'],
    ['fam_k-8b', 'ministral-8b-2512', 'max_tokens'],
    ['fam_i-gpt-oss-120b', 'openai/gpt-oss-120b', 'max_completion_tokens'],
  ])('maps %s to %s with the output limit under %s', (id, upstream, limitField) => {
    const { body, warnings } = toChatRequest(
      call(id, {
        system: [
          { type: 'text', text: 'You are a cache expert.' },
          { type: 'text', text: 'Answer briefly.', cache_control: { type: 'ephemeral' } },
        ],
        history: [
          { role: 'user', content: 'What is an ETag?' },
          { role: 'assistant', content: 'A validator for a resource version.' },
        ],
        maxTokens: 777,
      }),
    );
    expect(body).toEqual({
      model: upstream,
      messages: [
        { role: 'system', content: 'You are a cache expert.\n\nAnswer briefly.' },
        { role: 'user', content: 'What is an ETag?' },
        { role: 'assistant', content: 'A validator for a resource version.' },
        { role: 'user', content: 'Compare the two caching strategies.' },
      ],
      [limitField]: 777,
      stream: false,
    });
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^cache_control breakpoints have no effect on ${id.replace(/\./g, '\\.')}: `))]);
  });

  it.each([
    ['fam_d-4.3', 'xAI caches prompt prefixes automatically'],
    ['fam_f-v4-pro', 'DeepSeek caches prompt prefixes of 64 tokens or more automatically'],
    ['fam_g-large', 'Mistral caches prompt prefixes automatically'],
    ['fam_i-gpt-oss-120b', 'Groq caches prompt prefixes automatically'],
    ['fam_i-4-scout', 'Groq does not cache prompts for this model'],
  ])('leaves cache_control out for %s, on a system block or a history turn, with the warning the Responses adapter gives: %s', (id, why) => {
    const marked = { cache_control: { type: 'ephemeral' as const } };
    for (const overrides of [
      { system: [{ type: 'text' as const, text: 'Long manual.', ...marked }] },
      { history: [{ role: 'user' as const, content: 'Long manual.', ...marked }] },
    ]) {
      const { body, warnings } = toChatRequest(call(id, overrides));
      expect(JSON.stringify(body)).not.toContain('cache_control');
      expect(warnings).toEqual([`cache_control breakpoints have no effect on ${id}: ${why}`]);
    }
    expect(toChatRequest(call(id, { system: [{ type: 'text', text: 'Long manual.' }] })).warnings).toEqual([]);
  });

  it('sends no system message when there is neither a system prompt nor a schema instruction', () => {
    const { body } = toChatRequest(call('fam_g-small'));
    expect(body.messages).toEqual([{ role: 'user', content: 'Compare the two caching strategies.' }]);
  });

  it.each([
    ['fam_d-4.3', 0.4, 0.9],
    ['fam_g-large', 1.5, 0.5],
    ['fam_i-3.3-70b', 2, 1],
    ['fam_e-gpt-oss-120b', 1.5, 0.95],
  ])('passes temperature and top_p through for %s', (id, temperature, topP) => {
    const { body, warnings } = toChatRequest(call(id, { temperature, topP }));
    expect(body.temperature).toBe(temperature);
    expect(body.top_p).toBe(topP);
    expect(warnings).toEqual([]);
  });

  it.each([
    ['fam_e-gpt-oss-120b', 'Cerebras'],
    ['fam_g-large', 'Mistral'],
    ['fam_l', 'Mistral'],
  ])('brings a temperature above 1.5 into the range of %s (%s) with a warning', (id, vendor) => {
    const { body, warnings } = toChatRequest(call(id, { temperature: 1.8 }));
    expect(body.temperature).toBe(1.5);
    expect(warnings).toEqual([`temperature 1.8 is above the ${vendor} maximum of 1.5; 1.5 was sent`]);
  });

  it('leaves temperature and top_p out for DeepSeek, which ignores them in thinking mode, with warnings', () => {
    const { body, warnings } = toChatRequest(call('fam_f-v4-flash', { temperature: 0.2, topP: 0.5 }));
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_p');
    expect(warnings).toEqual([
      'temperature was not applied: DeepSeek ignores it in thinking mode, which its V4 models use by default',
      'topP was not applied: DeepSeek ignores it in thinking mode, which its V4 models use by default',
    ]);
  });

  it.each([
    ['fam_d-4.3', 'none'],
    ['fam_d-4.3', 'high'],
    ['fam_e-gpt-oss-120b', 'low'],
  ] as const)('sends reasoning_effort for %s as %s', (id, effort) => {
    const { body, warnings } = toChatRequest(call(id, { tuning: { reasoningEffort: effort } }));
    expect(body.reasoning_effort).toBe(effort);
    expect(warnings).toEqual([]);
  });

  it.each(['none', 'low', 'high'] as const)('leaves reasoning_effort %s out for grok-4.20-0309-reasoning, which rejects it, with a warning', (effort) => {
    const { body, warnings } = toChatRequest(call('fam_d-4.20-0309-reasoning', { tuning: { reasoningEffort: effort } }));
    expect(body).not.toHaveProperty('reasoning_effort');
    expect(warnings).toEqual(['reasoningEffort was not applied: xAI does not accept reasoning_effort for grok-4.20-0309-reasoning, which reasons at its own fixed level']);
  });

  it('enforces the schema natively on Groq gpt-oss in the strict json_schema form', () => {
    const { body } = toChatRequest(call('fam_i-gpt-oss-120b', { system: [{ type: 'text', text: 'Judge fairly.' }], responseSchema: SCHEMA }));
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: SCHEMA, strict: true } });
    expect(body.messages[0]).toEqual({ role: 'system', content: 'Judge fairly.' });
  });

  it('sends Groq a schema with an optional property in its best-effort form (strict false), with a warning', () => {
    const optional = { ...SCHEMA, required: ['winner'] };
    const { body, warnings } = toChatRequest(call('fam_i-gpt-oss-20b', { responseSchema: optional }));
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: optional, strict: false } });
    expect(warnings).toEqual([
      "response_schema was sent to fam_i-gpt-oss-20b without strict enforcement: Groq's strict mode needs every property listed in required and additionalProperties false at each object level, and takes only some of JSON Schema's keywords (/properties/score does not fit)",
    ]);
  });

  it('merges consecutive turns of one role for DeepSeek, which wants them to alternate, the prompt included', () => {
    const history = [
      { role: 'user' as const, content: 'What is an ETag?' },
      { role: 'user' as const, content: 'And max-age?' },
      { role: 'assistant' as const, content: 'A validator.' },
      { role: 'assistant' as const, content: 'A freshness lifetime.' },
      { role: 'user' as const, content: 'Thanks.' },
    ];
    const { body, warnings } = toChatRequest(call('fam_f-v4-pro', { system: [{ type: 'text', text: 'Be brief.' }], history }));
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is an ETag?\n\nAnd max-age?' },
      { role: 'assistant', content: 'A validator.\n\nA freshness lifetime.' },
      { role: 'user', content: 'Thanks.\n\nCompare the two caching strategies.' },
    ]);
    expect(warnings).toEqual([]);
  });

  it('merges a user turn into a DeepSeek prompt with attachments as parts, in order', () => {
    const { body } = toChatRequest(call('fam_f-v4-flash', { history: [{ role: 'user', content: 'Context first.' }], attachments: [PNG] }));
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Context first.' },
          { type: 'text', text: 'Compare the two caching strategies.' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.base64}` } },
        ],
      },
    ]);
  });

  it.each(['fam_d-4.3', 'fam_g-large', 'fam_i-3.3-70b', 'fam_e-gpt-oss-120b'])('keeps consecutive turns as sent for %s, which takes them', (id) => {
    const { body } = toChatRequest(
      call(id, {
        history: [
          { role: 'user', content: 'One.' },
          { role: 'user', content: 'Two.' },
        ],
      }),
    );
    expect(body.messages.map((m) => m.content)).toEqual(['One.', 'Two.', 'Compare the two caching strategies.']);
  });

  it.each(['fam_i-4-scout', 'fam_d-4.20-0309-reasoning', 'fam_e-gpt-oss-120b', 'fam_f-v4-pro', 'fam_l'])('gives %s the schema as an instruction after the system prompt', (id) => {
    const { body } = toChatRequest(call(id, { system: [{ type: 'text', text: 'Judge fairly.' }], responseSchema: SCHEMA }));
    expect(body).not.toHaveProperty('response_format');
    expect(body.messages[0]).toEqual({ role: 'system', content: `Judge fairly.\n\n${schemaInstruction(SCHEMA)}` });
  });

  it('makes the schema instruction the whole system message when there is no system prompt', () => {
    const { body } = toChatRequest(call('fam_d-4.3', { responseSchema: SCHEMA }));
    expect(body.messages[0]).toEqual({ role: 'system', content: schemaInstruction(SCHEMA) });
  });

  it.each([
    ['fam_d-4.3', { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
    ['fam_f-v4-flash', { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
    ['fam_i-4-scout', { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
    ['fam_g-large', { type: 'image_url', image_url: 'data:image/png;base64,iVBORw0KGgo=' }],
  ])('sends an image to %s as an image_url data URL in the vendor form', (id, part) => {
    const { body } = toChatRequest(call(id, { attachments: [PNG] }));
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Compare the two caching strategies.' }, part] });
  });

  it('sends a PDF to Mistral as a document_url', () => {
    const { body } = toChatRequest(call('fam_g-medium', { attachments: [PDF, PNG] }));
    expect(body.messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'Compare the two caching strategies.' },
      { type: 'document_url', document_url: 'data:application/pdf;base64,JVBERi0xLjQ=', document_name: 'report.pdf' },
      { type: 'image_url', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
    ]);
  });

  it('sends a PDF as an OpenAI file part for a model served through the simulator in chat completions', () => {
    const { body } = toChatRequest(call('fam_a-sonnet-4-6', { attachments: [PDF] }));
    expect(body.messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'Compare the two caching strategies.' },
      { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' } },
    ]);
  });

  it.each(['fam_d-4.3', 'fam_e-gpt-oss-120b', 'fam_f-v4-flash', 'fam_i-4-scout'])('refuses a PDF for %s, whose vendor takes none in chat completions', (id) => {
    expect(() => toChatRequest(call(id, { attachments: [PDF] }))).toThrow(expect.objectContaining({ code: 'attachment_not_supported' }));
  });

  it('warns about tuning parameters chat completions cannot carry', () => {
    const { body, warnings } = toChatRequest(call('fam_b-3.1-pro', { tuning: { thinkingBudget: 2048, webSearch: true, cachedContent: 'cachedContents/abc' } }));
    expect(body).not.toHaveProperty('thinking');
    expect(warnings).toEqual([
      'thinkingBudget was not applied: chat completions have no thinking budget',
      'webSearch was not applied: chat completions have no search grounding',
      'cachedContent was not applied: chat completions have no cache resources',
    ]);
  });
});

describe('Function: fromChatResponse', () => {
  it.each([
    {
      name: 'xai-reasoning.json',
      id: 'fam_d-4.20-0309-reasoning',
      output: 'Option B is cheaper at scale; option A is simpler to run.',
      // xAI counts reasoning beside completion_tokens: 663 + 50 + 124 = 837.
      usage: { inputTokens: 663, cachedInputTokens: 654, cacheWriteTokens: 0, outputTokens: 174, reasoningTokens: 124 },
      cost: 0.00057705,
    },
    {
      name: 'xai-cached.json',
      id: 'fam_d-4.20-0309-non-reasoning',
      output: 'Both approaches work; cache headers are simpler.',
      usage: { inputTokens: 125, cachedInputTokens: 98, cacheWriteTokens: 0, outputTokens: 48, reasoningTokens: 0 },
      cost: 0.00017335,
    },
    {
      name: 'deepseek-cached-thinking.json',
      id: 'fam_f-v4-pro',
      output: '9.11 is smaller than 9.8.',
      usage: { inputTokens: 1400, cachedInputTokens: 1280, cacheWriteTokens: 0, outputTokens: 610, reasoningTokens: 402 },
      cost: 0.00263032,
    },
    {
      name: 'mistral-cached.json',
      id: 'fam_g-large',
      output: 'Check that the Authorization header carries a valid key.',
      usage: { inputTokens: 2150, cachedInputTokens: 1984, cacheWriteTokens: 0, outputTokens: 311 },
      cost: 0.0006487,
    },
    {
      name: 'mistral-thinking-chunks.json',
      id: 'fam_g-medium',
      output: 'Use ETags for validation.',
      usage: { inputTokens: 40, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 27 },
      cost: 0.0002625,
    },
    {
      name: 'cerebras-reasoning.json',
      id: 'fam_e-gpt-oss-120b',
      output: 'Hello! How can I assist you today?',
      // Cerebras counts reasoning inside completion_tokens and reports no reasoning_tokens: none apart.
      usage: { inputTokens: 1180, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 436 },
      cost: 0.00074,
    },
    {
      name: 'groq-structured.json',
      id: 'fam_i-gpt-oss-120b',
      output: '{"winner":"B","score":0.8}',
      usage: { inputTokens: 182, cachedInputTokens: 128, cacheWriteTokens: 0, outputTokens: 265, reasoningTokens: 198 },
      cost: 0.0001767,
    },
    {
      name: 'groq-x-groq-usage.json',
      id: 'fam_i-3.1-8b',
      output: 'Hello World!',
      usage: { inputTokens: 38, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 4 },
      cost: 0.00000222,
    },
    {
      name: 'groq-qwen-raw.json',
      id: 'fam_j3-32b',
      output: 'Paris is the capital of France.',
      usage: { inputTokens: 20, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 31 },
      cost: 0.00002409,
    },
  ])('maps $name: output without reasoning text, usage and cost', ({ name, id, output, usage, cost }) => {
    const model = entry(id);
    const reply = fromChatResponse(fixture(name), dialectFor(model.provider));
    expect(reply.output).toBe(output);
    expect(reply.finishReason).toBe('stop');
    expect(reply.warnings).toEqual([]);
    expect(reply.usage).toEqual(usage);
    expect(providerCost(model.prices, reply.usage!)).toBe(cost);
  });

  it('takes an output cut at maxTokens with a warning, and an empty one when reasoning used the whole allowance', () => {
    const cut = fromChatResponse({ choices: [{ message: { content: 'Partial' }, finish_reason: 'length' }], usage: { prompt_tokens: 5, completion_tokens: 9 } });
    expect(cut).toMatchObject({ output: 'Partial', finishReason: 'length', cutAtMaxTokens: true, warnings: [] });
    const spent = fromChatResponse(
      { choices: [{ message: { content: null, reasoning_content: 'Thinking…' }, finish_reason: 'length' }], usage: { prompt_tokens: 5, completion_tokens: 9 } },
      dialectFor('deepseek'),
    );
    expect(spent.output).toBe('');
  });

  it('counts inline thinking as unseen output, for the estimate of a call whose usage is missing; a block that never closed is all thinking', () => {
    const thought = 'plan the answer step by step, '.repeat(40);
    const closed = fromChatResponse({ choices: [{ message: { content: `<think>${thought}</think>\n\nThe answer.` }, finish_reason: 'stop' }] });
    expect(closed.output).toBe('The answer.');
    expect(closed.hints?.unseenOutputTokens).toBeGreaterThan(200);
    const open = fromChatResponse({ choices: [{ message: { content: `<think>${thought}` }, finish_reason: 'length' }] });
    expect(open.output).toBe('');
    expect(open.hints?.unseenOutputTokens).toBeGreaterThan(200);
    expect(fromChatResponse({ choices: [{ message: { content: 'No thinking.' }, finish_reason: 'stop' }] }).hints).toBeUndefined();
    // Reasoning in its own field (DeepSeek's reasoning_content, Groq's and Cerebras' reasoning) counts as well.
    const fielded = fromChatResponse({ choices: [{ message: { content: 'The answer.', reasoning_content: thought }, finish_reason: 'stop' }] });
    expect(fielded.output).toBe('The answer.');
    expect(fielded.hints?.unseenOutputTokens).toBeGreaterThan(200);
  });

  it('answers empty with a warning when the model refused', () => {
    const reply = fromChatResponse({ choices: [{ message: { content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' }] });
    expect(reply.output).toBe('');
    expect(reply.warnings).toContain('The model refused to answer');
    expect(reply.warnings.join(' ')).not.toContain('cannot help');
  });

  it.each([
    ['no choices', { id: 'x', choices: [] }],
    ['not an object', 'hello'],
  ])('rejects an answer with %s as upstream_malformed_response', (_label, body) => {
    expect(() => fromChatResponse(body)).toThrow(expect.objectContaining({ code: 'upstream_malformed_response' }));
  });

  it('takes a message of no content that stops as an answer of no text, its usage charged as any', () => {
    const reply = fromChatResponse({
      choices: [{ message: { role: 'assistant', content: null }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 },
    });
    expect(reply).toMatchObject({ output: '', usage: { inputTokens: 9, outputTokens: 0 } });
    // Without a finish reason, it is no answer.
    expect(() => fromChatResponse({ choices: [{ message: { role: 'assistant', content: null } }] })).toThrow(expect.objectContaining({ code: 'upstream_malformed_response' }));
  });

  it('turns an error body behind a 200 into an upstream_error with its message', () => {
    expect(() => fromChatResponse({ error: { message: 'The model is overloaded' } })).toThrow(
      expect.objectContaining({ code: 'upstream_error', message: 'The model is overloaded' }),
    );
  });

  it('drops missing usage with a warning', () => {
    const reply = fromChatResponse({ choices: [{ message: { content: 'Hi' }, finish_reason: 'stop' }] });
    expect(reply.usage).toBeUndefined();
    // The charge says the cost is unavailable, once (the adapter had said it too).
    expect(reply.warnings).toEqual([]);
  });
});

describe('Finish reasons of a chat completion, whole or streamed alike', () => {
  const usage = { prompt_tokens: 5, completion_tokens: 9 };

  /** The answer `content` ended by `finish_reason` as one chat completion. */
  function whole(provider: 'mistral' | 'deepseek', content: string | null, finish_reason: string): ModelReply {
    return fromChatResponse({ choices: [{ message: { content }, finish_reason }], usage }, dialectFor(provider));
  }

  /** The same answer streamed: its content as one delta (none for null), the finish_reason, a usage chunk, [DONE]. */
  function streamed(provider: 'mistral' | 'deepseek', content: string | null, finish_reason: string): ModelReply {
    const reader = new ChatStream(dialectFor(provider), () => undefined);
    const chunks = [...(content === null ? [] : [{ choices: [{ delta: { content }, finish_reason: null }] }]), { choices: [{ delta: {}, finish_reason }] }, { choices: [], usage }];
    for (const chunk of chunks) reader.onEvent({ event: 'message', data: JSON.stringify(chunk) });
    reader.onEvent({ event: 'message', data: '[DONE]' });
    return finishStream(reader);
  }

  const paths = [
    ['whole', whole],
    ['streamed', streamed],
  ] as const;

  it.each([
    [{ message: 'Rate limit reached in organization org_01hq2b3c4d5e6f7g8h9j0kmnpq', code: 'rate_limit_exceeded' }, 'upstream_rate_limited', true],
    [{ message: 'Too many tokens', type: 'tokens', status: 429 }, 'upstream_rate_limited', true],
    [{ message: 'Overloaded', type: 'overloaded_error' }, 'upstream_overloaded', true],
    [{ message: 'The server had an error', type: 'server_error' }, 'upstream_error', true],
    [{ message: 'Bad request', type: 'invalid_request_error' }, 'upstream_error', false],
  ])('reads an error a vendor sends inside its stream by its words: %j is %s (retryable %s)', (error, code, retryable) => {
    const reader = new ChatStream(dialectFor('groq'), () => undefined);
    const thrown = (() => {
      try {
        reader.onEvent({ event: 'message', data: JSON.stringify({ error }) });
      } catch (e) {
        return e as UpstreamError;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect(thrown).toMatchObject({ code, retryable, details: { upstreamStatus: 200 } });
  });

  it('counts the reasoning streamed beside the content (its fields, Mistral thinking chunks, inline <think>) for a stream stopped before its usage', () => {
    const reader = new ChatStream(dialectFor('deepseek'), () => undefined);
    const deltas = [
      { reasoning_content: 'abcd'.repeat(50) },
      { reasoning: 'efgh'.repeat(25) },
      { content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'ijkl'.repeat(10) }] }] },
      { content: `<think>${'mnop'.repeat(15)}</think>Answer` },
    ];
    for (const delta of deltas) reader.onEvent({ event: 'message', data: JSON.stringify({ choices: [{ delta, finish_reason: null }] }) });
    const { output, hints } = reader.partial();
    expect(output).toBe('Answer');
    // 50 + 25 + 10 tokens in the fields; the inline block, its tags included: 70 letters 4 a token, its 5 brackets and slash a token each.
    expect(hints).toEqual({ unseenOutputTokens: 50 + 25 + 10 + (15 * 4 + 10) / 4 + 5 });
  });

  it.each(paths)("%s: Mistral's error (generation failed part-way) fails the call, retryable while nothing was delivered", (path, read) => {
    const error = thrown(() => read('mistral', 'The first half', 'error'));
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { upstreamStatus: 200 } });
    expect(error.message).toBe('The provider reported that generating the answer failed (finish_reason error)');
    // Streamed, its text went out: the call is charged for it, and the fan-out does not retry it.
    if (path === 'streamed') expect(error.details.partial).toMatchObject({ output: 'The first half', usage: { inputTokens: 5, outputTokens: 9 } });
  });

  it.each([
    ...paths.map(([path, read]) => [path, 'mistral', 'model_length', "The output was cut at the model's context window", read] as const),
    ...paths.map(
      ([path, read]) => [path, 'deepseek', 'insufficient_system_resource', "The output was cut short: the provider's inference system ran out of resources", read] as const,
    ),
  ])('%s: %s finish_reason %s completes what came, with a warning that it was cut', (_path, provider, reason, warning, read) => {
    expect(read(provider, 'The first half', reason)).toMatchObject({ output: 'The first half', finishReason: reason, cutShort: true, warnings: [warning] });
    expect(read(provider, null, reason)).toMatchObject({ output: '', cutShort: true, warnings: [warning] });
  });

  it.each(paths)('%s: any other finish_reason but stop, length, tool_calls and content_filter is named in a warning', (_path, read) => {
    expect(read('mistral', 'Hello', 'eos_token_budget')).toMatchObject({
      output: 'Hello',
      cutShort: true,
      warnings: ['The provider ended the output with finish_reason eos_token_budget'],
    });
    for (const ended of ['stop', 'tool_calls', 'length']) expect(read('mistral', 'Hello', ended), ended).not.toHaveProperty('cutShort');
    expect(read('mistral', 'Hello', 'x'.repeat(5000)).warnings).toEqual(['The provider ended the output with finish_reason unrecognised']);
    expect(read('mistral', 'Hello', 'stop').warnings).toEqual([]);
    expect(read('mistral', 'Hello', 'tool_calls').warnings).toEqual([]);
  });

  it.each(paths)('%s: no content for a tool call fails, charged its usage; an empty content for it is an answer of no text', (_path, read) => {
    // A stream without a content delta had been read as an empty content: completed where the whole answer failed.
    const error = thrown(() => read('mistral', null, 'tool_calls'));
    expect(error).toMatchObject({
      code: 'upstream_malformed_response',
      message: 'The provider answered without content',
      details: { billed: { usage: { inputTokens: 5, outputTokens: 9 } } },
    });
    expect(read('mistral', '', 'tool_calls')).toMatchObject({ output: '', usage: { inputTokens: 5, outputTokens: 9 } });
  });

  it.each(paths)('%s: content_filter without text is a blocked answer; with text, a filtered one', (_path, read) => {
    const error = thrown(() => read('mistral', null, 'content_filter'));
    expect(error).toMatchObject({ code: 'upstream_blocked', message: 'The provider blocked the answer (content_filter)', retryable: false });
    expect(thrown(() => read('mistral', '', 'content_filter')).code).toBe('upstream_blocked');
    expect(read('mistral', 'The first half', 'content_filter')).toMatchObject({ output: 'The first half', cutShort: true, warnings: ['The provider filtered the output'] });
  });
});

describe('Function: toUsage', () => {
  const xai = dialectFor('xai');
  const deepseek = dialectFor('deepseek');
  const openai = dialectFor('openai');

  it('keeps xAI reasoning as counted inside completion_tokens when total_tokens says so', () => {
    const usage = toUsage(
      { prompt_tokens: 163, completion_tokens: 241, total_tokens: 404, prompt_tokens_details: { cached_tokens: 162 }, completion_tokens_details: { reasoning_tokens: 204 } },
      xai,
    );
    expect(usage).toEqual({ inputTokens: 163, cachedInputTokens: 162, cacheWriteTokens: 0, outputTokens: 241, reasoningTokens: 204 });
    expect(providerCost(entry('fam_d-4.3').prices, usage!)).toBe(0.00063615);
  });

  it('believes a total that is the sum of the parts, or none', () => {
    for (const total of [12, undefined, null]) {
      expect(toUsage({ prompt_tokens: 7, completion_tokens: 5, total_tokens: total }, dialectFor('groq'))?.outputTokens).toBe(5);
    }
  });

  it('adds xAI reasoning to completion_tokens when total_tokens is absent', () => {
    expect(toUsage({ prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 20 } }, xai)?.outputTokens).toBe(25);
  });

  it.each([
    ['an xAI total that matches neither accounting', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 99, completion_tokens_details: { reasoning_tokens: 20 } }, xai],
    // Every dialect's total is checked, not only where it tells xAI's two accountings apart.
    ['a Mistral total that is not prompt + completion', { prompt_tokens: 7, completion_tokens: 5, total_tokens: 99 }, dialectFor('mistral')],
    ['an xAI total beside no reasoning that is not the sum', { prompt_tokens: 7, completion_tokens: 5, total_tokens: 13 }, xai],
    ['a DeepSeek total that is not the sum', { prompt_tokens: 100, completion_tokens: 5, total_tokens: 104, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 }, deepseek],
    ['a total sent as a string', { prompt_tokens: 7, completion_tokens: 5, total_tokens: '12' }, dialectFor('cerebras')],
    [
      'DeepSeek hits and misses that do not add up to prompt_tokens',
      { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 64 },
      deepseek,
    ],
    ['cached tokens above prompt_tokens', { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 11 } }, openai],
    ['reasoning tokens above completion_tokens', { prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 6 } }, openai],
    ['a negative count', { prompt_tokens: -1, completion_tokens: 5 }, openai],
    ['a missing completion count', { prompt_tokens: 10 }, openai],
    ['a fractional count', { prompt_tokens: 10.5, completion_tokens: 5 }, openai],
    ['an xAI reasoning count sent as a string', { prompt_tokens: 100, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: '99900' } }, xai],
    ['an xAI reasoning count that is negative', { prompt_tokens: 100, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: -1 } }, xai],
    ['an xAI reasoning count that is fractional', { prompt_tokens: 100, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: 99900.5 } }, xai],
    // Sent but malformed, never read as 0: that would price every cached token uncached.
    ['a cached count sent as a string', { prompt_tokens: 2000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: '1900' } }, openai],
    ['a negative cached count', { prompt_tokens: 2000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: -5 } }, xai],
    ['a DeepSeek hit count sent as a string', { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: '64', prompt_cache_miss_tokens: 36 }, deepseek],
    ['a DeepSeek miss count that is fractional', { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36.5 }, deepseek],
  ])('is undefined for %s', (_label, usage, dialect) => {
    expect(toUsage(usage, dialect)).toBeUndefined();
  });

  it('reads DeepSeek hits even when the miss count is absent', () => {
    expect(toUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64 }, deepseek)?.cachedInputTokens).toBe(64);
  });
});

describe('Function: fromErrorResponse', () => {
  it.each([
    ['xai-error-400.json', 'xai', 'upstream_error', 'Model grok-4.20-0309-reasoning does not support parameter reasoningEffort.', false, undefined],
    ['xai-error-429.json', 'xai', 'upstream_rate_limited', 'Your team has exceeded its requests-per-second limit for grok-4.3.', true, 2000],
    ['deepseek-error-402.json', 'deepseek', 'upstream_error', 'Insufficient Balance', false, undefined],
    ['deepseek-error-503.json', 'deepseek', 'upstream_overloaded', 'Server overloaded, please try again later.', true, undefined],
    ['mistral-error-429.json', 'mistral', 'upstream_rate_limited', 'Requests rate limit exceeded', true, 3000],
    ['mistral-error-422-wrapped.json', 'mistral', 'upstream_error', 'body.reasoning_effort: Extra inputs are not permitted', false, undefined],
    ['cerebras-error-400.json', 'cerebras', 'upstream_error', "type: Input should be 'text'", false, undefined],
    ['cerebras-error-500.json', 'cerebras', 'upstream_error', 'Encountered a server error, please try again.', true, undefined],
    ['groq-error-498.json', 'groq', 'upstream_overloaded', expect.stringContaining('Flex tier capacity exceeded') as unknown as string, true, undefined],
    ['groq-error-429.json', 'groq', 'upstream_rate_limited', expect.stringContaining('Rate limit reached for model') as unknown as string, true, 2000],
  ] as const)('maps %s', (name, provider, code, message, retryable, retryAfterMs) => {
    const { status, headers, body } = errorFixture(name);
    const error = fromErrorResponse(dialectFor(provider), status, JSON.stringify(body), headers['retry-after'] ?? null);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code, message, retryable });
    expect(error.details.upstreamStatus).toBe(status);
    expect(error.details.retryAfterMs).toBe(retryAfterMs);
  });

  it('reduces Mistral validation details to field and reason, never echoing the input', () => {
    const { status, body } = errorFixture('mistral-error-422.json');
    const error = fromErrorResponse(dialectFor('mistral'), status, JSON.stringify(body), null);
    expect(error.message).toBe('body.max_completion_tokens: Extra inputs are not permitted; body.messages.0.system.content.str: Input should be a valid string');
    expect(error.message).not.toContain('SECRET PROMPT TEXT');
    expect(error.retryable).toBe(false);
  });

  it('names the vendor and status when the body is not JSON', () => {
    expect(fromErrorResponse(dialectFor('groq'), 502, '<html>Bad gateway</html>', null)).toMatchObject({
      code: 'upstream_error',
      message: 'Groq answered 502',
      retryable: true,
    });
  });

  it("takes a 429 saying the account is out of quota (insufficient_quota) for spent credit, not a limit a retry waits out; Responses' mapper alike", () => {
    const body = JSON.stringify({
      error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' },
    });
    for (const error of [fromErrorResponse(dialectFor('groq'), 429, body, null), defaultErrorMapper(429, body, null)]) {
      expect(error).toMatchObject({ code: 'upstream_rate_limited', retryable: false, details: { upstreamStatus: 429, creditSpent: true } });
    }
    const limited = JSON.stringify({ error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } });
    for (const error of [fromErrorResponse(dialectFor('groq'), 429, limited, null), defaultErrorMapper(429, limited, null)]) {
      expect(error.retryable).toBe(true);
      expect(error.details.creditSpent).toBeUndefined();
    }
  });

  it('reads Retry-After as an HTTP date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    const error = fromErrorResponse(dialectFor('deepseek'), 429, '{}', 'Sun, 22 Nov 2026 10:00:05 GMT', { now });
    expect(error.details.retryAfterMs).toBe(5000);
  });

  it('keeps a vendor message to 500 characters', () => {
    expect(vendorMessage({ error: { message: 'x'.repeat(900) } })).toHaveLength(500);
  });
});
