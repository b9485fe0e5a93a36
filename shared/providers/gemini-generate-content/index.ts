import type { ProtocolAdapter } from '../types.js';
import { toGenerateContentRequest } from './request.js';
import { fromGenerateContentResponse } from './response.js';
import { postJson } from '../http.js';
import { fromErrorResponse } from './errors.js';
import { postSse } from '../stream-http.js';
import { GenerateContentStream } from './stream.js';

/** `POST {baseUrl}/models/{model}:generateContent`; the key travels in `x-goog-api-key`, never in the URL. */
export function generateContentUrl(baseUrl: string, upstreamModel: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/models/${encodeURIComponent(upstreamModel)}:generateContent`;
}

/** `POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse`: the same body, answered as server-sent events. */
export function streamGenerateContentUrl(baseUrl: string, upstreamModel: string): string {
  return `${generateContentUrl(baseUrl, upstreamModel).replace(/:generateContent$/, ':streamGenerateContent')}?alt=sse`;
}

/** Gemini `generateContent` (the fam_b models, provider google): one upstream attempt per call. */
export const geminiGenerateContent: ProtocolAdapter = {
  async send(call, endpoint, signal, ready) {
    const { body, warnings } = toGenerateContentRequest(call);
    const headers: Record<string, string> = endpoint.apiKey ? { 'x-goog-api-key': endpoint.apiKey } : {};
    // Google's error mapper also reads the RetryInfo delay from the body.
    const answer = await postJson(generateContentUrl(endpoint.baseUrl, call.entry.upstreamModel), body, headers, signal, { mapError: fromErrorResponse, ready });
    return fromGenerateContentResponse(answer, warnings);
  },
  async stream(call, endpoint, signal, onDelta, ready) {
    const { body, warnings } = toGenerateContentRequest(call);
    const headers: Record<string, string> = endpoint.apiKey ? { 'x-goog-api-key': endpoint.apiKey } : {};
    const reader = new GenerateContentStream(onDelta);
    await postSse(streamGenerateContentUrl(endpoint.baseUrl, call.entry.upstreamModel), body, headers, signal, {
      mapError: fromErrorResponse,
      ready,
      onEvent: (event) => reader.onEvent(event),
      partial: () => reader.partial(),
    });
    return reader.finish(warnings);
  },
  // maxOutputTokens bounds thoughts and answer together (thoughtsTokenCount is spent from it).
  billedOutputBound: (call) => call.maxTokens,
  sentOutputLimit: (call) => call.maxTokens,
};
