import type { ProtocolAdapter } from '../types.js';
import { toGenerateContentRequest } from './request.js';
import { fromGenerateContentResponse } from './response.js';
import { postJson } from '../http.js';
import { fromErrorResponse } from './errors.js';

/** `POST {baseUrl}/models/{model}:generateContent`; the key travels in `x-goog-api-key`, never in the URL. */
export function generateContentUrl(baseUrl: string, upstreamModel: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/models/${encodeURIComponent(upstreamModel)}:generateContent`;
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
  // maxOutputTokens bounds thoughts and answer together (thoughtsTokenCount is spent from it).
  billedOutputBound: (call) => call.maxTokens,
  sentOutputLimit: (call) => call.maxTokens,
};
