import { UpstreamError, unusableAnswer, vendorWord } from '../errors.js';
import type { ModelReply } from '../types.js';
import { toUsage } from './usage.js';
import type { ResponsesUsage } from './usage.js';
import { cutWhole } from '../../text/characters.js';

interface ContentPart {
  type?: unknown;
  text?: unknown;
  refusal?: unknown;
}

interface OutputItem {
  type?: unknown;
  content?: unknown;
}

interface ResponsesResponse {
  status?: unknown;
  output?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
  incomplete_details?: { reason?: unknown } | null;
  usage?: ResponsesUsage | null;
}

/** Error codes of a `failed` response that a later attempt may not meet. */
const TRANSIENT_FAILURES: ReadonlySet<string> = new Set(['server_error', 'rate_limit_exceeded']);

/**
 * A Responses API answer as the gateway's reply: the text of every `output_text` part of the
 * `message` items, in order (reasoning and other items are skipped). A refusal becomes the
 * output with a warning; a cut answer keeps its partial text with a warning; a `failed`
 * response is an UpstreamError. `streamed`: the text a streamed call's deltas carried, its output
 * (the final response's own copy may lack it).
 */
export function fromResponsesResponse(body: unknown, streamed = ''): ModelReply {
  const response = (typeof body === 'object' && body !== null ? body : {}) as ResponsesResponse;
  const status = response.status;
  if (status === 'failed') throw failure(response.error);
  if (status !== 'completed' && status !== 'incomplete') {
    throw new UpstreamError('upstream_malformed_response', `The provider answered with response status ${describeStatus(status)}`);
  }
  if (!Array.isArray(response.output)) {
    throw new UpstreamError('upstream_malformed_response', 'The provider answered without an output list');
  }

  const texts: string[] = [];
  const refusals: string[] = [];
  for (const item of response.output as OutputItem[]) {
    if (item?.type !== 'message') continue;
    if (!Array.isArray(item.content)) throw new UpstreamError('upstream_malformed_response', 'The provider answered a message without content');
    for (const part of item.content as ContentPart[]) {
      if (part?.type === 'output_text' && typeof part.text === 'string') texts.push(part.text);
      else if (part?.type === 'refusal' && typeof part.refusal === 'string') refusals.push(part.refusal);
    }
  }
  const warnings: string[] = [];
  let finishReason: string = status;
  let output = texts.join('');
  if (refusals.length > 0) {
    finishReason = 'refusal';
    if (texts.length === 0) output = refusals.join('');
    // The refusal text is model output: it stays in `output`, never in a warning.
    warnings.push(texts.length === 0 ? 'The model refused to answer; the output is its refusal message' : 'The model refused part of the answer');
  }
  // Streamed, what the deltas carried is the output.
  if (streamed !== '') output = streamed;
  const usage = toUsage(response.usage);
  if (status === 'incomplete') {
    finishReason = vendorWord(response.incomplete_details?.reason) ?? 'incomplete';
    // Withheld whole, as a chat vendor's content_filter with no text: blocked, charged what was billed (it had been a completed empty answer).
    if (finishReason === 'content_filter' && output === '') throw unusableAnswer('upstream_blocked', 'The provider blocked the answer (content_filter)', response.usage, { usage });
    if (finishReason !== 'max_output_tokens') warnings.push(incompleteWarning(finishReason));
  }
  const cut = status === 'incomplete' ? (finishReason === 'max_output_tokens' ? { cutAtMaxTokens: true } : { cutShort: true as const }) : {};
  return { output, usage, finishReason, ...cut, warnings };
}

/** Why an incomplete answer stopped, but at maxTokens (cutAtMaxTokens). */
function incompleteWarning(reason: string): string {
  switch (reason) {
    case 'content_filter':
      return "The output was stopped by the provider's content filter";
    default:
      return `The provider marked the output incomplete (${reason})`;
  }
}

function failure(error: ResponsesResponse['error']): UpstreamError {
  return reportedFailure(error?.code, error?.message, 'The provider reported that the response failed');
}

/**
 * A failure the Responses API reported in its answer (a `failed` response) or its stream (an
 * `error` event), by its code: a rate limit, an account out of quota (spent credit, not retried,
 * as its 429 is), a transient failure (retried), or another.
 */
export function reportedFailure(code: unknown, message: unknown, fallback: string, details: { upstreamStatus?: number } = {}): UpstreamError {
  const text = typeof message === 'string' ? cutWhole(message, 500) : fallback;
  const named = typeof code === 'string' ? code : undefined;
  const creditSpent = named === 'insufficient_quota';
  return new UpstreamError(named === 'rate_limit_exceeded' || creditSpent ? 'upstream_rate_limited' : 'upstream_error', text, {
    ...details,
    retryable: named !== undefined && TRANSIENT_FAILURES.has(named),
    ...(creditSpent ? { creditSpent: true as const } : {}),
  });
}

function describeStatus(status: unknown): string {
  return typeof status === 'string' ? `'${vendorWord(status)}'` : 'missing';
}
