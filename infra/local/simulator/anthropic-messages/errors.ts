/** The error bodies of the simulated Messages API: `{"type":"error","error":{"type","message"},"request_id"}`. */
import type { Reply } from '../types.js';

let requestSeq = 0;

function requestId(): string {
  return `req_011CSim${(++requestSeq).toString(36).padStart(8, '0')}`;
}

export function anthropicHeaders(): Record<string, string> {
  return {
    'content-type': 'application/json',
    'request-id': requestId(),
    'anthropic-ratelimit-requests-limit': '4000',
    'anthropic-ratelimit-requests-remaining': '3999',
    'anthropic-ratelimit-requests-reset': new Date(Date.now() + 60_000).toISOString(),
  };
}

/** An error reply in Anthropic's shape `{"type":"error","error":{"type","message"},"request_id"}`. */
export function simulatedAnthropicError(status: number, type: string, message: string): Reply {
  const headers = anthropicHeaders();
  return { status, headers, body: JSON.stringify({ type: 'error', error: { type, message }, request_id: headers['request-id'] }) };
}
