import { unusableAnswer, UpstreamError, vendorWord, type BilledAnswer } from '../errors.js';
import type { ModelReply, Usage, UsageHints } from '../types.js';
import { runningUsageHints, toUsage, usageHints, type UsageMetadata } from './usage.js';
import { errorInAnswer } from './errors.js';
import { firstChoice } from '../first-choice.js';

interface ResponsePart {
  text?: unknown;
  thought?: unknown;
}

interface Candidate {
  index?: unknown;
  content?: { parts?: unknown } | null;
  finishReason?: unknown;
  groundingMetadata?: unknown;
}

interface GenerateContentResponse {
  candidates?: unknown;
  error?: unknown;
  promptFeedback?: { blockReason?: unknown } | null;
  usageMetadata?: UsageMetadata | null;
}

/** Finish reasons that mean Gemini withheld the output (policy, recitation, blocklists). */
const BLOCKED: ReadonlySet<string> = new Set(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/** `billed`: what a prompt or an answer blocked (thinking included) was billed, where Gemini reported a usage block (`reported`) with it. */
function blocked(reason: string, reported?: unknown, billed?: BilledAnswer): UpstreamError {
  return unusableAnswer('upstream_blocked', `The provider blocked the answer (${reason})`, reported, billed);
}

function malformed(message: string): UpstreamError {
  return new UpstreamError('upstream_malformed_response', message, { upstreamStatus: 200 });
}

/** Whether Gemini blocked the prompt: a block reason other than none or unspecified. */
export function promptBlocked(feedback: unknown): boolean {
  const blockReason = (feedback as { blockReason?: unknown } | null | undefined)?.blockReason;
  return typeof blockReason === 'string' && blockReason !== '' && blockReason !== 'BLOCK_REASON_UNSPECIFIED';
}

/**
 * A generateContent answer as the gateway's reply: the text of the first candidate's parts,
 * thought summaries left out. Blocked prompts and answers withheld with no text are
 * 'upstream_blocked' (not retryable: the same request is blocked again). `usageCoversAnswer`
 * false: the usageMetadata is a stream's running count that parts came after, priced from
 * the text with its prompt and thoughts as hints.
 */
export function fromGenerateContentResponse(body: unknown, requestWarnings: readonly string[] = [], usageCoversAnswer = true): ModelReply {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw malformed('The provider answered without a response object');
  const response = body as GenerateContentResponse;
  // An error a 200 carried instead of an answer: the vendor's, as its error status would say it.
  if (response.error !== undefined && response.error !== null) throw errorInAnswer(response.error);
  // Named by a word of Gemini's enum, or 'unrecognised': never the vendor's string as it came,
  // which can be megabytes. Its input is billed where Gemini reported a usage block with it.
  // Without a candidate, what the usage shows is its input (no search ran).
  const billedInput = () => usageAndHints(response.usageMetadata, 0, usageCoversAnswer);
  if (promptBlocked(response.promptFeedback)) throw blocked(vendorWord(response.promptFeedback?.blockReason)!, response.usageMetadata, billedInput());

  const candidate = Array.isArray(response.candidates) ? firstChoice(response.candidates as (Candidate | null)[]) : undefined;
  if (!candidate || typeof candidate !== 'object') {
    throw unusableAnswer('upstream_malformed_response', 'The provider answered without a candidate', response.usageMetadata, billedInput());
  }
  const finishReason = vendorWord(candidate.finishReason);
  const parts = Array.isArray(candidate.content?.parts) ? (candidate.content.parts as ResponsePart[]) : undefined;
  const texts = (parts ?? []).filter((part) => typeof part?.text === 'string' && part.thought !== true).map((part) => part.text as string);
  const output = texts.join('');
  // Worded by the fan-out, which knows the limit; with no text, thinking took it all.
  const cutAtMaxTokens = finishReason === 'MAX_TOKENS';

  const warnings = [...requestWarnings];
  const { usage, hints } = usageAndHints(response.usageMetadata, searchQueryCount(candidate.groundingMetadata), usageCoversAnswer);
  let cutShort = false;
  if (finishReason !== undefined && BLOCKED.has(finishReason)) {
    if (output === '') throw blocked(finishReason, response.usageMetadata, { usage, hints });
    warnings.push(`The provider stopped the output early (${finishReason}); it may be incomplete`);
    cutShort = true;
  } else if (texts.length === 0 && !cutAtMaxTokens) {
    // A content without parts that STOPs is an answer of no text (Gemini's, when a model has nothing to say): billed, charged as any.
    // Another finish reason (LANGUAGE, OTHER, a tool call): a failure, charged the usage Gemini reported with it.
    if (finishReason !== 'STOP' || typeof candidate.content !== 'object' || candidate.content === null) {
      throw unusableAnswer('upstream_malformed_response', `The provider answered without text${finishReason ? ` (finishReason ${finishReason})` : ''}`, response.usageMetadata, {
        usage,
        hints,
      });
    }
  } else if (finishReason !== undefined && finishReason !== 'STOP' && !cutAtMaxTokens) {
    warnings.push(`The provider ended the output with finishReason ${finishReason}`);
    cutShort = true;
  }

  return {
    output,
    usage,
    ...(!usage && !usageCoversAnswer && response.usageMetadata !== undefined ? { usageMissing: "the vendor's last token usage came before the end of its answer" } : {}),
    ...(Object.keys(hints).length > 0 ? { hints } : {}),
    finishReason,
    ...(cutAtMaxTokens ? { cutAtMaxTokens } : {}),
    ...(cutShort ? { cutShort: true as const } : {}),
    warnings,
  };
}

/**
 * A usageMetadata as the call's usage and the hints for its estimate, should that usage not
 * be believed (the input and the thoughts it showed). Searches run are billed whatever became
 * of the answer: they go with its usage, and as a hint where that is missing. `coversAnswer`
 * false: a stream's running count that parts came after, short of the call's usage, so hints
 * only (runningUsageHints).
 */
export function usageAndHints(metadata: UsageMetadata | null | undefined, searchQueries: number, coversAnswer: boolean): { usage: Usage | undefined; hints: UsageHints } {
  const usage = coversAnswer ? withSearchQueries(toUsage(metadata), searchQueries) : undefined;
  const hints = { ...(coversAnswer ? usageHints : runningUsageHints)(metadata), ...(searchQueries > 0 ? { searchQueries } : {}) };
  return { usage, hints };
}

/**
 * The search queries a grounded answer ran, as Gemini bills them: its grounding's
 * `webSearchQueries`, each distinct non-empty one once ("we ignore the empty web search
 * queries when counting unique queries").
 */
export function searchQueryCount(groundingMetadata: unknown): number {
  const queries = (groundingMetadata as { webSearchQueries?: unknown } | null | undefined)?.webSearchQueries;
  if (!Array.isArray(queries)) return 0;
  return new Set(queries.filter((query): query is string => typeof query === 'string' && query.trim() !== '')).size;
}

/** `usage` with the search queries it ran, where it ran any. */
function withSearchQueries(usage: Usage | undefined, searchQueries: number): Usage | undefined {
  return usage && searchQueries > 0 ? { ...usage, searchQueries } : usage;
}
