import type { ModelEntry } from '../catalog/types.js';
import type { Attachment, HistoryTurn, ModelTuning, SystemBlock } from '../contract/types.js';
import type { PromptPiece } from './shared-text.js';

/** One model call, in the gateway's words; each protocol adapter maps it to its vendor's body. */
export interface ModelCall {
  entry: ModelEntry;
  system: SystemBlock[];
  history: HistoryTurn[];
  prompt: string;
  /**
   * The prompt in parts, where large parts of it are shared with other calls (a judge call's
   * answers and material): its body holds their JSON bytes once for all (shared-text.ts).
   * Joined, the parts are `prompt`.
   */
  promptPieces?: readonly PromptPiece[];
  attachments: Attachment[];
  temperature?: number;
  topP?: number;
  /** Effective output limit: the request's maxTokens (clamped to the model's maximum) or the catalog allowance. */
  maxTokens: number;
  /** maxTokens is the catalog's default, the request having given none: said where the output is cut there. */
  maxTokensDefault?: boolean;
  tuning: ModelTuning;
  responseSchema?: Record<string, unknown>;
  /**
   * USD the request's estimate held for this call, where its own bound holds more (a judge
   * call: the bound of a call of its frame and the allowances of the two answers it shows,
   * which planJudges reserves): an estimate of its cost from the text charges no more than this
   * (chargeCall), so that no estimate takes more than its share of the reservation, whatever
   * counts it takes from the vendor. A vendor's usage block, believed, is not bound by it.
   */
  heldUsd?: number;
  /**
   * The account the call is made for, sent to the vendors that take an identifier of the end
   * user for their abuse detection (OpenAI's `safety_identifier`, Anthropic's
   * `metadata.user_id`, the chat completions' `user` where a dialect takes it: xAI, Groq,
   * Cerebras): one tenant's abuse is then traced to its account, not held against
   * the operator's whole vendor organisation. An account ID is the gateway's own opaque
   * `acct_` + ULID, no person's name or address.
   */
  endUser?: string;
}

export interface Endpoint {
  /** Vendor base URL including its version segment, e.g. https://api.openai.com/v1. */
  baseUrl: string;
  apiKey?: string;
  /** AWS region, for Bedrock. */
  region?: string;
  /** True when the built-in provider simulator answers instead of the vendor. */
  simulated: boolean;
}

/**
 * Token classes as the vendor reported them. `inputTokens` counts every input token,
 * cached reads and cache writes included; `outputTokens` counts every output token,
 * reasoning included. The other classes are subsets, priced differently.
 */
export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /**
   * The reasoning (thinking) tokens inside outputTokens, where the vendor's answer reports them
   * apart; absent where it counts them inside the output without a word (Anthropic, Bedrock, a
   * chat answer without `completion_tokens_details.reasoning_tokens`, as Cerebras and Mistral
   * answer): a 0 there would say the model did not think.
   */
  reasoningTokens?: number;
  /** Search queries the vendor ran and bills apart from the tokens (Gemini 3's search grounding), where it reported any. */
  searchQueries?: number;
}

/**
 * What a vendor showed of a call's tokens besides a usage block, for the estimate of a call
 * whose usage is missing or was never sent (a stream stopped before it): what its text alone
 * would leave unpaid (pricing/charge.ts).
 */
export interface UsageHints {
  /** Input tokens the vendor reported before its stream stopped (Anthropic's `message_start`), all classes. */
  inputTokens?: number;
  /**
   * Of `inputTokens`, the cache reads and cache writes the vendor reported with it, where it
   * reported every class well-formed: the estimate prices each class at its own rate, if the
   * usage they make (with the output counted from the text) passes implausibleUsage.
   */
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  /** Output tokens of text the vendor streamed that is not output (reasoning, thinking), counted as textTokens counts text. */
  unseenOutputTokens?: number;
  /** The answer ended at the output limit the call was sent with (its finish reason says so): the vendor billed that limit, thinking and all. */
  outputLimitReached?: boolean;
  /**
   * Output tokens, thinking included, the vendor had counted by a point its answer went on
   * past (Gemini's running count, parts streamed after it): billed at least, whatever the
   * text's estimate says.
   */
  outputTokensAtLeast?: number;
  /**
   * The vendor's own count of the reasoning is in unseenOutputTokens or outputTokensAtLeast
   * (Gemini's thoughtsTokenCount, in a usage not believed or a running count): the estimate
   * charges it, so no warning says that reasoning the vendor billed unseen was left out.
   */
  reasoningCounted?: true;
  /** Search queries the vendor listed as run (Gemini's search grounding), which it bills whatever became of the usage. */
  searchQueries?: number;
}

