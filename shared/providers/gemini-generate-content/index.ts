import type { ProtocolAdapter } from '../types.js';
import { toGenerateContentRequest } from './request.js';
import { fromGenerateContentResponse } from './response.js';
import { generateContentUrl, postGenerateContent } from './transport.js';

/** Gemini `generateContent` (the fam_b models, provider google): one upstream attempt per call. */
export const geminiGenerateContent: ProtocolAdapter = {
  async send(call, endpoint, signal) {
    const { body, warnings } = toGenerateContentRequest(call);
    const answer = await postGenerateContent(generateContentUrl(endpoint.baseUrl, call.entry.upstreamModel), body, endpoint.apiKey, signal);
    return fromGenerateContentResponse(answer, warnings);
  },
};
