import type { StructuredOutput } from '../contract/structured-output.js';

/** One entry of `results` (spec 2.11), plus what the contract leaves open: the failure and the warnings. */
export interface ModelResult {
  modelId: string;
  /** `cancelled`: stopped because its event-stream caller disconnected; no output, charged what it used. */
  status: 'completed' | 'failed' | 'cancelled';
  output: string;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  /** USD; null when the vendor's usage was missing or inconsistent (spec 3 rule 3). */
  providerCost: number | null;
  /** USD, only where providerCost is null: what the call was charged instead, estimated from its text (docs/credits.md). */
  estimatedCost?: number;
  /**
   * Subsets of tokensIn / tokensOut as the vendor reported them (absent when usage was missing);
   * no reasoningTokensOut where the vendor counts thinking inside the output, never apart.
   */
  usage?: { cachedTokensIn: number; cacheWriteTokensIn: number; reasoningTokensOut?: number };
  /** With `response_schema`: whether the output conforms, with the parsed value when it does. */
  structuredOutput?: StructuredOutput;
  error?: { code: string; message: string; upstreamStatus?: number };
  warnings?: string[];
}

/** Error codes of calls that failed on the vendor's side of the gateway: its service, or the gateway's account with it. */
const VENDOR_SIDE_CODES: ReadonlySet<string> = new Set([
  'upstream_rate_limited',
  'upstream_overloaded',
  'upstream_unreachable',
  'upstream_malformed_response',
  'timeout',
  'provider_not_configured',
  'internal_error',
]);

/**
 * Whether a failed call failed for a reason its request did not give: the vendor down,
 * overloaded or limiting the gateway, answering nonsense or too late, refusing or missing the
 * gateway's key, or the gateway's own fault. Not a vendor's 4xx about the input (an image too
 * large, a context overrun), a safety block, a cancelled call or a model without attachments:
 * those are the caller's, and page no operator.
 */
export function failedOnVendorSide(error: { code: string; upstreamStatus?: number } | undefined): boolean {
  if (!error) return false;
  if (VENDOR_SIDE_CODES.has(error.code)) return true;
  const status = error.upstreamStatus;
  return error.code === 'upstream_error' && status !== undefined && (status >= 500 || status === 401 || status === 402 || status === 403);
}
