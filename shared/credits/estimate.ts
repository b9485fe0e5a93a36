import { toModelCall } from '../compare/model-call.js';
import type { ModelEntry } from '../catalog/types.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { judgeCall, judgeRequest } from '../judging/judge-prompt.js';
import { providerCost } from '../pricing/cost.js';
import { ADAPTERS } from '../providers/adapters.js';
import { schemaInstruction } from '../providers/structured-output.js';
import type { ModelCall } from '../providers/types.js';
import { usdToMicroCredits, type CreditRates } from './credits.js';

/** Tokens an image is counted as before the vendor says (a ~1 megapixel image on most vendors). */
const IMAGE_TOKENS = 1_600;

/**
 * Tokens a text may count, generously: 4 ASCII characters a token, and a token for every
 * other character (UTF-16 unit). Chinese, Japanese or Korean text counts about a token a
 * character with the vendors' tokenizers, 4 times what a flat 4 characters a token says.
 */
function textTokens(text: string): number {
  let other = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) other++;
  return (text.length - other) / 4 + other;
}

/** A deliberately generous input count (see textTokens), never zero for non-empty input. */
export function estimateInputTokens(request: PromptRequest): number {
  const { body, system } = request;
  let text = textTokens(body.prompt);
  for (const block of system) text += textTokens(block.text);
  for (const turn of body.history ?? []) text += textTokens(turn.content);
  let tokens = Math.ceil(text) + 4 * (1 + (body.history?.length ?? 0));
  for (const attachment of body.attachments ?? []) {
    const bytes = Math.floor((attachment.base64.length * 3) / 4);
    tokens += attachment.type === 'application/pdf' ? Math.max(IMAGE_TOKENS, Math.ceil(bytes / 20)) : IMAGE_TOKENS;
  }
  return tokens;
}

/** Output tokens a call may be billed: its limit, plus a thinking budget where the vendor bills it on top. */
function billedOutputAllowance(model: RequestedModel, call: ModelCall): number {
  return ADAPTERS[model.entry.protocol].outputAllowance?.(call) ?? call.maxTokens;
}

/**
 * Input tokens a call may have billed as cache writes, which Anthropic prices above input
 * (1.25 times, 5-minute writes): the prefix up to its last `cache_control` breakpoint
 * (system blocks, then history turns), counted like the input. 0 where writes cost no
 * more than input. Reads from cache are cheaper than input, so they never raise the worst case.
 */
function cacheWriteAllowance(entry: ModelEntry, call: ModelCall): number {
  const { input, cacheWrite } = entry.prices;
  if (cacheWrite === null || cacheWrite <= input) return 0;
  // Most calls mark no breakpoint: no need to count their text again.
  if (!call.system.some((block) => block.cache_control) && !call.history.some((turn) => turn.cache_control)) return 0;
  let text = 0;
  let turns = 0;
  let prefix = 0;
  for (const block of call.system) {
    text += textTokens(block.text);
    if (block.cache_control) prefix = Math.ceil(text);
  }
  for (const turn of call.history) {
    text += textTokens(turn.content);
    turns++;
    if (turn.cache_control) prefix = Math.ceil(text) + 4 * turns;
  }
  return prefix;
}

function callMicroCredits(model: RequestedModel, call: ModelCall, inputTokens: number, outputTokens: number, rates: CreditRates): number {
  const cacheWriteTokens = Math.min(inputTokens, cacheWriteAllowance(model.entry, call));
  const usd = providerCost(model.entry.prices, { inputTokens, cachedInputTokens: 0, cacheWriteTokens, outputTokens, reasoningTokens: 0 });
  return usdToMicroCredits(usd, rates);
}

/**
 * Credits a request may cost at most, before it runs: each model's input at its input
 * price (the prefix up to its last cache breakpoint at the cache-write price, where writes
 * cost more) plus its whole output allowance (thinking budget included where the vendor bills
 * it on top) at its output price; then the judge calls the request implies.
 */
export function estimateMicroCredits(request: PromptRequest, rates: CreditRates): number {
  const inputTokens = estimateInputTokens(request);
  let micro = 0;
  for (const model of request.models) {
    const { call } = toModelCall(request, model);
    micro += callMicroCredits(model, call, inputTokens, billedOutputAllowance(model, call), rates);
  }
  return micro + estimateJudgingMicroCredits(request, rates);
}

/**
 * The judge calls at most: judges x n(n-1) for the n requested models (every pair, both
 * orders, as if every model completed). Each call's input is what the judge is shown (the
 * instructions, the verdict schema, the prompt, system prompt and conversation) plus both
 * contestants' whole output allowances; its output is the judge's verdict allowance.
 */
export function estimateJudgingMicroCredits(request: PromptRequest, rates: CreditRates): number {
  if (request.judges.length === 0 || request.models.length < 2) return 0;
  const answerAllowances = request.models.map((model) => toModelCall(request, model).call.maxTokens);
  const schemaTokens = Math.ceil(schemaInstruction({}).length / 4);
  let micro = 0;
  for (const judge of request.judges) {
    // The judge's own share: everything but the two answers (the schema counted as if it went as an instruction).
    const frame = estimateInputTokens(judgeRequest(request, judge, '', ''));
    const call = judgeCall(request, judge, '', '');
    const schema = call.responseSchema ? schemaTokens + Math.ceil(JSON.stringify(call.responseSchema).length / 4) : 0;
    const outputTokens = billedOutputAllowance(judge, call);
    for (let i = 0; i < answerAllowances.length; i++) {
      for (let j = 0; j < answerAllowances.length; j++) {
        if (i === j) continue;
        const inputTokens = frame + schema + (answerAllowances[i] as number) + (answerAllowances[j] as number);
        micro += callMicroCredits(judge, call, inputTokens, outputTokens, rates);
      }
    }
  }
  return micro;
}
