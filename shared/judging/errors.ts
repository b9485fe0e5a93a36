/** A judge answered, but not with a verdict the gateway can read: a failed judge call, never a guess. */
export class VerdictParseError extends Error {
  override name = 'VerdictParseError';
  readonly code = 'unparseable_verdict';
}

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