export interface ModelReply {
  output: string;
  /** Undefined when the vendor sent no usable usage block (cost is then unavailable, spec 3 rule 3: the charge's warning says so). */
  usage?: Usage;
  /** Why `usage` is undefined, where the adapter can say more than that none usable came: the charge's warning gives it. */
  usageMissing?: string;
  hints?: UsageHints;
  finishReason?: string;
  /**
   * The vendor stopped at the call's maxTokens: the fan-out words its warning, knowing the
   * limit and whether the request or the catalog's default set it (run-models).
   */
  cutAtMaxTokens?: boolean;
  /**
   * The vendor stopped the output before its end for another reason than maxTokens (its
   * context window, its resources, a filter that withheld the rest): the text is what came,
   * a warning says why. Only a whole answer holds a judge's verdict (PlannedCall.cutShortFails).
   */
  cutShort?: true;
  warnings: string[];
}

/** One vendor request, built once (body mapped and serialised): each `send` is one attempt of it. */
export interface PreparedCall {
  /** The warnings of mapping the call, which its reply's `warnings` start with: for a call stopped before its reply (absent: none known then, as for a call prepared while its adapter loads). */
  readonly warnings?: readonly string[];
  /**
   * One attempt. Resolves with the reply (for a streamed call: output = the concatenated
   * text, usage from the stream's usage events, undefined when they never came). Failures
   * are UpstreamErrors; a streamed call's error event in the middle of the stream too, and a
   * failure after its stream began (an abort above all) carries `details.partial`: the text
   * streamed so far and the usage if the vendor had sent it.
   */
  send(signal: AbortSignal): Promise<ModelReply>;
}

export interface ProtocolAdapter {
  /**
   * The vendor request for `call`, built at once so that sending it later costs only the
   * send: the fan-out prepares every call while the reserve is in flight and sends them
   * once it holds. With `onDelta`, the call is streamed in the vendor's streaming protocol
   * and `onDelta` receives the answer's text as it comes (never thinking / reasoning text).
   */
  prepare(call: ModelCall, endpoint: Endpoint, onDelta?: (text: string) => void): PreparedCall;
  /**
   * While the adapter's own code is still loading (a process's first call), the load: a
   * caller that awaits it before `prepare` prepares at once, when it chooses (the fan-out
   * prepares in turns of the event loop), rather than all calls together once it has loaded.
   */
  loading?(): Promise<unknown> | undefined;
  /**
   * The most output tokens (reasoning included) the vendor may bill for this call, read from
   * the limit this adapter sends and the vendor's documented rule for reasoning beyond it;
   * the model's maximum output where nothing bounds it. The credit estimate reserves it and
   * usage above it is inconsistent (docs/credits.md, per vendor).
   */
  billedOutputBound(call: ModelCall): number;
  /** The output limit this adapter sends for the call: the longest answer text it can get back (what a judge of it may be shown). */
  sentOutputLimit(call: ModelCall): number;
  /**
   * Whether the vendor bills reasoning for the call that it shows neither as text nor, but in
   * its usage, as a count: without usage, the estimate cannot charge it (docs/credits.md).
   */
  hidesReasoning?(call: ModelCall): boolean;
}

/** What the plan reads of an adapter before any call: its output limits, loaded with the gateway (the rest loads with the protocol's first call). */
export type OutputLimits = Pick<ProtocolAdapter, 'billedOutputBound' | 'sentOutputLimit' | 'hidesReasoning'>;
