import { blockedAnswer, UpstreamError, vendorWord } from '../errors.js';
import type { ModelReply, Usage } from '../types.js';
import { toUsage, type UsageMetadata } from './usage.js';

interface ResponsePart {
  text?: unknown;
  thought?: unknown;
}

interface Candidate {
  content?: { parts?: unknown } | null;
  finishReason?: unknown;
}

interface GenerateContentResponse {
  candidates?: unknown;
  promptFeedback?: { blockReason?: unknown } | null;
  usageMetadata?: UsageMetadata | null;
}

/** Finish reasons that mean Gemini withheld the output (policy, recitation, blocklists). */
const BLOCKED: ReadonlySet<string> = new Set(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/** `usage`: what an answer blocked after it was generated (thinking included) was billed. */
function blocked(reason: string, usage?: Usage): UpstreamError {
  return blockedAnswer(`The provider blocked the answer (${reason})`, usage);
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
 * 'upstream_blocked' (not retryable: the same request is blocked again).
 */
export function fromGenerateContentResponse(body: unknown, requestWarnings: readonly string[] = []): ModelReply {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw malformed('The provider answered without a response object');
  const response = body as GenerateContentResponse;
  // Named by a word of Gemini's enum, or 'unrecognised': never the vendor's string as it came, which can be megabytes.
  if (promptBlocked(response.promptFeedback)) throw blocked(vendorWord(response.promptFeedback?.blockReason)!);

  const candidate = Array.isArray(response.candidates) ? (response.candidates[0] as Candidate | undefined) : undefined;
  if (!candidate || typeof candidate !== 'object') throw malformed('The provider answered without a candidate');
  const finishReason = vendorWord(candidate.finishReason);
  const parts = Array.isArray(candidate.content?.parts) ? (candidate.content.parts as ResponsePart[]) : undefined;
  const texts = (parts ?? []).filter((part) => typeof part?.text === 'string' && part.thought !== true).map((part) => part.text as string);
  const output = texts.join('');

  const warnings = [...requestWarnings];
  if (finishReason !== undefined && BLOCKED.has(finishReason)) {
    if (output === '') throw blocked(finishReason, toUsage(response.usageMetadata));
    warnings.push(`The provider stopped the output early (${finishReason}); it may be incomplete`);
  } else if (finishReason === 'MAX_TOKENS') {
    warnings.push(output === '' ? 'Thinking used the whole maxTokens allowance; there is no output' : 'The output was cut at maxTokens');
  } else if (texts.length === 0) {
    throw malformed(`The provider answered without text${finishReason ? ` (finishReason ${finishReason})` : ''}`);
  } else if (finishReason !== undefined && finishReason !== 'STOP') {
    warnings.push(`The provider ended the output with finishReason ${finishReason}`);
  }

  const queries = searchQueries(candidate);
  if (queries > 0) {
    const ran = `${queries} ${queries === 1 ? 'query' : 'queries'}`;
    warnings.push(`Google Search grounding ran ${ran}; search fees are billed apart and not included in providerCost`);
  }
  const usage = toUsage(response.usageMetadata);
  if (!usage) warnings.push('The provider reported no usable token usage; cost is unavailable');
  return { output, usage, finishReason, warnings };
}

function searchQueries(candidate: Candidate): number {
  const grounding = (candidate as { groundingMetadata?: { webSearchQueries?: unknown } }).groundingMetadata;
  return Array.isArray(grounding?.webSearchQueries) ? grounding.webSearchQueries.length : 0;
}
