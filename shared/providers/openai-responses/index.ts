import { UpstreamError } from '../errors.js';
import { postJson } from '../http.js';
import type { ProtocolAdapter } from '../types.js';
import { responsesOutputLimit, toResponsesRequest } from './request.js';
import { fromResponsesResponse } from './response.js';
import { postSse } from '../stream-http.js';
import { ResponsesStream } from './stream.js';

/**
 * OpenAI Responses API (`fam_c` and the `o*` models): one `POST {baseUrl}/responses` per call,
 * always with `store: false` so OpenAI keeps no response object for later retrieval.
 * (Abuse-monitoring retention at OpenAI is an organisation setting: Zero Data Retention
 * needs OpenAI's approval for the API organisation, no request field turns it on.)
 */
export const openaiResponses: ProtocolAdapter = {
  async send(call, endpoint, signal, ready) {
    const { body, warnings } = toResponsesRequest(call);
    const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
    let answer: unknown;
    try {
      answer = await postJson(`${endpoint.baseUrl}/responses`, body, headers, signal, { ready });
    } catch (error) {
      throw error instanceof UpstreamError ? withoutKeys(error) : error;
    }
    const reply = fromResponsesResponse(answer);
    return { ...reply, warnings: [...warnings, ...reply.warnings] };
  },
  async stream(call, endpoint, signal, onDelta, ready) {
    const { body, warnings } = toResponsesRequest(call);
    const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
    const reader = new ResponsesStream(onDelta);
    try {
      await postSse(`${endpoint.baseUrl}/responses`, { ...body, stream: true }, headers, signal, {
        ready,
        onEvent: (event) => reader.onEvent(event),
        partial: () => reader.partial(),
      });
    } catch (error) {
      throw error instanceof UpstreamError ? withoutKeys(error) : error;
    }
    const reply = reader.finish();
    return { ...reply, warnings: [...warnings, ...reply.warnings] };
  },
  billedOutputBound: responsesOutputLimit,
  sentOutputLimit: responsesOutputLimit,
};

/** OpenAI's 401 message quotes part of the key ("Incorrect API key provided: sk-abc***xyz"); keep none of it. */
const KEY_PATTERN = /\bsk-[A-Za-z0-9_*.-]+/g;

export function withoutKeys(error: UpstreamError): UpstreamError {
  const message = error.message.replace(KEY_PATTERN, 'sk-[redacted]');
  return message === error.message ? error : new UpstreamError(error.code, message, error.details);
}
