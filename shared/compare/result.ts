/** One entry of `results` (spec 2.11), plus what the contract leaves open: the failure and the warnings. */
export interface ModelResult {
  modelId: string;
  status: 'completed' | 'failed';
  output: string;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  /** USD; null when the vendor's usage was missing or inconsistent (spec 3 rule 3). */
  providerCost: number | null;
  error?: { code: string; message: string; upstreamStatus?: number };
  warnings?: string[];
}
