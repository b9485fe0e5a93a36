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
