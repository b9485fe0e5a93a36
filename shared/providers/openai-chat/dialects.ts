import type { ProviderId } from '../../catalog/types.js';

/**
 * How one vendor's chat completions differ from OpenAI's, as data. Every difference the
 * mappers act on is declared here, one entry per vendor, with the vendor page it was read
 * from; the mappers hold no vendor names.
 */
export interface ChatDialect {
  readonly id: 'openai' | 'xai' | 'cerebras' | 'deepseek' | 'mistral' | 'groq';
  /** Body field of the output limit. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Highest temperature the vendor takes; a higher request is sent at this value, with a warning. */
  readonly maxTemperature?: number;
  /** Why the vendor ignores temperature and top_p on every model; both are then left out, with a warning. */
  readonly samplingIgnored?: string;
  /** Upstream models (name prefixes) that take `reasoning_effort`, or 'all'; elsewhere it is left out, with a warning. */
  readonly reasoningEffortModels: 'all' | readonly string[];
  /** An image part's `image_url`: `{url}` (OpenAI) or the bare data URL (Mistral). */
  readonly imageUrl: 'object' | 'string';
  /** How a PDF travels; undefined when the vendor's chat completions take none. */
  readonly pdf?: 'file' | 'document_url';
  /** Whether `completion_tokens` counts the reasoning tokens (OpenAI) or they come on top of it (xAI). */
  readonly reasoningTokens: 'in-completion' | 'beside-completion';
  /**
   * With reasoning beside completion_tokens, the upstream models (name prefixes) that reason:
   * the output limit does not bound their reasoning, so a call may bill up to the model's
   * maximum output. `reasoningEffort: 'none'` turns it off where the model takes it.
   */
  readonly unboundedReasoningModels?: readonly string[];
  /** Statuses besides 429 and 5xx that mean "no capacity now, try again" (Groq flex tier 498). */
  readonly capacityStatuses: readonly number[];
  /** Set when the vendor refuses two consecutive turns of one role: they are then sent as one message. */
  readonly alternatingTurns?: true;
  /**
   * Set when a streamed answer carries usage only if asked (`stream_options: {include_usage: true}`);
   * unset when the vendor sends it in the last chunk anyway and refuses the field (Mistral).
   */
  readonly streamUsageOption?: true;
  /**
   * Set when the vendor takes the end user's identifier for its abuse detection in chat
   * completions' `user` field (ModelCall.endUser); unset where it documents none, or refuses
   * fields it does not know (Mistral).
   */
  readonly endUserField?: 'user';
  /**
   * Set when a streamed call cannot carry a json_schema `response_format` (Groq): such a call is
   * then sent whole even to a streaming caller, whose one delta is its text.
   */
  readonly wholeSchemaCalls?: true;
  /**
   * Set when the vendor answers a schema call whose answer it generated and then refused as not
   * fitting the schema with a 400 `json_validate_failed` carrying that answer as
   * `failed_generation` (Groq's best effort): the answer, not a failure with nothing.
   */
  readonly refusedGenerations?: true;
}

/** OpenAI itself: the shape the others are compared with, and the fallback for providers served through the simulator. */
const OPENAI: ChatDialect = {
  id: 'openai',
  maxTokensField: 'max_completion_tokens',
  reasoningEffortModels: 'all',
  imageUrl: 'object',
  pdf: 'file',
  reasoningTokens: 'in-completion',
  capacityStatuses: [],
  streamUsageOption: true,
};

/**
 * docs.x.ai: `max_completion_tokens` (max_tokens deprecated); images as image_url (jpg/png); no
 * file parts in chat completions. reasoning_effort only on grok-4.3 (none/low/medium/high);
 * grok-4.20-0309-* answer 400 "does not support parameter reasoningEffort".
 * Reasoning tokens are reported in completion_tokens_details.reasoning_tokens but not counted in
 * completion_tokens (total_tokens = prompt + completion + reasoning); they are billed as output.
 */
const XAI: ChatDialect = {
  id: 'xai',
  maxTokensField: 'max_completion_tokens',
  reasoningEffortModels: ['grok-4.3'],
  imageUrl: 'object',
  reasoningTokens: 'beside-completion',
  unboundedReasoningModels: ['grok-4.20-0309-reasoning', 'grok-4.3'],
  capacityStatuses: [],
  streamUsageOption: true,
  endUserField: 'user',
};

