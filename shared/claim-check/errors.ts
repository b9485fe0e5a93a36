/** The claim check named in a state has no object: expired, deleted, or never written. */
export class ClaimCheckNotFoundError extends Error {
  override name = 'ClaimCheckNotFoundError';
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`No claim-check object under "${key}"`, options);
  }
}
