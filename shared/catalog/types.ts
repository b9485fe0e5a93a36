/** The providers the gateway routes to. Each has `<P>_API_KEY` / `<P>_BASE_URL` (Bedrock: AWS chain). */
export const PROVIDERS = ['openai', 'anthropic', 'google', 'xai', 'cerebras', 'deepseek', 'mistral', 'groq', 'bedrock'] as const;
export type ProviderId = (typeof PROVIDERS)[number];

/** Each provider's name as its vendor writes it, for messages. */
export const PROVIDER_NAMES: Readonly<Record<ProviderId, string>> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  google: 'Google',
  xai: 'xAI',
  cerebras: 'Cerebras',
  deepseek: 'DeepSeek',
  mistral: 'Mistral',
  groq: 'Groq',
  bedrock: 'Amazon Bedrock',
};

/** One folder per wire protocol under shared/providers/. */
export type WireProtocol = 'openai-responses' | 'openai-chat' | 'anthropic-messages' | 'gemini-generate-content' | 'bedrock-converse';

export const ATTACHMENT_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'] as const;
export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

export const IMAGE_TYPES: readonly AttachmentType[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
export const IMAGES_AND_PDF: readonly AttachmentType[] = [...IMAGE_TYPES, 'application/pdf'];

/** USD per million tokens, as the vendor lists them on `takenOn`. */
export interface Prices {
  input: number;
  /** Price of an input token the vendor reported as read from cache; null when the model has no cache pricing. */
  cachedInput: number | null;
  /** Price of an input token the vendor reported as written to cache; null when writes cost the same as input. */
  cacheWrite: number | null;
  output: number;
  /**
   * Where the vendor prices a long request higher: a request whose input (every input
   * token it reported, cached ones included) is above `aboveInputTokens` is priced at
   * these rates, all its tokens.
   */
  longContext?: LongContextPrices;
  /** Where the vendor prices by the time of day: these rates are its peak rates, and a call started outside its peak hours costs `factor` times them. */
  offPeak?: OffPeakPricing;
  /**
   * USD a search query costs where the vendor bills its search grounding per query run
   * (Gemini 3: each unique, non-empty query the answer's grounding lists), on top of the tokens.
   */
  searchQueryUsd?: number;
  /** ISO date the prices were read from the vendor's price page. */
  takenOn: string;
}

export interface OffPeakPricing {
  /** Peak hours, UTC: [start, end) in whole hours, on `peakDaysUtc`. */
  peakHoursUtc: readonly (readonly [number, number])[];
  /** Days with peak hours, UTC, 0 = Sunday; every hour of the other days is off-peak. */
  peakDaysUtc: readonly number[];
  factor: number;
}

export interface LongContextPrices {
  aboveInputTokens: number;
  input: number;
  cachedInput: number | null;
  cacheWrite: number | null;
  output: number;
}

/** Which `model_tuning` parameters a model accepts (spec 2.6), with their ranges. */
export interface TuningRules {
  /** 0 always disables; otherwise min..max inclusive. */
  thinkingBudget?: { min: number; max: number };
  reasoningEffort?: readonly string[];
  webSearch?: boolean;
  cachedContent?: boolean;
}

export interface CacheRules {
  mode: 'automatic' | 'explicit' | 'none';
  /** Shortest prefix, in tokens, the vendor caches. */
  minTokens?: number;
  /** Set where each breakpoint needs `minTokens` of its own after the one before it (Bedrock), not only its whole prefix (Anthropic). */
  minTokensEach?: true;
}

export interface Capabilities {
  /** Media types the model accepts as attachments; empty for text-only models. */
  attachments: readonly AttachmentType[];
  /** The most PDFs one call may carry, where its vendor takes fewer than a request may attach. */
  mostPdfs?: number;
  /** How `response_schema` is enforced (spec 1.5). */
  structuredOutput: 'native' | 'tool' | 'instruction';
  tuning: TuningRules;
  cache: CacheRules;
}

/**
 * A vendor's shutdown of a model the contract lists. From the start (00:00 UTC) of `on`,
 * the day the vendor's deprecations page gives, the catalog entry `successor` answers to the
 * retired ID: its vendor model, protocol, capabilities, limits and prices, with a warning on
 * every result and a note in the listing. The contract's IDs keep working after their vendor
 * model is gone, and nobody is charged the retired model's prices for another's answer.
 */
export interface Retirement {
  on: string;
  /**
   * The catalog ID that answers from `on`: the vendor's recommended replacement where the
   * catalog has it, else the catalog's newest model of that vendor in the same size class.
   */
  successor: string;
}

export interface ModelEntry {
  /** Canonical ID exactly as the contract spells it, e.g. `fam_a-opus-4-6`, `o3`. */
  id: string;
  /** Family token of the contract, e.g. `fam_a`; the `o*` models belong to `fam_c`. */
  family: string;
  /**
   * An open-weight model served by a host whose family token names the host, not the
   * model's maker: who made the weights (a family token where the maker has one in the
   * catalog) and the weights' name, the same on every host. Self-preference reads it.
   */
  openWeights?: { maker: string; weights: string };
  provider: ProviderId;
  /** Model name the vendor's API expects. */
  upstreamModel: string;
  /** Set when the vendor has no model of this ID's name: why another one serves it. Every result of the model carries it as a warning. */
  servedBy?: string;
  /** Set when the vendor shuts `upstreamModel` down (or has): another catalog model answers to this ID from that day (shared/catalog/index.ts). */
  retirement?: Retirement;
  /**
   * Set when the vendor itself answers `upstreamModel` with another model of its own from `on`
   * (00:00 UTC), one the catalog does not list: the name is still sent and priced as the
   * catalog prices it, and from that day every result says which model answered; the listing
   * notes it before then.
   */
  vendorReroute?: { on: string; answeredBy: string };
  protocol: WireProtocol;
  /** Where spec 2.13 lists it; `other` for IDs that appear only in 2.6. */
  tier: 'flagship' | 'fast' | 'legacy' | 'other';
  prices: Prices;
  capabilities: Capabilities;
  /** Output tokens reserved when the request gives no `maxTokens`. */
  defaultMaxTokens: number;
  /** Largest `maxTokens` the vendor accepts for this model. */
  maxOutputTokens: number;
  contextWindow: number;
  /**
   * The most input tokens one image can count on this model, where its vendor counts more
   * than the default the estimate reserves (shared/pricing/bound.ts, IMAGE_TOKENS).
   */
  imageTokens?: number;
  /**
   * The most input tokens its vendor adds to every call and bills beside what the call sends
   * (a system prompt of the vendor's own): reserved, and believed in a usage block, on top of
   * the call's own input (shared/pricing/bound.ts).
   */
  hiddenInputTokens?: number;
  /** What a caller should know of this model before calling it, where its vendor departs from the contract: listed in its notes (GET /api/v1/models). */
  note?: string;
}
