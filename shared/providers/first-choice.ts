/**
 * An answer's choice (chat) or candidate (Gemini): index 0's, or one that names no index. The
 * gateway asks for one; a vendor that sends more (each by its index, a stream's interleaved) had
 * had them joined into one output when streamed, where the whole answer took the first. One that
 * numbers its only choice otherwise answered none the gateway asked for, whole or streamed alike
 * (a stream cannot know whether index 0 is still to come).
 */
export function firstChoice<T extends { index?: unknown }>(choices: readonly (T | null | undefined)[]): T | undefined {
  for (const choice of choices) if (choice && (choice.index === undefined || choice.index === null || choice.index === 0)) return choice;
  return undefined;
}
