/**
 * An answer's choice (chat) or candidate (Gemini): index 0's, or one that names no index. The
 * gateway asks for one; a vendor that sends more (each by its index, a stream's interleaved) had
 * had them joined into one output when streamed, where the whole answer took the first. One that
 * numbers its only choice otherwise answered none the gateway asked for, whole or streamed alike
 * (a stream cannot know whether index 0 is still to come before it ends: `OtherChoices`).
 */
export function firstChoice<T extends { index?: unknown }>(choices: readonly (T | null | undefined)[]): T | undefined {
  for (const choice of choices) if (choice && (choice.index === undefined || choice.index === null || choice.index === 0)) return choice;
  return undefined;
}

/**
 * A stream's choices numbered otherwise, while none of the gateway's has come: where the stream
 * ends (`[DONE]`, its close) with one of them finished (its `finish_reason`, `finishReason`) and
 * none of the gateway's, its answer holds none the gateway asked for, and fails as the whole
 * answer would have (it had failed as a stream cut short). Not before its end: index 0 may
 * still come after another choice finished.
 */
export class OtherChoices<T extends { index?: unknown }> {
  private firstSeen = false;
  private otherFinished = false;

  constructor(private readonly finishKey: keyof T) {}

  /** The first choice of a chunk's (firstChoice), noting the others that finished while it has not come. */
  read(choices: readonly (T | null | undefined)[]): T | undefined {
    const first = firstChoice(choices);
    if (first) this.firstSeen = true;
    else if (!this.firstSeen) this.otherFinished ||= choices.some((choice) => choice?.[this.finishKey] !== undefined && choice?.[this.finishKey] !== null);
    return first;
  }

  /** The stream sent no choice of the gateway's, and one of another index has finished. */
  get only(): boolean {
    return !this.firstSeen && this.otherFinished;
  }
}
