import type { ModelCall } from '../types.js';
import { rejectsSamplingParameters } from './models.js';

export interface SamplingPlan {
  temperature?: number;
  top_p?: number;
  warnings: string[];
}

/** Anthropic's temperature range is 0 to 1; the contract allows up to 2. */
const MAX_TEMPERATURE = 1;

/**
 * temperature and top_p as Anthropic accepts them. Each setting Anthropic would refuse is
 * dropped (or, for a temperature above 1, lowered to 1) with a warning saying so.
 */
export function planSampling(call: Pick<ModelCall, 'entry' | 'temperature' | 'topP'>, thinking: boolean): SamplingPlan {
  const { entry } = call;
  let temperature = call.temperature;
  let topP = call.topP;
  const warnings: string[] = [];
  if (temperature === undefined && topP === undefined) return { warnings };

  if (rejectsSamplingParameters(entry.upstreamModel)) {
    const names = [temperature !== undefined && 'temperature', topP !== undefined && 'topP'].filter(Boolean).join(' and ');
    return { warnings: [`${entry.id} rejects temperature and top_p: ${names} not sent`] };
  }
  if (thinking) {
    // Extended thinking runs at temperature 1 only, and the contract's topP is not sent with it.
    if (temperature !== undefined && temperature !== 1) {
      warnings.push(`temperature ${temperature} not sent: Anthropic allows only temperature 1 with extended thinking`);
      temperature = undefined;
    }
    if (topP !== undefined) {
      warnings.push(`topP ${topP} not sent: Anthropic restricts top_p with extended thinking`);
      topP = undefined;
    }
  }
  if (temperature !== undefined && temperature > MAX_TEMPERATURE) {
    warnings.push(`temperature ${temperature} is above Anthropic's maximum of ${MAX_TEMPERATURE}; ${MAX_TEMPERATURE} was sent`);
    temperature = MAX_TEMPERATURE;
  }
  if (temperature !== undefined && topP !== undefined) {
    warnings.push(`topP ${topP} not sent: Claude models accept temperature or top_p, not both`);
    topP = undefined;
  }
  const plan: SamplingPlan = { warnings };
  if (temperature !== undefined) plan.temperature = temperature;
  if (topP !== undefined) plan.top_p = topP;
  return plan;
}
