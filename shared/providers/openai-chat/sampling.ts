import type { ModelCall } from '../types.js';
import { modelListed } from './dialects.js';
import type { ChatDialect } from './dialects.js';
import { PROVIDER_NAMES } from '../../catalog/types.js';

/** The generation fields of a chat completions body. */
export interface SamplingFields {
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  reasoning_effort?: string;
}

/**
 * Output limit, temperature, top_p and reasoning effort under the vendor's names. Anything
 * the vendor would reject or ignore is left out (or brought into the vendor's range) with a
 * warning saying so.
 */
export function toSamplingFields(call: ModelCall, dialect: ChatDialect): { fields: SamplingFields; warnings: string[] } {
  const model = call.entry.upstreamModel;
  const fields: SamplingFields = { [dialect.maxTokensField]: call.maxTokens };
  const warnings: string[] = [];

  if (call.temperature !== undefined) {
    if (dialect.samplingIgnored) {
      warnings.push(`temperature was not applied: ${dialect.samplingIgnored}`);
    } else if (dialect.maxTemperature !== undefined && call.temperature > dialect.maxTemperature) {
      fields.temperature = dialect.maxTemperature;
      warnings.push(`temperature ${call.temperature} is above the ${PROVIDER_NAMES[dialect.id]} maximum of ${dialect.maxTemperature}; ${dialect.maxTemperature} was sent`);
    } else {
      fields.temperature = call.temperature;
    }
  }
  if (call.topP !== undefined) {
    if (dialect.samplingIgnored) warnings.push(`topP was not applied: ${dialect.samplingIgnored}`);
    else fields.top_p = call.topP;
  }

  const { reasoningEffort, thinkingBudget, webSearch, cachedContent } = call.tuning;
  if (reasoningEffort !== undefined) {
    if (modelListed(dialect.reasoningEffortModels, model)) fields.reasoning_effort = reasoningEffort;
    else warnings.push(`reasoningEffort was not applied: ${PROVIDER_NAMES[dialect.id]} does not accept reasoning_effort for ${model}, which reasons at its own fixed level`);
  }
  if (thinkingBudget !== undefined) warnings.push('thinkingBudget was not applied: chat completions have no thinking budget');
  if (webSearch !== undefined) warnings.push('webSearch was not applied: chat completions have no search grounding');
  if (cachedContent !== undefined) warnings.push('cachedContent was not applied: chat completions have no cache resources');
  return { fields, warnings };
}
