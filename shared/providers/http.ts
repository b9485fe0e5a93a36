import { UpstreamError, parseRetryAfter } from './errors.js';

/** Turns a vendor's non-2xx answer into an UpstreamError; protocols whose error bodies say more pass their own. */
export type ErrorMapper = (status: number, text: string, retryAfter: string | null) => UpstreamError;

/**
 * POSTs JSON to a vendor and returns the parsed JSON answer. Every failure becomes an
 * UpstreamError: by default 429 and 5xx are retryable, other statuses are not; a body that
 * is not JSON is a malformed response. The vendor's error message is kept; the request body never is.
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal: AbortSignal,
  mapError: ErrorMapper = defaultErrorMapper,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw abortError(signal, error);
    throw new UpstreamError('upstream_unreachable', `Could not reach the provider: ${describe(error)}`, { retryable: true, cause: error });
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw abortError(signal, error);
    throw new UpstreamError('upstream_unreachable', `The provider closed the connection: ${describe(error)}`, { retryable: true, cause: error });
  }
  if (!response.ok) throw mapError(response.status, text, response.headers.get('retry-after'));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UpstreamError('upstream_malformed_response', `The provider answered ${response.status} with a body that is not JSON`, {
      upstreamStatus: response.status,
      cause: error,
    });
  }
}

export const defaultErrorMapper: ErrorMapper = (status, text, retryAfter) =>
  new UpstreamError(status === 429 ? 'upstream_rate_limited' : 'upstream_error', vendorMessage(text) ?? `The provider answered ${status}`, {
    upstreamStatus: status,
    retryable: status === 429 || status >= 500,
    retryAfterMs: parseRetryAfter(retryAfter),
  });

function abortError(signal: AbortSignal, cause: unknown): UpstreamError {
  return new UpstreamError('timeout', 'The model did not answer before the request deadline', { cause: signal.reason ?? cause });
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? 'network error';
}

/** The human part of a vendor error body (`{"error":{"message"}}` and its relatives), cut short. */
function vendorMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    return typeof message === 'string' ? message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}
