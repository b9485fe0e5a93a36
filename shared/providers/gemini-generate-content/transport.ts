import { UpstreamError } from '../errors.js';
import { fromErrorResponse } from './errors.js';

/** `POST {baseUrl}/models/{model}:generateContent`; the key travels in `x-goog-api-key`, never in the URL. */
export function generateContentUrl(baseUrl: string, upstreamModel: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/models/${encodeURIComponent(upstreamModel)}:generateContent`;
}

/**
 * Like shared/providers/http.ts postJson, but a non-2xx body goes through the Google error
 * mapper, which also reads the RetryInfo detail (postJson keeps only the message and the
 * Retry-After header, and Google usually sends its retry delay in the body).
 */
export async function postGenerateContent(url: string, body: unknown, apiKey: string | undefined, signal: AbortSignal): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) headers['x-goog-api-key'] = apiKey;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
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
  if (!response.ok) throw fromErrorResponse(response.status, text, response.headers.get('retry-after'));
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
