/**
 * `model_tuning.thinkingBudget` (spec 2.6: 0 to 24576, 0 disables) as Gemini's thinkingConfig.
 *
 * Gemini 2.5 takes the budget as is (`thinkingBudget`). Gemini 3 models take a thinking
 * level instead (`thinkingLevel`; the budget is accepted only for backwards compatibility,
 * with worse results, and the two together are a 400), cannot honour a token budget, and
 * cannot turn thinking off: the lowest level of the Flash models is `minimal`, which may
 * still think a little; the Pro models start at `low`. So a budget becomes the nearest level
 * the model supports, always with a warning saying what was sent instead.
 */
export type ThinkingLevel = 'minimal' | 'low' | 'medium' | 'high';

export interface ThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: ThinkingLevel;
}

const ALL_LEVELS: readonly ThinkingLevel[] = ['minimal', 'low', 'medium', 'high'];

/** Levels each Gemini 3 model accepts (Gemini API and Vertex model pages); undefined for models that take a budget. */
export function thinkingLevelsOf(upstreamModel: string): readonly ThinkingLevel[] | undefined {
  if (!upstreamModel.startsWith('gemini-3')) return undefined;
  if (upstreamModel.startsWith('gemini-3-pro')) return ['low', 'high'];
  if (upstreamModel.includes('-pro')) return ['low', 'medium', 'high'];
  return ALL_LEVELS;
}

/**
 * Whether the model thinks: every Gemini 3 model (no level turns it off) and 2.5 Flash (by
 * default: the catalog takes no budget for the 2.5 models), not 2.5 Flash-Lite (not by
 * default). The gateway asks for no thought summaries: the thinking shows only as a count.
 */
export function thinks(upstreamModel: string): boolean {
  return !upstreamModel.startsWith('gemini-2.5-flash-lite');
}

/** The level a budget stands for: 0 asks for none, up to 1,024 a little, up to 8,192 a fair amount, more a lot. */
export function levelForBudget(budget: number): ThinkingLevel {
  if (budget <= 0) return 'minimal';
  if (budget <= 1024) return 'low';
  if (budget <= 8192) return 'medium';
  return 'high';
}

/** The closest level the model supports, rounding up (more thinking rather than none). */
function nearestSupported(wanted: ThinkingLevel, supported: readonly ThinkingLevel[]): ThinkingLevel {
  const from = ALL_LEVELS.indexOf(wanted);
  for (let i = from; i < ALL_LEVELS.length; i++) {
    const level = ALL_LEVELS[i] as ThinkingLevel;
    if (supported.includes(level)) return level;
  }
  return supported[supported.length - 1] ?? 'high';
}

export function toThinkingConfig(upstreamModel: string, budget: number | undefined): { config?: ThinkingConfig; warning?: string } {
  if (budget === undefined) return {};
  const levels = thinkingLevelsOf(upstreamModel);
  if (!levels) return { config: { thinkingBudget: budget } };

  const level = nearestSupported(levelForBudget(budget), levels);
  let warning: string;
  if (budget === 0 && level === 'minimal') {
    warning = `${upstreamModel} cannot turn thinking off; thinkingBudget 0 was sent as thinkingLevel 'minimal', which may still think a little`;
  } else if (budget === 0) {
    warning = `${upstreamModel} cannot turn thinking off; thinkingBudget 0 was sent as its lowest thinkingLevel '${level}'`;
  } else {
    warning = `${upstreamModel} takes a thinking level, not a token budget; thinkingBudget ${budget} was sent as thinkingLevel '${level}'`;
  }
  return { config: { thinkingLevel: level }, warning };
}
