/**
 * The simulated Responses API answer: the Responses object with deterministic content,
 * reasoning tokens inside output_tokens, and automatic prefix caching inside input_tokens
 * (a prefix from 1,024 tokens on, seen in an answered request, is read in steps of 128).
 */
import type { Json } from '../json.js';
import { openAiHeaders } from '../openai-chat/errors.js';
import { PrefixCache } from '../prefix-cache.js';
import { countTokens, generateFromSchema, generateParagraph, schemaCharsFor, truncateToTokens } from '../text.js';
import type { Reply } from '../types.js';

/** OpenAI caches prompt prefixes from 1,024 tokens on, in steps of 128. */
const CACHE_MIN_TOKENS = 1024;
const CACHE_STEP_TOKENS = 128;
/** Prefix hashes remembered for automatic caching, oldest forgotten first. */
const CACHE_CAPACITY = 20_000;
/** Reasoning tokens spent per effort (reported inside output_tokens). */
export const REASONING_TOKENS: Readonly<Record<string, number>> = { none: 0, minimal: 16, low: 64, medium: 256, high: 1024, xhigh: 2048 };

export type Format = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Json; strict: boolean };

/** Prefix hashes seen in answered requests (per model). */
export const seenPrefixes = new PrefixCache(CACHE_CAPACITY);

export interface Prefix {
  hash: string;
  tokens: number;
}

function cachedTokensFor(prefixes: readonly Prefix[]): number {
  let cached = 0;
  for (const prefix of prefixes) {
    if (prefix.tokens >= CACHE_MIN_TOKENS && seenPrefixes.has(prefix.hash)) cached = prefix.tokens;
  }
  return Math.floor(cached / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS;
}

function remember(prefixes: readonly Prefix[]): void {
  for (const prefix of prefixes) {
    if (prefix.tokens >= CACHE_MIN_TOKENS) seenPrefixes.remember(prefix.hash);
  }
}

/** A valid request, ready to answer. */
export interface ResponsesCall {
  model: string;
  seed: number;
  id: string;
  itemId: string;
  inputTokens: number;
  prefixes: Prefix[];
  instructions: string | null;
  maxOutputTokens: number | null;
  effort: string | null;
  summary: string | null;
  temperature: number;
  topP: number;
  store: boolean;
  format: Format;
  metadata: Json;
}

function content(call: ResponsesCall, structured?: Json): string {
  switch (call.format.type) {
    case 'json_schema':
      return JSON.stringify(structured ?? generateFromSchema(call.format.schema, call.seed, schemaCharsFor(call.maxOutputTokens ?? undefined)));
    case 'json_object':
      return JSON.stringify({ answer: generateParagraph(call.model, call.seed) });
    default:
      return generateParagraph(call.model, call.seed);
  }
}

/** The non-streamed answer to a valid request, with its usage when `withUsage`. */
export function answerResponses(call: ResponsesCall, withUsage: boolean, structured?: Json): Reply {
  const cachedTokens = cachedTokensFor(call.prefixes);
  remember(call.prefixes);

  const limit = call.maxOutputTokens ?? Infinity;
  const wantedReasoning = call.effort === null ? 0 : (REASONING_TOKENS[call.effort] ?? 0);
  const reasoningTokens = Math.min(wantedReasoning, limit);
  let text: string | undefined = content(call, structured);
  let incomplete = false;
  const room = limit - reasoningTokens;
  if (room <= 0) {
    text = undefined;
    incomplete = true;
  } else if (countTokens(text) > room) {
    text = truncateToTokens(text, room);
    incomplete = true;
  }
  const outputTokens = reasoningTokens + (text === undefined ? 0 : countTokens(text));

  const output: Json[] = [];
  if (call.effort !== null) output.push({ id: `rs_${call.itemId}`, type: 'reasoning', summary: [] });
  if (text !== undefined) {
    output.push({
      id: `msg_${call.itemId}`,
      type: 'message',
      status: incomplete ? 'incomplete' : 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
      role: 'assistant',
    });
  }
  const format =
    call.format.type === 'json_schema'
      ? { type: 'json_schema', description: null, name: call.format.name, schema: call.format.schema, strict: call.format.strict }
      : { type: call.format.type };
  const body: Json = {
    id: call.id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: call.instructions,
    max_output_tokens: call.maxOutputTokens,
    max_tool_calls: null,
    model: call.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: call.effort, summary: call.summary },
    safety_identifier: null,
    service_tier: 'default',
    store: call.store,
    temperature: call.temperature,
    text: { format, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_logprobs: 0,
    top_p: call.topP,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: call.metadata,
  };
  if (withUsage) {
    body['usage'] = {
      input_tokens: call.inputTokens,
      input_tokens_details: { cached_tokens: cachedTokens },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: call.inputTokens + outputTokens,
    };
  } else {
    delete body['usage'];
  }
  return { status: 200, headers: openAiHeaders(call.inputTokens + outputTokens), body: JSON.stringify(body) };
}
