import { type FieldError, GatewayError } from '../errors.js';

/** An answer about the request's Idempotency-Key: `details` names the header, as a 400 about it does. */
abstract class IdempotencyKeyError extends GatewayError {
  readonly details: FieldError[];
  constructor(status: number, code: string, message: string, detail: string) {
    super(status, code, message);
    this.details = [{ field: 'header:Idempotency-Key', message: detail }];
  }
}

/**
 * The key's record says running: a request runs under it, or one ended without freeing it (the
 * store failed as it would have), which its lease frees `leaseLeftMs` from now at the latest.
 */
export class IdempotencyInProgressError extends IdempotencyKeyError {
  override name = 'IdempotencyInProgressError';
  constructor(leaseLeftMs: number) {
    const latest = Math.max(1, Math.ceil(leaseLeftMs / 1000));
    super(
      409,
      'idempotency_in_progress',
      `A request with this Idempotency-Key is still running, or ended without freeing it; retry after it finishes (its key is free in ${latest} s at the latest)`,
      'names a request still running',
    );
  }
  override headers(): Record<string, string> {
    return { 'Retry-After': '1' };
  }
}

export class IdempotencyKeyReusedError extends IdempotencyKeyError {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super(422, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request body', 'was used with a different request body');
  }
}

const NOT_RETAINED = {
  zero_data_retention: 'The request with this Idempotency-Key completed under zero data retention; its response was not kept',
  too_large: 'The request with this Idempotency-Key completed; its response was too large to keep',
  gone: 'The request with this Idempotency-Key completed; its stored response is no longer there (expired)',
} as const;

export class ResponseNotRetainedError extends IdempotencyKeyError {
  override name = 'ResponseNotRetainedError';
  constructor(
    readonly promptLogId: string,
    reason: 'zero_data_retention' | 'too_large' | 'gone',
  ) {
    super(409, 'response_not_retained', NOT_RETAINED[reason], 'names a request that completed, whose response is not kept');
  }
  override extras(): Record<string, unknown> {
    return { promptLogId: this.promptLogId };
  }
}
