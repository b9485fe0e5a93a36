import type { ModelCall, Usage, UsageHints } from '../providers/types.js';
import { believedOutputTokens, cacheWriteBound, callCostBound, inputTokenEstimate, outputTokenBound, searchQueryBound, tooFewTokens, tooManyInputTokens } from './bound.js';
import { ADAPTERS } from '../providers/adapters.js';
import { promptTexts } from '../providers/shared-text.js';
import { textTokens } from '../text/text-tokens.js';
import { providerCost } from './cost.js';

/**
 * What one completed call costs. `observed`: the vendor's usage, believable, priced
 * (`providerCost`). `estimated`: the usage was missing or could not be true, so cost is
 * unavailable (spec 3 rule 3: `providerCost` null) and the call is charged an estimate from
 * the text instead (docs/credits.md): the call's counted input and its output's length at
 * uncached prices, never more than the call's bound (what the request reserved for it).
 */
export type CallCharge = { kind: 'observed'; usage: Usage; providerCost: number; warning?: string } | { kind: 'estimated'; estimatedCost: number; warning: string };

/**
 * Why a usage block cannot be true of this call and its output (and the thinking its vendor
 * showed beside it, `hints.unseenOutputTokens`, which the output count includes), or
 * undefined when it can.
 */
export function implausibleUsage(usage: Usage, call: ModelCall, output = '', hints: UsageHints = {}): string | undefined {
  for (const [field, value] of Object.entries(usage)) {
    if (!Number.isSafeInteger(value) || value < 0) return `${field} is not a whole number of tokens`;
  }
  // Believed, these would make the call free, or its output free.
  if (usage.inputTokens === 0) return 'no input tokens, though every call sends some';
  if (usage.outputTokens === 0 && output.trim() !== '') return 'no output tokens, though the call answered text';
  // Counts far below the text they stand for: believed, they would make it nearly free.
  const thinking = tokenCount(hints.unseenOutputTokens);
  const fewestOut = tooFewTokens(usage.outputTokens, [output], thinking);
  if (fewestOut > 0) return `${usage.outputTokens} output tokens, fewer than the ${fewestOut} its text ${thinking > 0 ? 'and thinking take' : 'takes'} at the least`;
  const fewestIn = tooFewTokens(usage.inputTokens, [...promptTexts(call), ...call.system.map((block) => block.text), ...call.history.map((turn) => turn.content)]);
  if (fewestIn > 0) return `${usage.inputTokens} input tokens, fewer than the ${fewestIn} its text takes at the least`;
  if (usage.cachedInputTokens + usage.cacheWriteTokens > usage.inputTokens) return 'more cached input tokens than input tokens';
  // Writes priced above input, beyond the prefix the call marked for caching: believed, they would cost more than was held.
  const writes = cacheWriteBound(call);
  if (writes !== undefined && usage.cacheWriteTokens > writes) return `${usage.cacheWriteTokens} cache write tokens, more than the ${writes} its cache breakpoints can write`;
  if ((usage.reasoningTokens ?? 0) > usage.outputTokens) return 'more reasoning tokens than output tokens';
  if (usage.inputTokens > call.entry.contextWindow) return `${usage.inputTokens} input tokens, beyond the model's context of ${call.entry.contextWindow}`;
  // Counts far above the text they stand for: believed, they would charge the caller up to the whole reservation.
  const mostIn = tooManyInputTokens(usage.inputTokens, call);
  if (mostIn > 0) return `${usage.inputTokens} input tokens, more than the ${mostIn} its text can count`;
  // The output bound alone: pricing the whole call (its input counted again) is for the rare estimated path.
  if (usage.outputTokens > believedOutputTokens(call)) return `${usage.outputTokens} output tokens, beyond the ${outputTokenBound(call)} the call allowed`;
  return undefined;
}

/**
 * Prices a completed call from the usage its vendor reported (`startedAt`: when the attempt
 * that answered began, for vendors that price by the time of day). Without a usage to
 * believe, the estimate takes what else the vendor showed (`hints`): the input it reported
 * where that is more than the estimate of the input (a text that tokenizes densely), and the
 * reasoning it streamed beside the output; its warning says why (`noUsage` where the call
 * ended before any usage arrived).
 */
