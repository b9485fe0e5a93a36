/**
 * The error bodies of the simulated chat completions protocol: OpenAI's
 * `{"error":{"message","type","param","code"}}` and each dialect's own (xAI, Cerebras,
 * DeepSeek, Mistral), with the headers OpenAI sends on every answer.
 */
import type { Reply } from '../types.js';

let requestSeq = 0;

/** Headers OpenAI sends with every answer (rate-limit headers included). */
export function openAiHeaders(totalTokens: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-request-id': `req_sim_${(++requestSeq).toString(36)}`,
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-remaining-requests': '9999',
    'x-ratelimit-reset-requests': '6ms',
    'x-ratelimit-limit-tokens': '30000000',
    'x-ratelimit-remaining-tokens': String(Math.max(0, 30000000 - totalTokens)),
    'x-ratelimit-reset-tokens': '0s',
  };
}

/** The request id the next answer's headers will carry (Groq repeats it in `x_groq.id`). */
export function nextRequestId(): string {
  return `req_sim_${(requestSeq + 1).toString(36)}`;
}

/** An error reply in the OpenAI shape `{"error":{"message","type","param","code"}}`. */
export function simulatedOpenAiError(status: number, message: string, type = 'invalid_request_error', param: string | null = null, code: string | null = null): Reply {
  return {
    status,
    headers: openAiHeaders(0),
    body: JSON.stringify({ error: { message, type, param, code } }),
  };
}

/** The error `type` OpenAI uses for a status. */
export function openAiErrorType(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export interface ErrorDetails {
  type?: string;
  param?: string | null;
  code?: string | null;
}

/** A JSON reply of any shape with OpenAI's headers. */
export function jsonReply(status: number, body: unknown): Reply {
  return { status, headers: openAiHeaders(0), body: JSON.stringify(body) };
}

/** A fault-injected error in OpenAI's shape (no param). */
export function openAiFault(status: number, code: string | null = null): Reply {
  return jsonReply(status, { error: { message: `Simulated upstream error ${status}`, type: openAiErrorType(status), code } });
}

/** gRPC status texts xAI puts in `code`. */
const XAI_CODES: Readonly<Record<number, string>> = {
  400: 'Client specified an invalid argument',
  401: 'Request not authenticated',
  403: 'The caller does not have permission to execute the specified operation',
  404: 'Some requested entity was not found',
  429: 'Some resource has been exhausted',
  500: 'Internal error',
  503: 'The service is currently unavailable',
};

export function xaiError(status: number, message: string): Reply {
  return jsonReply(status, { code: XAI_CODES[status] ?? 'Unknown error', error: message });
}

export function cerebrasError(status: number, message: string, d: ErrorDetails = {}): Reply {
  if (status >= 500) {
    return jsonReply(status, { status_code: status, error: { message, type: 'server_error', param: '', code: '', id: '' } });
  }
  return jsonReply(status, { message, type: d.type ?? openAiErrorType(status), param: d.param ?? '', code: d.code ?? '' });
}

export function deepSeekError(status: number, message: string, d: ErrorDetails = {}): Reply {
  return jsonReply(status, { error: { message, type: d.type ?? openAiErrorType(status), param: d.param ?? null, code: d.code ?? openAiErrorType(status) } });
}

export function mistralError(status: number, message: string, d: ErrorDetails = {}): Reply {
  return jsonReply(status, { object: 'error', message, type: d.type ?? openAiErrorType(status), param: d.param ?? null, code: d.code ?? null });
}
