import type { ProtocolAdapter } from '../types.js';
import { generateContentLimits } from './limits.js';
import { toGenerateContentRequest } from './request.js';
import { fromGenerateContentResponse } from './response.js';
import { fromErrorResponse } from './errors.js';
import { preparedHttpCall } from '../prepared-http.js';
import { GenerateContentStream } from './stream.js';

/** `POST {baseUrl}/models/{model}:generateContent`; the key travels in `x-goog-api-key`, never in the URL. */
export function generateContentUrl(baseUrl: string, upstreamModel: string): string {
  return `${baseUrl}/models/${encodeURIComponent(upstreamModel)}:generateContent`;
}

/** `POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse`: the same body, answered as server-sent events. */
export function streamGenerateContentUrl(baseUrl: string, upstreamModel: string): string {
  return `${generateContentUrl(baseUrl, upstreamModel).replace(/:generateContent$/, ':streamGenerateContent')}?alt=sse`;
}

/** Gemini `generateContent` (the fam_b models, provider google): one upstream attempt per call. */
export const geminiGenerateContent: ProtocolAdapter = {
  prepare(call, endpoint, onDelta) {
    const { body, warnings } = toGenerateContentRequest(call);
    return preparedHttpCall(
      {
        call,
        outputTokens: generateContentLimits.billedOutputBound(call),
        url: generateContentUrl(endpoint.baseUrl, call.entry.upstreamModel),
        body,
        headers: endpoint.apiKey ? { 'x-goog-api-key': endpoint.apiKey } : {},
        warnings,
        // Google's error mapper also reads the RetryInfo delay from the body.
        mapError: fromErrorResponse,
        fromAnswer: (answer) => fromGenerateContentResponse(answer),
        stream: { url: streamGenerateContentUrl(endpoint.baseUrl, call.entry.upstreamModel), body, reader: (onText) => new GenerateContentStream(onText) },
      },
      onDelta,
    );
  },
  ...generateContentLimits,
};