/**
 * inference-docs.cerebras.ai: `max_completion_tokens`; temperature 0 to 1.5; reasoning_effort
 * low/medium/high on gpt-oss-120b; reasoning text in `message.reasoning`, its tokens counted in
 * completion_tokens (no reasoning_tokens field is documented).
 */
const CEREBRAS: ChatDialect = {
  id: 'cerebras',
  maxTokensField: 'max_completion_tokens',
  maxTemperature: 1.5,
  reasoningEffortModels: ['gpt-oss'],
  imageUrl: 'object',
  reasoningTokens: 'in-completion',
  capacityStatuses: [],
  streamUsageOption: true,
  endUserField: 'user',
};

/**
 * api-docs.deepseek.com: `max_tokens` (chain of thought included); V4 models think by default and
 * then ignore temperature and top_p without an error; `reasoning_content` beside `content`; usage
 * reports prompt_cache_hit_tokens + prompt_cache_miss_tokens = prompt_tokens, reasoning inside
 * completion_tokens. 503 is "Server Overloaded". In thinking mode it answers 400 to successive
 * user or assistant messages ("You should interleave the user/assistant messages").
 */
const DEEPSEEK: ChatDialect = {
  id: 'deepseek',
  maxTokensField: 'max_tokens',
  samplingIgnored: 'DeepSeek ignores it in thinking mode, which its V4 models use by default',
  reasoningEffortModels: 'all',
  imageUrl: 'object',
  reasoningTokens: 'in-completion',
  capacityStatuses: [],
  alternatingTurns: true,
  streamUsageOption: true,
};

/**
 * docs.mistral.ai: `max_tokens`; any unknown field (max_completion_tokens, reasoning_effort) is a
 * 422 "Extra inputs are not permitted", and so is a temperature above 1.5 ("Input should be less
 * than or equal to 1.5", though the reference says 0 to 2); image_url is the bare URL string; PDFs as document_url;
 * cached prompt tokens in prompt_tokens_details.cached_tokens. A streamed answer carries usage in
 * its last chunk without being asked (stream_options would be an extra input).
 */
const MISTRAL: ChatDialect = {
  id: 'mistral',
  maxTokensField: 'max_tokens',
  maxTemperature: 1.5,
  reasoningEffortModels: [],
  imageUrl: 'string',
  pdf: 'document_url',
  reasoningTokens: 'in-completion',
  capacityStatuses: [],
};

/**
 * console.groq.com: `max_completion_tokens` (max_tokens deprecated); strict json_schema on
 * gpt-oss, which does not stream ("Streaming and tool use are not currently supported with
 * Structured Outputs", console.groq.com/docs/structured-outputs); gpt-oss returns
 * `message.reasoning`; 498 is flex-tier capacity exceeded ("retry with backoff"). A streamed
 * answer puts usage in the last chunk's `x_groq.usage` (and in `usage` with stream_options).
 */
const GROQ: ChatDialect = {
  id: 'groq',
  maxTokensField: 'max_completion_tokens',
  reasoningEffortModels: ['openai/gpt-oss'],
  imageUrl: 'object',
  reasoningTokens: 'in-completion',
  capacityStatuses: [498],
  streamUsageOption: true,
  endUserField: 'user',
  wholeSchemaCalls: true,
  refusedGenerations: true,
};

const BY_PROVIDER: Readonly<Record<ProviderId, ChatDialect>> = {
  openai: OPENAI,
  anthropic: OPENAI,
  google: OPENAI,
  bedrock: OPENAI,
  xai: XAI,
  cerebras: CEREBRAS,
  deepseek: DEEPSEEK,
  mistral: MISTRAL,
  groq: GROQ,
};

/** The dialect a provider speaks; providers with their own protocol reach this adapter only through the simulator. */
export function dialectFor(provider: ProviderId): ChatDialect {
  return BY_PROVIDER[provider];
}

/** Whether `model` is listed (by prefix) in a dialect's model list. */
export function modelListed(list: 'all' | readonly string[], model: string): boolean {
  return list === 'all' || list.some((prefix) => model.startsWith(prefix));
}
