import { UpstreamError, vendorWord } from '../errors.js';
import { cutWhole } from '../../text/characters.js';

/** Anthropic's own status for "temporarily overloaded"; retryable like a 5xx. */
export const OVERLOADED_STATUS = 529;

/** Anthropic error `type`s that are worth another attempt. */
const RETRYABLE_TYPES: ReadonlySet<string> = new Set(['rate_limit_error', 'overloaded_error', 'api_error']);

/** A more specific code for Anthropic's overloaded status; other errors pass through. */
export function refineUpstreamError(error: unknown): unknown {
  if (error instanceof UpstreamError && error.details.upstreamStatus === OVERLOADED_STATUS) {
    return new UpstreamError('upstream_overloaded', error.message, error.details);
  }
  return error;
}

/** An `{type: 'error', error: {type, message}}` body that arrived with a 2xx status. */
export function errorBodyToUpstreamError(body: { error?: unknown }, status: number): UpstreamError {
  const error = (body.error ?? {}) as { type?: unknown; message?: unknown };
  const type = vendorWord(error.type) ?? 'api_error';
  const message = typeof error.message === 'string' ? cutWhole(error.message, 500) : `The provider answered with an ${type}`;
  const code = type === 'rate_limit_error' ? 'upstream_rate_limited' : type === 'overloaded_error' ? 'upstream_overloaded' : 'upstream_error';
  return new UpstreamError(code, message, { upstreamStatus: status, retryable: RETRYABLE_TYPES.has(type) });
}
