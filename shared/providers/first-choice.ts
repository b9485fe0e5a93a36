/**
 * An answer's choice (chat) or candidate (Gemini): index 0's, or one that names no index, or
 * else the one of the lowest index. The gateway asks for one; a vendor that sends more (each by
 * its index, a stream's interleaved) had had them joined into one output when streamed, where
 * the whole answer took the first. `index`: a stream's, once its first chunk chose one.
 */
export function firstChoice<T extends { index?: unknown }>(choices: readonly (T | null | undefined)[], index?: unknown): T | undefined {
  let lowest: T | undefined;
  for (const choice of choices) {
    if (!choice) continue;
    const at = choice.index ?? undefined;
    if (index !== undefined) {
      if (at === index || at === undefined) return choice;
      continue;
    }
    if (at === undefined || at === 0) return choice;
    if (typeof at === 'number' && (lowest === undefined || at < (lowest.index as number))) lowest = choice;
  }
  return lowest;
}
