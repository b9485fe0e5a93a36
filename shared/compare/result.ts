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
   * no reasoningTokensOut where the vendor's answer counts thinking inside the output without
   * reporting it apart.
   */
  usage?: { cachedTokensIn: number; cacheWriteTokensIn: number; reasoningTokensOut?: number };
  /** With `response_schema`: whether the output conforms, with the parsed value when it does. */
  structuredOutput?: StructuredOutput;
  error?: { code: string; message: string; upstreamStatus?: number };
  warnings?: string[];
}

/** Error codes of calls that failed on the vendor's side of the gateway, whatever their status. */
const VENDOR_SIDE_CODES: ReadonlySet<string> = new Set([
  'upstream_rate_limited',
  'upstream_overloaded',
  'upstream_unreachable',
  'upstream_malformed_response',
  'timeout',
  'internal_error',
]);

/** Vendor statuses of an `upstream_error` that are the vendor's failing, not the request's: its credit spent (402), a model that timed out or failed (408, 424, Bedrock's), any 5xx. */
const vendorSideStatus = (status: number) => status >= 500 || status === 402 || status === 408 || status === 424;

/**
 * Whether a failed call failed for a reason its request did not give, which the VendorFailures
 * alarm counts: the vendor down, overloaded or limiting the gateway, answering nonsense or too
 * late, failing inside a stream it had begun (its status the stream's 200), the gateway's
 * credit with it spent, or the gateway's own fault. Not a vendor's 4xx about the input (an
 * image too large, a context overrun), a safety block, a cancelled call or a model without
 * attachments, which are the caller's; nor a refused key (401, 403: the LoggedErrors alarm has
 * those, but for a 403 a caller's cachedContent may cause) or a vendor with no key configured
 * (a warning: a caller could otherwise page the operator for free by naming its models).
 */
export function failedOnVendorSide(error: { code: string; upstreamStatus?: number } | undefined): boolean {
  if (!error) return false;
  if (VENDOR_SIDE_CODES.has(error.code)) return true;
  if (error.code !== 'upstream_error') return false;
  const status = error.upstreamStatus;
  return status === undefined || status === 200 || vendorSideStatus(status);
}

/**
 * Whether a failed call's vendor refused the gateway's own key: a 401 or 403, or Google's
 * 400 for a key it does not take (`API_KEY_INVALID`, "API key not valid", or expired), which
 * it answers as a bad argument. Every call to that vendor fails until the operator acts.
 */
export function refusedGatewayKey(error: { code: string; message: string; upstreamStatus?: number } | undefined): boolean {
  if (error?.code !== 'upstream_error') return false;
  const status = error.upstreamStatus;
  return status === 401 || status === 403 || (status === 400 && /\bAPI[ _]key (not valid|expired)|API_KEY_(INVALID|EXPIRED)/i.test(error.message));
}

/**
 * Whether a failed call's vendor does not serve the model the catalog calls it by: a 404, or
 * Groq's 400 "has been decommissioned" (a model retired or renamed before the catalog was).
 * Every call to that model fails until the operator acts.
 */
export function unservedCatalogModel(error: { code: string; message: string; upstreamStatus?: number } | undefined): boolean {
  if (error?.code !== 'upstream_error') return false;
  return error.upstreamStatus === 404 || (error.upstreamStatus === 400 && /has been decommissioned/i.test(error.message));
}
