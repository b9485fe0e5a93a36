import type { ModelEntry } from '../catalog/types.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { prefixTokens } from '../text/text-tokens.js';
import { cacheMinimumWarnings } from '../providers/cache-breakpoints.js';
import type { ModelCall } from '../providers/types.js';

/** The output limit a model runs with: the request's, capped at the model's maximum, or the catalog allowance. */
export function effectiveMaxTokens(entry: ModelEntry, requested: number | undefined): number {
  return Math.min(requested ?? entry.defaultMaxTokens, entry.maxOutputTokens);
}

/**
 * What a result says when its vendor stopped at the call's maxTokens: with no output, that
 * reasoning took it all (it counts toward the limit, and a reasoning model can spend every
 * token of it before a word of its answer); where the limit was the catalog's default, that
 * the request may ask for more. The same words for every vendor.
 */
export function maxTokensCutWarning(call: Pick<ModelCall, 'entry' | 'maxTokens' | 'maxTokensDefault'>, empty: boolean): string {
  const cut = empty ? 'maxTokens was used up before any output: reasoning tokens count toward it' : 'The output was cut at maxTokens';
  if (!call.maxTokensDefault || call.maxTokens >= call.entry.maxOutputTokens) return cut;
  return `${cut}; it was ${call.entry.id}'s default of ${call.maxTokens}, the request giving none (generation_settings.maxTokens may be up to ${call.entry.maxOutputTokens})`;
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
  /**
   * How the call fails where its answer was cut short (at maxTokens, by the output budget, or by
   * its vendor: ModelReply.cutShort), for a call only a whole answer serves (a judge's verdict);
   * absent, such an answer completes with a warning.
   */
  cutShortFails?: { code: string; message: string };
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
    ...(settings.maxTokens === undefined ? { maxTokensDefault: true } : {}),
    tuning: model.tuning,
    responseSchema: body.response_schema,
  };
  warnings.push(...cacheMinimumWarnings(call, prefixTokens));
  return {
    model,
    call,
    warnings,
    ...(request.outputSchema !== undefined ? { outputSchema: request.outputSchema } : {}),
  };
}
