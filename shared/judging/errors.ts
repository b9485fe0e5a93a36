/** A judge answered, but not with a verdict the gateway can read: a failed judge call, never a guess. */
export class VerdictParseError extends Error {
  override name = 'VerdictParseError';
  readonly code = 'unparseable_verdict';
}

const cutShort = new VerdictParseError("The judge's answer was cut short (its warnings say where): a verdict read from part of it could be a draft, so none is taken");

/**
 * A judge's answer cut short (at its limit, by its vendor, by the output budget) holds no verdict
 * to read: what is left of it may end before the verdict or inside it, and an object found
 * earlier (a draft, a first impression) is no last word. A failed call, charged what it used.
 */
export const CUT_SHORT_VERDICT = { code: cutShort.code, message: cutShort.message };

/** The workflow did not run to its end (its tasks' failures are results, so this is a gateway fault). */
export class WorkflowFailedError extends Error {
  override name = 'WorkflowFailedError';
  constructor(
    readonly status: string,
    readonly error?: string,
    options?: { cause?: unknown },
  ) {
    super(`The judging workflow ended ${status}${error ? ` (${error})` : ''}`, options);
  }
}