export function chargeCall(
  call: ModelCall,
  usage: Usage | undefined,
  output: string,
  startedAt: number,
  hints: UsageHints = {},
  noUsage = 'the vendor sent no usable usage',
): CallCharge {
  const search = searchCharge(call, usage?.searchQueries ?? hints.searchQueries);
  const doubt = usage ? implausibleUsage(usage, call, output, hints) : noUsage;
  if (usage && doubt === undefined) {
    const cost = providerCost(call.entry.prices, { ...usage, searchQueries: search.charged }, startedAt);
    return { kind: 'observed', usage, providerCost: cost, ...(search.note ? { warning: search.note } : {}) };
  }
  const bound = callCostBound(call);
  // An estimate is charged no more than the call's bound, nor than the request held for it (a judge call's share).
  const mostUsd = Math.min(bound.usd, call.heldUsd ?? Number.POSITIVE_INFINITY);
  const adapter = ADAPTERS[call.entry.protocol];
  // At its output limit, the vendor billed that limit: thinking it did not show (or count) included, where the limit bounds it.
  const atLimit = hints.outputLimitReached ? adapter.sentOutputLimit(call) : 0;
  const limitCountsReasoning = hints.outputLimitReached === true && outputTokenBound(call) <= atLimit;
  const shownUnseen = tokenCount(hints.unseenOutputTokens);
  const shownAtLeast = tokenCount(hints.outputTokensAtLeast);
  // Thinking counted from the text it streamed is charged up to the bound; a vendor's own count, only where it could be true.
  const unseen = hints.reasoningCounted ? reportedOutput(call, shownUnseen) : shownUnseen;
  const atLeast = reportedOutput(call, shownAtLeast);
  const tokensOut = Math.min(Math.max(Math.ceil(textTokens(output) + unseen), atLimit, atLeast), bound.outputTokens);
  const searched = search.note ? `. ${search.note}` : '';
  // Reasoning its vendor bills and shows in no way but the usage: not charged, unless the answer ended at a limit that
  // counts it, or the vendor's count of it came some other way (Gemini's thoughts count, in a usage not believed or a
  // running one) and was taken.
  const vendorCountTaken = hints.reasoningCounted === true && unseen === shownUnseen && atLeast === shownAtLeast;
  const unshown =
    !limitCountsReasoning && !vendorCountTaken && adapter.hidesReasoning?.(call)
      ? '. Any reasoning the model did before its answer, which its vendor bills and does not show, is not charged'
      : '';
  const classed = reportedInputClasses(call, output, hints, tokensOut);
  if (classed) {
    const estimatedCost = Math.min(providerCost(call.entry.prices, { ...classed, searchQueries: search.charged }, startedAt), mostUsd);
    return {
      kind: 'estimated',
      estimatedCost,
      warning: `Cost unavailable: ${doubt}. Charged the input the vendor reported (${classed.inputTokens} tokens, ${classed.cachedInputTokens} of them cache reads and ${classed.cacheWriteTokens} cache writes, each at its price) and ${tokensOut} output tokens estimated from the text: ${estimatedCost} USD${unshown}${searched}`,
    };
  }
  const tokensIn = Math.min(Math.max(inputTokenEstimate(call), reportedInput(call, hints.inputTokens)), bound.inputTokens);
  const fromText = providerCost(
    call.entry.prices,
    { inputTokens: tokensIn, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: tokensOut, searchQueries: search.charged },
    startedAt,
  );
  const estimatedCost = Math.min(fromText, mostUsd);
  return {
    kind: 'estimated',
    estimatedCost,
    warning: `Cost unavailable: ${doubt}. Charged an estimate from the text instead (${tokensIn} input and ${tokensOut} output tokens at uncached prices: ${estimatedCost} USD)${unshown}${searched}`,
  };
}

/** Finish reasons (each vendor's word) that say an answer ended at the output limit it was sent with. */
const OUTPUT_LIMIT_REASONS: ReadonlySet<string> = new Set(['length', 'max_tokens', 'MAX_TOKENS', 'max_output_tokens']);

/** `hints` with whether the answer ended at its output limit, read from its finish reason. */
export function withFinishReason(hints: UsageHints | undefined, finishReason: string | undefined): UsageHints | undefined {
  return finishReason !== undefined && OUTPUT_LIMIT_REASONS.has(finishReason) ? { ...hints, outputLimitReached: true } : hints;
}

/**
 * The search queries a call is charged of those its vendor reported running (Gemini's search
 * grounding lists them in the answer, apart from the token usage): at most the call's
 * searchQueryBound, what its reserve held; and what the caller is told of them.
 */
