import type { WireProtocol } from '../catalog/types.js';
import { schemaInstruction } from './structured-output.js';
import type { ModelCall } from './types.js';

/** Whether the call marks any `cache_control` breakpoint (spec 2.7, 2.8): most mark none. */
export function marksCacheBreakpoints(call: Pick<ModelCall, 'system' | 'history'>): boolean {
  return call.system.some((block) => block.cache_control) || call.history.some((turn) => turn.cache_control);
}

/** A `cache_control` breakpoint: where it is, and the prefix it closes (system blocks, then history turns) counted with `count`. */
export interface CacheBreakpoint {
  /** e.g. `system block 2`, `history turn 1` (1-based). */
  where: string;
  prefixTokens: number;
}

/**
 * Each counter's counts of a request's system blocks and history turns, by the block or turn:
 * the request's models share them, so that each is counted once a request, not once a model (a
 * prefix of megabytes for 12 models had been counted 12 times); gone with the request.
 */
const counts = new WeakMap<(text: string) => number, WeakMap<object, number>>();

function countedOnce(part: object, text: string, count: (text: string) => number): number {
  let byPart = counts.get(count);
  if (!byPart) {
    byPart = new WeakMap();
    counts.set(count, byPart);
  }
  const known = byPart.get(part);
  if (known !== undefined) return known;
  const counted = count(text);
  byPart.set(part, counted);
  return counted;
}

/**
 * The call's `cache_control` breakpoints, in order, each with its prefix (4 tokens of framing
 * a history turn): its system blocks, the response schema's instruction where it goes as one
 * more system block (its model has no structured output of its own: Anthropic's adapter adds it
 * after the caller's blocks), then its history turns.
 */
export function cacheBreakpoints(call: Pick<ModelCall, 'system' | 'history' | 'responseSchema' | 'entry'>, count: (text: string) => number): CacheBreakpoint[] {
  const breakpoints: CacheBreakpoint[] = [];
  let text = 0;
  call.system.forEach((block, i) => {
    text += countedOnce(block, block.text, count);
    if (block.cache_control) breakpoints.push({ where: `system block ${i + 1}`, prefixTokens: Math.ceil(text) });
  });
  if (call.responseSchema && call.entry.capabilities.structuredOutput === 'instruction') text += count(schemaInstruction(call.responseSchema));
  call.history.forEach((turn, i) => {
    text += countedOnce(turn, turn.content, count);
    if (turn.cache_control) breakpoints.push({ where: `history turn ${i + 1}`, prefixTokens: Math.ceil(text) + 4 * (i + 1) });
  });
  return breakpoints;
}

/** Protocols that send `cache_control` breakpoints on: Anthropic's as they are, Bedrock's as cache points (the others drop them, and say so). */
const BREAKPOINT_PROTOCOLS: ReadonlySet<WireProtocol> = new Set(['anthropic-messages', 'bedrock-converse']);

/**
 * DESIGN.md, step 4: a breakpoint on a prefix shorter than the model's cache minimum (spec
 * 2.9) is sent anyway, and flagged, since the vendor ignores it silently. The prefix counted
 * with `count`, as text usually counts, hence "about".
 */
export function cacheMinimumWarnings(call: ModelCall, count: (text: string) => number): string[] {
  const { entry } = call;
  const { minTokens, minTokensEach } = entry.capabilities.cache;
  if (minTokens === undefined || !BREAKPOINT_PROTOCOLS.has(entry.protocol) || !marksCacheBreakpoints(call)) return [];
  // The last breakpoint that caches, where each needs the minimum after it (minTokensEach).
  let caching: CacheBreakpoint | undefined;
  return cacheBreakpoints(call, count).flatMap((breakpoint) => {
    if (breakpoint.prefixTokens < minTokens) {
      return [
        `The cache_control breakpoint on ${breakpoint.where} closes a prefix of about ${breakpoint.prefixTokens} tokens, under ${entry.id}'s cache minimum of ${minTokens}: sent, but the vendor caches nothing there`,
      ];
    }
    if (minTokensEach && caching && breakpoint.prefixTokens - caching.prefixTokens < minTokens) {
      return [
        `The cache_control breakpoint on ${breakpoint.where} comes about ${breakpoint.prefixTokens - caching.prefixTokens} tokens after the one on ${caching.where}, under ${entry.id}'s cache minimum of ${minTokens} between breakpoints: sent, but the vendor caches nothing there`,
      ];
    }
    caching = breakpoint;
    return [];
  });
}

/**
 * The warning for `cache_control` breakpoints sent to a protocol that takes none (OpenAI
 * Responses, chat completions): they are left out, and the caller hears why, from the
 * model's cache rule in the catalog. Undefined when the call marks none.
 */
export function breakpointsWarning(call: ModelCall, vendor: string): string | undefined {
  if (!marksCacheBreakpoints(call)) return undefined;
  const { mode, minTokens } = call.entry.capabilities.cache;
  const why =
    mode === 'automatic'
      ? `${vendor} caches prompt prefixes${minTokens === undefined ? '' : ` of ${minTokens.toLocaleString('en-US')} tokens or more`} automatically`
      : `${vendor} does not cache prompts for this model`;
  return `cache_control breakpoints have no effect on ${call.entry.id}: ${why}`;
}
