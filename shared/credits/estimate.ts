import { toModelCall } from '../compare/model-call.js';
import type { PromptRequest } from '../contract/types.js';
import { providerCost } from '../pricing/cost.js';
import { ADAPTERS } from '../providers/adapters.js';
import { usdToMicroCredits, type CreditRates } from './credits.js';

/** Tokens an image is counted as before the vendor says (a ~1 megapixel image on most vendors). */
const IMAGE_TOKENS = 1_600;

/** A deliberately generous input count: ~4 characters a token, never zero for non-empty input. */
export function estimateInputTokens(request: PromptRequest): number {
  const { body, system } = request;
  let chars = body.prompt.length;
  for (const block of system) chars += block.text.length;
  for (const turn of body.history ?? []) chars += turn.content.length;
  let tokens = Math.ceil(chars / 4) + 4 * (1 + (body.history?.length ?? 0));
  for (const attachment of body.attachments ?? []) {
    const bytes = Math.floor((attachment.base64.length * 3) / 4);
    tokens += attachment.type === 'application/pdf' ? Math.max(IMAGE_TOKENS, Math.ceil(bytes / 20)) : IMAGE_TOKENS;
  }
  return tokens;
}

/**
 * Credits a request may cost at most, before it runs: each model's input at its input
 * price plus its whole output allowance (thinking budget included where the vendor bills
 * it on top) at its output price.
 */
export function estimateMicroCredits(request: PromptRequest, rates: CreditRates): number {
  const inputTokens = estimateInputTokens(request);
  let micro = 0;
  for (const model of request.models) {
    const { call } = toModelCall(request, model);
    const outputTokens = ADAPTERS[model.entry.protocol].outputAllowance?.(call) ?? call.maxTokens;
    const usd = providerCost(model.entry.prices, { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0 });
    micro += usdToMicroCredits(usd, rates);
  }
  return micro;
}
