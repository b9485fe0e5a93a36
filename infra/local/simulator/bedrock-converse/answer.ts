/**
 * The simulated Converse answer: text, or a `toolUse` block when the request forces a tool,
 * with usage and Nova's explicit prompt cache (a prefix up to a `cachePoint` is written
 * once, then read).
 */
import type { Json } from '../json.js';
import { PrefixCache } from '../prefix-cache.js';
import { countTokens, generateFromSchema, generateParagraph, schemaCharsFor, truncateToTokens } from '../text.js';
import type { Reply } from '../types.js';
import { bedrockHeaders } from './errors.js';

/** Nova: at least 1,000 tokens before a checkpoint. */
const CACHE_MIN_TOKENS = 1_000;
const MAX_CACHED_PREFIXES = 10_000;

/** Prefix hashes already written to the simulated cache. */
export const cachedPrefixes = new PrefixCache(MAX_CACHED_PREFIXES);

export interface CachePoint {
  /** Hash of everything before the checkpoint. */
  digest: string;
  /** Tokens before the checkpoint. */
  tokens: number;
}

export interface ForcedTool {
  name: string;
  schema: unknown;
}

/** A valid request, ready to answer. */
export interface ConverseCall {
  model: string;
  seed: number;
  digest: string;
  inputTokens: number;
  cachePoints: readonly CachePoint[];
  maxTokens: number | undefined;
  forced: ForcedTool | undefined;
}

/**
 * Splits the input into read and written tokens, and remembers the written prefixes. Runs
 * when an answer is sent, so a call failed by a fault caches nothing.
 */
function applyCache(cachePoints: readonly CachePoint[]): { read: number; write: number } {
  // Each checkpoint caches with the minimum of its own after the last one that cached (Bedrock's prompt caching guide).
  const eligible: CachePoint[] = [];
  for (const point of cachePoints) if (point.tokens - (eligible.at(-1)?.tokens ?? 0) >= CACHE_MIN_TOKENS) eligible.push(point);
  const last = eligible.at(-1);
  if (!last) return { read: 0, write: 0 };
  let read = 0;
  for (const point of eligible) if (cachedPrefixes.has(point.digest)) read = point.tokens;
  for (const point of eligible) cachedPrefixes.remember(point.digest);
  return { read, write: last.tokens - read };
}

/** The non-streamed answer to a valid request, with its usage when `usage`. */
export function answerConverse(call: ConverseCall, usage: boolean, structured?: Json): Reply {
  let content: Json[];
  let stopReason: 'end_turn' | 'max_tokens' | 'tool_use';
  let outputTokens: number;
  if (call.forced) {
    const input = structured ?? generateFromSchema(call.forced.schema, call.seed, schemaCharsFor(call.maxTokens));
    content = [{ toolUse: { toolUseId: `tooluse_${call.digest.slice(0, 22)}`, name: call.forced.name, input } }];
    stopReason = 'tool_use';
    outputTokens = countTokens(JSON.stringify(input));
  } else {
    let text = generateParagraph(call.model, call.seed);
    stopReason = 'end_turn';
    if (call.maxTokens !== undefined && countTokens(text) > call.maxTokens) {
      text = truncateToTokens(text, call.maxTokens);
      stopReason = 'max_tokens';
    }
    content = [{ text }];
    outputTokens = countTokens(text);
  }
  const body: Json = { output: { message: { role: 'assistant', content } }, stopReason };
  const cache = applyCache(call.cachePoints);
  if (usage) {
    // inputTokens counts only what was neither read from nor written to the cache.
    const tokens: Json = { inputTokens: call.inputTokens - cache.read - cache.write, outputTokens, totalTokens: call.inputTokens + outputTokens };
    if (call.cachePoints.length > 0) {
      tokens['cacheReadInputTokens'] = cache.read;
      tokens['cacheWriteInputTokens'] = cache.write;
    }
    body['usage'] = tokens;
  }
  body['metrics'] = { latencyMs: 120 + outputTokens };
  return { status: 200, headers: bedrockHeaders(), body: JSON.stringify(body) };
}
