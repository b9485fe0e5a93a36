/**
 * The simulated Messages API answer: the `message` object with deterministic text (or a
 * value of the requested schema), thinking first when asked, and usage with the prompt
 * cache: for each `cache_control` breakpoint whose prefix counts at least the model's
 * minimum, the first request with that exact prefix writes it (`cache_creation_input_tokens`)
 * and later ones read the longest known prefix (`cache_read_input_tokens`); `input_tokens`
 * keeps only the rest, as Anthropic reports it.
 */
import { createHash } from 'node:crypto';
import type { Json } from '../json.js';
import { PrefixCache } from '../prefix-cache.js';
import { countTokens, generateFromSchema, generateParagraph, schemaCharsFor, truncateToTokens } from '../text.js';
import type { Reply } from '../types.js';
import { anthropicHeaders } from './errors.js';

const MAX_CACHED_PREFIXES = 1000;

export type Thinking = { type: 'disabled' } | { type: 'enabled'; budget: number } | { type: 'adaptive' };

export const cachedPrefixes = new PrefixCache(MAX_CACHED_PREFIXES);

export interface Breakpoint {
  hash: string;
  tokens: number;
}

/** The prompt-cache split of a request's input, updating the known prefixes. */
function cacheSplit(breakpoints: readonly Breakpoint[], minTokens: number): { read: number; write: number } {
  const eligible = breakpoints.filter((b) => b.tokens >= minTokens);
  const last = eligible[eligible.length - 1];
  if (!last) return { read: 0, write: 0 };
  let read = 0;
  for (const b of eligible) if (cachedPrefixes.has(b.hash)) read = Math.max(read, b.tokens);
  for (const b of eligible) cachedPrefixes.remember(b.hash);
  return { read, write: last.tokens - read };
}

/** A valid request, ready to answer. */
export interface MessagesCall {
  model: string;
  seed: number;
  id: string;
  inputTokens: number;
  breakpoints: Breakpoint[];
  minCacheTokens: number;
  maxTokens: number;
  thinking: Thinking;
  schema: Json | undefined;
}

/** The non-streamed answer to a valid request, with its usage when `usage`. */
export function answerMessages(call: MessagesCall, usage: boolean, structured?: Json): Reply {
  const content: Json[] = [];
  let budget = call.maxTokens;
  let stopReason: 'end_turn' | 'max_tokens' = 'end_turn';
  if (call.thinking.type !== 'disabled') {
    const limit = call.thinking.type === 'enabled' ? Math.min(call.thinking.budget, budget) : budget;
    const thinking = truncateToTokens(`Weighing the request before answering. ${generateParagraph(call.model, call.seed ^ 0x5bd1e995)}`, limit);
    const signature = createHash('sha256').update(`signature:${call.id}`).digest('base64');
    content.push({ type: 'thinking', thinking, signature });
    budget -= countTokens(thinking);
  }
  let text = call.schema ? JSON.stringify(structured ?? generateFromSchema(call.schema, call.seed, schemaCharsFor(call.maxTokens))) : generateParagraph(call.model, call.seed);
  if (countTokens(text) > budget) {
    text = truncateToTokens(text, Math.max(0, budget));
    stopReason = 'max_tokens';
  }
  if (text.length > 0) content.push({ type: 'text', text });
  const outputTokens = call.maxTokens - budget + countTokens(text);

  const body: Json = {
    id: call.id,
    type: 'message',
    role: 'assistant',
    model: call.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
  };
  if (usage) {
    // The cache is touched only when a request is answered, as a real cache write would be.
    const { read, write } = cacheSplit(call.breakpoints, call.minCacheTokens);
    body['usage'] = {
      input_tokens: call.inputTokens - read - write,
      cache_creation_input_tokens: write,
      cache_read_input_tokens: read,
      cache_creation: { ephemeral_5m_input_tokens: write, ephemeral_1h_input_tokens: 0 },
      output_tokens: outputTokens,
      service_tier: 'standard',
    };
  }
  return { status: 200, headers: anthropicHeaders(), body: JSON.stringify(body) };
}
