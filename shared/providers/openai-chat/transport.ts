import { UpstreamError } from '../errors.js';
import type { ChatDialect } from './dialects.js';
import { fromErrorResponse } from './errors.js';

/**
 * Like shared/providers/http.ts postJson, but a non-2xx body goes through the dialect's error
 * mapper: postJson keeps only `error.message`/`message` strings, which loses Mistral's
 * validation details, and it does not know Groq's 498 capacity status.
 */
export async function postChat(url: string, body: unknown, headers: Record<string, string>, signal: AbortSignal, dialect: ChatDialect): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw timeout(signal, error);
    throw new UpstreamError('upstream_unreachable', `Could not reach the provider: ${describe(error)}`, { retryable: true, cause: error });
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw timeout(signal, error);
    throw new UpstreamError('upstream_unreachable', `The provider closed the connection: ${describe(error)}`, { retryable: true, cause: error });
  }
  if (!response.ok) throw fromErrorResponse(dialect, response.status, text, response.headers.get('retry-after'));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UpstreamError('upstream_malformed_response', `The provider answered ${response.status} with a body that is not JSON`, {
      upstreamStatus: response.status,
      cause: error,
    });
  }
}

function timeout(signal: AbortSignal, cause: unknown): UpstreamError {
  return new UpstreamError('timeout', 'The model did not answer before the request deadline', { cause: signal.reason ?? cause });
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? 'network error';
}