function searchCharge(call: ModelCall, reported: number | undefined): { charged: number; note?: string } {
  const ran = reported !== undefined && Number.isSafeInteger(reported) && reported > 0 ? reported : 0;
  if (ran === 0) return { charged: 0 };
  const queries = `${ran} search ${ran === 1 ? 'query' : 'queries'}`;
  const price = call.entry.prices.searchQueryUsd;
  if (price === undefined) return { charged: 0, note: `Google Search grounding ran ${queries}; the catalog has no price a query for this model, so they are not in providerCost` };
  const charged = Math.min(ran, searchQueryBound(call));
  if (charged === 0) return { charged: 0, note: `The provider reported ${queries}, though the call did not ask for search grounding; not charged` };
  const capped = charged < ran ? ` (the most a call is charged: its reservation held ${charged})` : '';
  return { charged, note: `Google Search grounding ran ${queries}: ${charged} charged at ${price} USD each${capped}` };
}

/**
 * The input a vendor reported class by class before its usage went missing (Anthropic's
 * `message_start`: cache reads cost a tenth of the input price), with the output counted
 * from the text: a partial usage, each class priced at its own rate, where it reports a cache
 * class and passes every check a vendor's usage must pass; undefined otherwise (the input is
 * then estimated at the uncached price).
 */
function reportedInputClasses(call: ModelCall, output: string, hints: UsageHints, outputTokens: number): Usage | undefined {
  const { inputTokens, cachedInputTokens = 0, cacheWriteTokens = 0 } = hints;
  if (inputTokens === undefined || cachedInputTokens + cacheWriteTokens === 0) return undefined;
  const partial: Usage = { inputTokens, cachedInputTokens, cacheWriteTokens, outputTokens };
  return implausibleUsage(partial, call, output, hints) === undefined ? partial : undefined;
}

/**
 * The input a vendor reported before its usage went missing (Anthropic's `message_start`), where
 * it could be true of the call: a count its usage block would have been refused for (more
 * than the call's text can count, or not a whole number) is 0, so that a stream and a whole
 * answer whose vendor lies alike are charged alike.
 */
function reportedInput(call: ModelCall, value: number | undefined): number {
  const count = tokenCount(value);
  return Number.isSafeInteger(count) && tooManyInputTokens(count, call) === 0 ? count : 0;
}

/**
 * Output a vendor counted beside a usage not believed (Gemini's thoughts, a running count), where
 * it could be true of the call: one past what its usage block could claim is 0, as such a block
 * would be refused (a thoughts count of 1e300 had charged a 12-character answer the whole limit).
 */
function reportedOutput(call: ModelCall, count: number): number {
  return Number.isSafeInteger(count) && count <= believedOutputTokens(call) ? count : 0;
}

/** A count a vendor (or a reader of its text) gave, where it is one: 0 for anything else. */
function tokenCount(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

/** A call as an answer reports it: a result, or one order of an evaluation. */
export interface ReportedCall {
  status: 'completed' | 'failed' | 'cancelled';
  providerCost: number | null;
  estimatedCost?: number;
}

/**
 * What one call is charged, USD, in its two parts: its provider cost, or where that is
 * unavailable its estimate. A completed call is charged so; a cancelled one (stopped when its
 * caller disconnected), a failed one whose text went out before its stream broke off, and a
 * failed one whose answer its vendor withheld or gave without usable text but billed
 * (upstream_blocked or upstream_malformed_response with its usage), what they had used, the same way; any other failed one nothing (its cost is 0).
 */
export function callCharged(call: ReportedCall): { observedUsd: number; estimatedUsd: number } {
  return call.providerCost !== null ? { observedUsd: call.providerCost, estimatedUsd: 0 } : { observedUsd: 0, estimatedUsd: call.estimatedCost ?? 0 };
}

/** What calls are charged, USD, added up (callCharged); `estimatedUsd` is the estimated part. */
export function chargedUsd(calls: readonly ReportedCall[]): { usd: number; estimatedUsd: number } {
  let usd = 0;
  let estimatedUsd = 0;
  for (const call of calls) {
    const charged = callCharged(call);
    usd += charged.observedUsd + charged.estimatedUsd;
    estimatedUsd += charged.estimatedUsd;
  }
  return { usd, estimatedUsd };
}
