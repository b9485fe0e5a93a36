import type { ModelEntry } from '../catalog/types.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { textTokens } from '../text/text-tokens.js';
import { cacheMinimumWarnings } from '../providers/cache-breakpoints.js';
import type { ModelCall } from '../providers/types.js';

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
  warnings.push(...cacheMinimumWarnings(call, textTokens));
  return {
    model,
    call,
    warnings,
    ...(request.outputSchema !== undefined ? { outputSchema: request.outputSchema } : {}),
  };
}
