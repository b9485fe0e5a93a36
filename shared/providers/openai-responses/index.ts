import { UpstreamError } from '../errors.js';
import type { ProtocolAdapter } from '../types.js';
import { responsesLimits } from './limits.js';
import { toResponsesRequest } from './request.js';
import { fromResponsesResponse } from './response.js';
import { preparedHttpCall } from '../prepared-http.js';
import { ResponsesStream } from './stream.js';

/**
 * OpenAI Responses API (`fam_c` and the `o*` models): one `POST {baseUrl}/responses` per call,
 * always with `store: false` so OpenAI keeps no response object for later retrieval.
 * (Abuse-monitoring retention at OpenAI is an organisation setting: Zero Data Retention
 * needs OpenAI's approval for the API organisation, no request field turns it on.)
 */
export const openaiResponses: ProtocolAdapter = {
  prepare(call, endpoint, onDelta) {
    const { body, warnings } = toResponsesRequest(call);
    return preparedHttpCall(
      {
        call,
        outputTokens: responsesLimits.billedOutputBound(call),
        url: `${endpoint.baseUrl}/responses`,
        body,
        headers: endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {},
        warnings,
        refine: (error) => (error instanceof UpstreamError ? withoutKeys(error) : error),
        fromAnswer: fromResponsesResponse,
        stream: { body: { ...body, stream: true }, reader: (onText) => new ResponsesStream(onText) },
      },
      onDelta,
    );
  },
  ...responsesLimits,
};

/** OpenAI's 401 message quotes part of the key ("Incorrect API key provided: sk-abc***xyz"); keep none of it. */
const KEY_PATTERN = /\bsk-[A-Za-z0-9_*.-]+/g;

export function withoutKeys(error: UpstreamError): UpstreamError {
  const message = error.message.replace(KEY_PATTERN, 'sk-[redacted]');
  return message === error.message ? error : new UpstreamError(error.code, message, error.details);
}
