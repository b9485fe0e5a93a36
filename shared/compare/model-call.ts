import type { ModelEntry, WireProtocol } from '../catalog/types.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { cacheBreakpoints, textTokens } from '../pricing/bound.js';
import type { ModelCall } from '../providers/types.js';

/** Protocols that send `cache_control` breakpoints on: Anthropic's as they are, Bedrock's as cache points (Gemini's adapter drops them, and says so). */
const BREAKPOINT_PROTOCOLS: ReadonlySet<WireProtocol> = new Set(['anthropic-messages', 'bedrock-converse']);

/**
 * DESIGN.md, step 4: a breakpoint on a prefix shorter than the model's cache minimum (spec
 * 2.9) is sent anyway, and flagged, since the vendor ignores it silently. The prefix as
 * text usually counts (textTokens), hence "about".
 */
function cacheMinimumWarnings(call: ModelCall): string[] {
  const { entry } = call;
  const { minTokens } = entry.capabilities.cache;
  if (minTokens === undefined || !BREAKPOINT_PROTOCOLS.has(entry.protocol)) return [];
  return cacheBreakpoints(call, textTokens)
    .filter((breakpoint) => breakpoint.prefixTokens < minTokens)
    .map(
      (breakpoint) =>
        `The cache_control breakpoint on ${breakpoint.where} closes a prefix of about ${breakpoint.prefixTokens} tokens, under ${entry.id}'s cache minimum of ${minTokens}: sent, but the vendor caches nothing there`,
    );
}

/** The output limit a model runs with: the request's, capped at the model's maximum, or the catalog allowance. */
export function effectiveMaxTokens(entry: ModelEntry, requested: number | undefined): number {
  return Math.min(requested ?? entry.defaultMaxTokens, entry.maxOutputTokens);
}

/**
 * One upstream call as the request plans it, built once: what the estimate bounds and the
 * fan-out sends (the adapter maps `call` to its vendor's body), the warnings of adjusting
 * the request to the model, and what the answer reports it as.
 */
export interface PlannedCall {
  /** The model as requested: its ID is what the result echoes. */
  model: RequestedModel;
  call: ModelCall;
  warnings: string[];
  /** The `response_schema`'s JSON, when outputs are checked against it (PromptRequest.outputSchema). */
  outputSchema?: string;
}

/** One model's share of the request, plus the warnings of adjusting it to the model. */
export function planCall(request: PromptRequest, model: RequestedModel): PlannedCall {
  const { body } = request;
  const settings = body.generation_settings ?? {};
  const warnings: string[] = model.entry.servedBy ? [model.entry.servedBy] : [];
  const maxTokens = effectiveMaxTokens(model.entry, settings.maxTokens);
  if (settings.maxTokens !== undefined && maxTokens < settings.maxTokens) {
    warnings.push(`maxTokens ${settings.maxTokens} is above ${model.entry.id}'s maximum; ${maxTokens} was used`);
  }
  const call: ModelCall = {
    entry: model.entry,
    system: request.system,
    history: body.history ?? [],
    prompt: body.prompt,
    attachments: body.attachments ?? [],
    temperature: settings.temperature,
    topP: settings.topP,
    maxTokens,
    tuning: model.tuning,
    responseSchema: body.response_schema,
  };
  warnings.push(...cacheMinimumWarnings(call));
  return {
    model,
    call,
    warnings,
    ...(request.outputSchema !== undefined ? { outputSchema: request.outputSchema } : {}),
  };
}
