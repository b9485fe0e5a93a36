import { GatewayError } from '../errors.js';

/** A gateway deployed without its judge workflow cannot judge; refused before anything runs. */
export class JudgingUnavailableError extends GatewayError {
  override name = 'JudgingUnavailableError';
  constructor() {
    super(501, 'judging_not_available', 'Judging (the judges field) is not available: this gateway runs without its judge workflow');
  }
}

/** The judge workflow did not run to its end: a gateway fault, charged nothing. */
export class JudgingFailedError extends GatewayError {
  override name = 'JudgingFailedError';
  constructor(cause: unknown) {
    super(500, 'internal_error', 'The judging workflow failed; nothing was charged', { cause });
  }
}
