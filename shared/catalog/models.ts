// Model catalog. Prices are USD per million tokens, read from the vendors' own pricing
// and model pages (platform.claude.com, developers.openai.com, ai.google.dev, docs.x.ai,
// inference-docs.cerebras.ai, api-docs.deepseek.com, mistral.ai, console.groq.com,
// aws.amazon.com/bedrock/pricing). Where a vendor prices long requests higher, `longContext`
// gives the threshold and the rates that then apply to every token of the request.
// `// unverified:` marks values taken from third-party copies, siblings or naming patterns.
import { IMAGES_AND_PDF, IMAGE_TYPES } from './types.js';
import type { AttachmentType, CacheRules, ModelEntry, Prices, TuningRules } from './types.js';

const TAKEN_ON = '2026-11-22';

function usd(input: number, cachedInput: number | null, cacheWrite: number | null, output: number): Prices {
  return { input, cachedInput, cacheWrite, output, takenOn: TAKEN_ON };
}

/**
 * Gemini 3's search grounding: "$14 / 1,000 search queries" past a free monthly allowance
 * (ai.google.dev pricing; the allowance is the operator's, so every query is charged at list
 * price, as every token is).
 */
const GEMINI_3_SEARCH_QUERY_USD = 0.014;

/** `prices`, with Gemini 3's search grounding billed per query. */
function withSearch(prices: Prices): Prices {
  return { ...prices, searchQueryUsd: GEMINI_3_SEARCH_QUERY_USD };
}

/** `prices`, and higher rates for a request whose input is above `aboveInputTokens` (every token of it). */
function longAbove(prices: Prices, aboveInputTokens: number, input: number, cachedInput: number | null, output: number): Prices {
  return { ...prices, longContext: { aboveInputTokens, input, cachedInput, cacheWrite: null, output } };
}

const TEXT_ONLY: readonly AttachmentType[] = [];
/** Gemini takes PNG, JPEG, WebP (and HEIC/HEIF) inline, not GIF. */
const GEMINI_MEDIA: readonly AttachmentType[] = ['image/png', 'image/jpeg', 'image/webp', 'application/pdf'];
/**
 * The system prompt xAI adds to every Grok call and bills as input: published usage blocks of
 * one-line prompts count 686 prompt tokens on grok-4 (679 of them cached) and 163 to 170 on
 * grok-4.1-fast, where the text sent counts a few. Taken at three times the largest seen, so
 * that a short prompt's usage is believed (the input check allows 512 tokens of framing), and
 * reserved with every call.
 */
const XAI_HIDDEN_PROMPT_TOKENS = 2_048;

/** Bedrock Converse's `Message.content`: "You can include up to five documents." */
const NOVA_MOST_DOCUMENTS = 5;

/** xAI accepts jpg/png only. */
const PNG_JPEG: readonly AttachmentType[] = ['image/png', 'image/jpeg'];

/**
 * OpenAI's image counts above the 1,600 tokens the estimate reserves by default (its images
 * and vision guide): gpt-4o-mini counts 2,833 tokens and 5,667 a 512-pixel tile at high
 * detail (what `detail: auto` may pick), 8 tiles at most (2048 x 768 once scaled); the
 * patch-counted models, 1,536 patches of 32 pixels at most, times the model's multiplier.
 */
const GPT_4O_MINI_IMAGE_TOKENS = 2_833 + 8 * 5_667;
/**
 * Opus 4.7 reads images up to 2,576 pixels on the long edge, about 3.75 megapixels (the
 * models before it, 1,568 pixels and about 1.15), at about width x height / 750 tokens
 * (Anthropic's vision guide; one visual token a 28-pixel patch in its newer wording).
 */
const OPUS_4_7_IMAGE_TOKENS = 5_000;
const patchImageTokens = (multiplier: number) => Math.ceil(1_536 * multiplier);

const NO_TUNING: TuningRules = {};
const CLAUDE_THINKING: TuningRules = { thinkingBudget: { min: 1024, max: 32000 } };
const GEMINI_TUNING: TuningRules = { thinkingBudget: { min: 0, max: 24576 }, webSearch: true, cachedContent: true };

/** The listing's note on the Gemini 3 models' thinkingBudget (gemini-generate-content/thinking.ts), which the contract reads as a token budget, 0 turning thinking off. */
const GEMINI_3_THINKING_NOTE =
  "thinkingBudget is sent as the thinking level nearest it (Gemini 3 takes a level, not a token budget), and 0 as the model's lowest level: Gemini 3 cannot turn thinking off (the result says so in a warning)";
const EFFORT_LMH: TuningRules = { reasoningEffort: ['low', 'medium', 'high'] };
const EFFORT_NLMH: TuningRules = { reasoningEffort: ['none', 'low', 'medium', 'high'] };

const OPENAI_CACHE: CacheRules = { mode: 'automatic', minTokens: 1024 };
const DEEPSEEK_CACHE: CacheRules = { mode: 'automatic', minTokens: 64 };
const AUTO_CACHE: CacheRules = { mode: 'automatic' };
const NO_CACHE: CacheRules = { mode: 'none' };
// Cache minimums of fam_a and fam_b are the contract's (spec 2.9): 1,024 (2,048 Haiku-class) and
// 32,768; except where Anthropic caches nothing below a higher one: 4,096 for Opus 4.7, Opus 4.6,
// Opus 4.5 and Haiku 4.5 (Anthropic's prompt-caching guide, as proxies that pass it on quote it). The
// minimum only decides the "caches nothing there" warning and what the catalog lists.
const claudeCache = (minTokens: number): CacheRules => ({ mode: 'explicit', minTokens });
const CLAUDE_CACHE_4096 = claudeCache(4096);
const geminiCache = (minTokens: number): CacheRules => ({ mode: 'explicit', minTokens });
/**
 * Bedrock cachePoint. Bedrock's prompt caching guide: each checkpoint needs the model's minimum of its own ("the
 * first cache checkpoint can be defined after 1,024 tokens and the second after 2,048"); one
 * placed sooner is accepted and caches nothing.
 */
const NOVA_CACHE: CacheRules = { mode: 'explicit', minTokens: 1000, minTokensEach: true };

/**
 * DeepSeek bills by the time of day: the listed rates are the peak ones, from 01:00 to
 * 04:00 and 06:00 to 10:00 UTC, Monday through Friday (09:00-12:00 and 14:00-18:00 Beijing
 * time, the same days); every other hour, weekends included, is off-peak at half of them
 * (api-docs.deepseek.com pricing, since 2026-08-16; weekends off-peak since 2026-08-23).
 * Chinese public holidays, reported off-peak too, are not modelled: priced at peak there.
 */
const DEEPSEEK_OFF_PEAK = {
  peakHoursUtc: [
    [1, 4],
    [6, 10],
  ],
  peakDaysUtc: [1, 2, 3, 4, 5],
  factor: 0.5,
} as const;

/** Mistral bills cached prompt tokens at 10% of input (docs.mistral.ai prompt caching). */
const mistral = (input: number, output: number): Prices => usd(input, Number((input / 10).toFixed(4)), null, output);

export const MODELS: readonly ModelEntry[] = [
  // ───────────── OpenAI (Responses API) ─────────────
  {
    id: 'fam_c-5.4',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5.4',
    protocol: 'openai-responses',
    tier: 'flagship',
    // ">272K input tokens are priced at 2x input and 1.5x output for the full session" (gpt-5.4 model page)
    prices: longAbove(usd(2.5, 0.25, null, 15), 272_000, 5, 0.5, 22.5),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 1_050_000,
  },
  {
    id: 'fam_c-5.4-pro',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5.4-pro',
    protocol: 'openai-responses',
    tier: 'flagship',
    note: 'reasoningEffort low is accepted, as the contract lists it, and sent as medium, the least OpenAI takes for gpt-5.4-pro (the result says so in a warning)',
    prices: longAbove(usd(30, null, null, 180), 272_000, 60, null, 270), // no cached-input price listed; 2x input and 1.5x output above 272K, as gpt-5.4 (its model page)
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 1_050_000,
  },
  {
    id: 'fam_c-5',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5',
    protocol: 'openai-responses',
    tier: 'flagship',
    prices: usd(1.25, 0.125, null, 10), // deprecated, shutdown 2026-12-11
    retirement: { on: '2026-12-11', successor: 'fam_c-5.4' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 400_000,
  },
  {
    id: 'fam_c-4.1',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-4.1',
    protocol: 'openai-responses',
    tier: 'flagship',
    prices: usd(2, 0.5, null, 8), // deprecated, shutdown 2027-01-14
    retirement: { on: '2027-01-14', successor: 'fam_c-5.4' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: NO_TUNING, cache: OPENAI_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 32_768,
    contextWindow: 1_047_576,
  },
  {
    id: 'fam_c-4o',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-4o',
    protocol: 'openai-responses',
    tier: 'flagship',
    prices: usd(2.5, 1.25, null, 10), // deprecated, shutdown 2027-01-14
    retirement: { on: '2027-01-14', successor: 'fam_c-5.4' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: NO_TUNING, cache: OPENAI_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 16_384,
    contextWindow: 128_000,
  },
  {
    id: 'o3-mini',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'o3-mini',
    protocol: 'openai-responses',
    tier: 'flagship',
    prices: usd(1.1, 0.55, null, 4.4), // shut down 2026-10-23 (OpenAI's deprecations page)
    retirement: { on: '2026-10-23', successor: 'fam_c-5.4-mini' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 100_000,
    contextWindow: 200_000,
  },
  {
    id: 'fam_c-5.4-mini',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5.4-mini',
    protocol: 'openai-responses',
    tier: 'fast',
    prices: usd(0.75, 0.075, null, 4.5),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 400_000,
    imageTokens: patchImageTokens(1.62), // unverified: gpt-5-mini's multiplier,
  },
  {
    id: 'fam_c-5.4-nano',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5.4-nano',
    protocol: 'openai-responses',
    tier: 'fast',
    prices: usd(0.2, 0.02, null, 1.25),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 400_000,
    imageTokens: patchImageTokens(2.46), // unverified: gpt-5-nano's multiplier,
  },
  {
    id: 'fam_c-5-mini',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5-mini',
    protocol: 'openai-responses',
    tier: 'fast',
    prices: usd(0.25, 0.025, null, 2), // deprecated, shutdown 2026-12-11
    retirement: { on: '2026-12-11', successor: 'fam_c-5.4-mini' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 400_000,
    imageTokens: patchImageTokens(1.62),
  },
  {
    id: 'fam_c-5-nano',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-5-nano',
    protocol: 'openai-responses',
    tier: 'fast',
    prices: usd(0.05, 0.005, null, 0.4), // deprecated, shutdown 2026-12-11
    retirement: { on: '2026-12-11', successor: 'fam_c-5.4-nano' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 128_000,
    contextWindow: 400_000,
    imageTokens: patchImageTokens(2.46),
  },
  {
    id: 'fam_c-4o-mini',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-4o-mini',
    protocol: 'openai-responses',
    tier: 'legacy',
    prices: usd(0.15, 0.075, null, 0.6), // deprecated, shutdown 2027-01-14
    retirement: { on: '2027-01-14', successor: 'fam_c-5.4-mini' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: NO_TUNING, cache: OPENAI_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 16_384,
    contextWindow: 128_000,
    imageTokens: GPT_4O_MINI_IMAGE_TOKENS,
  },
  {
    id: 'fam_c-4-turbo',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'gpt-4-turbo',
    protocol: 'openai-responses',
    tier: 'legacy',
    prices: usd(10, null, null, 30), // no cached price listed; shut down 2026-10-23 (OpenAI's deprecations page)
    retirement: { on: '2026-10-23', successor: 'fam_c-5.4' },
    // gpt-4-turbo predates json_schema Structured Outputs (JSON mode only).
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: OPENAI_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 4096,
    contextWindow: 128_000,
  },
  {
    id: 'o3',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'o3',
    protocol: 'openai-responses',
    tier: 'other',
    prices: usd(2, 0.5, null, 8), // deprecated, shutdown 2026-12-11
    retirement: { on: '2026-12-11', successor: 'fam_c-5.4' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 100_000,
    contextWindow: 200_000,
  },
  {
    id: 'o4-mini',
    family: 'fam_c',
    provider: 'openai',
    upstreamModel: 'o4-mini',
    protocol: 'openai-responses',
    tier: 'other',
    prices: usd(1.1, 0.275, null, 4.4), // shut down 2026-10-23 (OpenAI's deprecations page)
    retirement: { on: '2026-10-23', successor: 'fam_c-5.4-mini' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'native', tuning: EFFORT_LMH, cache: OPENAI_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 100_000,
    contextWindow: 200_000,
    imageTokens: patchImageTokens(1.72),
  },

  // ───────────── Anthropic (Messages API); cacheWrite = 5-minute write ─────────────
  {
    id: 'fam_a-opus-4-7',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-4-7',
    protocol: 'anthropic-messages',
    tier: 'other',
    prices: usd(5, 0.5, 6.25, 25),
    note: 'thinkingBudget is sent as output_config.effort (up to 1,024 low, up to 8,192 medium, up to 16,384 high, more xhigh), still added to max_tokens: Opus 4.7 takes adaptive thinking only, with an effort in place of a budget (the result says so in a warning)',
    // Opus 4.7 accepts only adaptive thinking; budget_tokens returns 400 (see report).
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: CLAUDE_THINKING, cache: CLAUDE_CACHE_4096 },
    defaultMaxTokens: 4096,
    maxOutputTokens: 128_000,
    contextWindow: 1_000_000,
    imageTokens: OPUS_4_7_IMAGE_TOKENS,
  },
  {
    id: 'fam_a-opus-4-6',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-4-6',
    protocol: 'anthropic-messages',
    tier: 'flagship',
    prices: usd(5, 0.5, 6.25, 25),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: CLAUDE_THINKING, cache: CLAUDE_CACHE_4096 },
    defaultMaxTokens: 4096,
    maxOutputTokens: 128_000,
    contextWindow: 1_000_000,
  },
  {
    id: 'fam_a-sonnet-4-6',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-sonnet-4-6',
    protocol: 'anthropic-messages',
    tier: 'flagship',
    prices: usd(3, 0.3, 3.75, 15),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: CLAUDE_THINKING, cache: claudeCache(1024) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 128_000, // its model page: "Max output: 128K tokens"
    contextWindow: 1_000_000,
  },
  {
    id: 'fam_a-haiku-4-5',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-haiku-4-5',
    protocol: 'anthropic-messages',
    tier: 'fast',
    prices: usd(1, 0.1, 1.25, 5),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: CLAUDE_CACHE_4096 },
    defaultMaxTokens: 4096,
    maxOutputTokens: 64_000,
    contextWindow: 200_000,
  },
  {
    id: 'fam_a-sonnet-4.5',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5',
    protocol: 'anthropic-messages',
    tier: 'legacy',
    prices: usd(3, 0.3, 3.75, 15), // retiring on Anthropic API 2026-11-30
    retirement: { on: '2026-11-30', successor: 'fam_a-sonnet-4-6' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: claudeCache(1024) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 64_000,
    contextWindow: 200_000,
  },
  {
    id: 'fam_a-opus-4.5',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-4-5',
    protocol: 'anthropic-messages',
    tier: 'legacy',
    prices: usd(5, 0.5, 6.25, 25),
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: CLAUDE_CACHE_4096 },
    defaultMaxTokens: 4096,
    maxOutputTokens: 64_000,
    contextWindow: 200_000,
  },
  {
    id: 'fam_a-opus-4.1',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-4-1-20250805',
    protocol: 'anthropic-messages',
    tier: 'legacy',
    prices: usd(15, 1.5, 18.75, 75), // pricing page: retired except on Bedrock and Google Cloud (on the Claude API since 2026-08-05)
    retirement: { on: '2026-08-05', successor: 'fam_a-opus-4-6' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: claudeCache(1024) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 32_000,
    contextWindow: 200_000,
  },
  {
    id: 'fam_a-sonnet-4',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-sonnet-4-20250514',
    protocol: 'anthropic-messages',
    tier: 'legacy',
    prices: usd(3, 0.3, 3.75, 15), // retired on the Claude API 2026-06-15 (Anthropic's release notes)
    retirement: { on: '2026-06-15', successor: 'fam_a-sonnet-4-6' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: claudeCache(1024) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 64_000,
    contextWindow: 200_000,
  },
  {
    id: 'fam_a-opus-4',
    family: 'fam_a',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-4-20250514',
    protocol: 'anthropic-messages',
    tier: 'legacy',
    prices: usd(15, 1.5, 18.75, 75), // pricing page: retired except on Google Cloud (on the Claude API since 2026-06-15, release notes)
    retirement: { on: '2026-06-15', successor: 'fam_a-opus-4-6' },
    capabilities: { attachments: IMAGES_AND_PDF, structuredOutput: 'instruction', tuning: NO_TUNING, cache: claudeCache(1024) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 32_000,
    contextWindow: 200_000,
  },

  // ───────────── Google Gemini; cachedInput = context-cache read (storage billed separately) ─────────────
  {
    id: 'fam_b-3.1-pro',
    family: 'fam_b',
    provider: 'google',
    upstreamModel: 'gemini-3.1-pro-preview',
    protocol: 'gemini-generate-content',
    tier: 'flagship',
    // "$2.00, prompts <= 200k tokens ... $4.00, prompts > 200k tokens"; output $12 / $18 (ai.google.dev pricing)
    prices: withSearch(longAbove(usd(2, 0.2, null, 12), 200_000, 4, 0.4, 18)), // unverified: cached $0.40 above 200K (from a copy of the table)
    note: GEMINI_3_THINKING_NOTE,
    capabilities: { attachments: GEMINI_MEDIA, structuredOutput: 'native', tuning: GEMINI_TUNING, cache: geminiCache(32_768) },
    defaultMaxTokens: 8192,
    maxOutputTokens: 65_536,
    contextWindow: 1_048_576,
  },
  {
    id: 'fam_b-3.5-flash',
    family: 'fam_b',
    provider: 'google',
    upstreamModel: 'gemini-3.5-flash',
    protocol: 'gemini-generate-content',
    tier: 'fast',
    prices: withSearch(usd(1.5, 0.15, null, 9)),
    note: GEMINI_3_THINKING_NOTE,
    capabilities: { attachments: GEMINI_MEDIA, structuredOutput: 'native', tuning: GEMINI_TUNING, cache: geminiCache(32_768) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 65_536,
    contextWindow: 1_048_576,
  },
  {
    id: 'fam_b-3.1-flash-lite',
    family: 'fam_b',
    provider: 'google',
    upstreamModel: 'gemini-3.1-flash-lite',
    protocol: 'gemini-generate-content',
    tier: 'fast',
    prices: withSearch(usd(0.25, 0.025, null, 1.5)),
    note: GEMINI_3_THINKING_NOTE,
    capabilities: { attachments: GEMINI_MEDIA, structuredOutput: 'native', tuning: GEMINI_TUNING, cache: geminiCache(32_768) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 65_536,
    contextWindow: 1_048_576,
  },
  {
    // Google lists no Gemini 3.1 Flash text model (only 3.1 Flash-Lite, Live, TTS and image; checked 2026-11-22):
    // the spec's legacy ID goes to Gemini 3 Flash, at its prices, and says so on every result.
    id: 'fam_b-3.1-flash',
    family: 'fam_b',
    provider: 'google',
    upstreamModel: 'gemini-3-flash-preview',
    protocol: 'gemini-generate-content',
    tier: 'legacy',
    servedBy: 'Google has no Gemini 3.1 Flash text model; gemini-3-flash-preview (Gemini 3 Flash) answered',
    prices: withSearch(usd(0.5, 0.05, null, 3)),
    note: GEMINI_3_THINKING_NOTE,
    capabilities: { attachments: GEMINI_MEDIA, structuredOutput: 'native', tuning: GEMINI_TUNING, cache: geminiCache(32_768) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 65_536,
    contextWindow: 1_048_576,
  },
  {
    id: 'fam_b-2.5-flash',
    family: 'fam_b',
    provider: 'google',
    upstreamModel: 'gemini-2.5-flash',
    protocol: 'gemini-generate-content',
    tier: 'legacy',
    // Deprecated; from 2026-12-01 Google routes its requests to gemini-3.5-flash-lite (its deprecations page, as
    // third parties quote it: "requests to gemini-2.5-flash [route] to gemini-3.5-flash-lite"), billed at that model's
    // rates, which are these ($0.30 / $0.03 / $2.50, ai.google.dev pricing as quoted 2026-10-07).
    vendorReroute: { on: '2026-12-01', answeredBy: 'gemini-3.5-flash-lite' },
    prices: usd(0.3, 0.03, null, 2.5),
    capabilities: { attachments: GEMINI_MEDIA, structuredOutput: 'native', tuning: NO_TUNING, cache: geminiCache(32_768) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 65_536,
    contextWindow: 1_048_576,
  },
  {
    id: 'fam_b-2.5-flash-lite',
    family: 'fam_b',
    provider: 'google',
    upstreamModel: 'gemini-2.5-flash-lite',
    protocol: 'gemini-generate-content',
    tier: 'legacy',
    prices: usd(0.1, 0.01, null, 0.4),
    capabilities: { attachments: GEMINI_MEDIA, structuredOutput: 'native', tuning: NO_TUNING, cache: geminiCache(32_768) },
    defaultMaxTokens: 4096,
    maxOutputTokens: 65_536,
    contextWindow: 1_048_576,
  },

  // ───────────── xAI Grok (automatic prompt caching) ─────────────
  {
    id: 'fam_d-4.20-0309-reasoning',
    family: 'fam_d',
    provider: 'xai',
    hiddenInputTokens: XAI_HIDDEN_PROMPT_TOKENS,
    upstreamModel: 'grok-4.20-0309-reasoning',
    protocol: 'openai-chat',
    tier: 'flagship',
    // The xAI dialect's reasoningEffortModels leave it out: xAI refuses reasoning_effort for it.
    note: 'reasoningEffort is accepted, as the contract lists it, but not sent: xAI refuses reasoning_effort for grok-4.20-0309-reasoning, which reasons at its own level (each result says so in a warning)',
    // "Requests whose prompt reaches 200k tokens are billed at the higher rate for all tokens" (docs.x.ai)
    prices: longAbove(usd(1.25, 0.2, null, 2.5), 199_999, 2.5, 0.4, 5),
    capabilities: { attachments: PNG_JPEG, structuredOutput: 'instruction', tuning: EFFORT_NLMH, cache: AUTO_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 131_072,
    contextWindow: 1_000_000, // unverified: xAI publishes no output cap
  },
  {
    id: 'fam_d-4.20-0309-non-reasoning',
    family: 'fam_d',
    provider: 'xai',
    hiddenInputTokens: XAI_HIDDEN_PROMPT_TOKENS,
    upstreamModel: 'grok-4.20-0309-non-reasoning',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: longAbove(usd(1.25, 0.2, null, 2.5), 199_999, 2.5, 0.4, 5),
    capabilities: { attachments: PNG_JPEG, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 131_072,
    contextWindow: 1_000_000, // unverified: output cap
  },
  {
    id: 'fam_d-4.3',
    family: 'fam_d',
    provider: 'xai',
    hiddenInputTokens: XAI_HIDDEN_PROMPT_TOKENS,
    upstreamModel: 'grok-4.3',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: longAbove(usd(1.25, 0.2, null, 2.5), 199_999, 2.5, 0.4, 5),
    capabilities: { attachments: PNG_JPEG, structuredOutput: 'instruction', tuning: EFFORT_NLMH, cache: AUTO_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 131_072,
    contextWindow: 1_000_000, // unverified: output cap
  },
  {
    id: 'fam_d-3',
    family: 'fam_d',
    provider: 'xai',
    hiddenInputTokens: XAI_HIDDEN_PROMPT_TOKENS,
    upstreamModel: 'grok-3',
    protocol: 'openai-chat',
    tier: 'legacy',
    prices: usd(1.25, 0.2, null, 2.5), // retired 2026-05-15 (docs.x.ai "Grok Model Retirement on May 15, 2026": replacement grok-4.3)
    retirement: { on: '2026-05-15', successor: 'fam_d-4.3' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 131_072,
    contextWindow: 131_072,
  },
  {
    id: 'fam_d-3-mini',
    family: 'fam_d',
    provider: 'xai',
    hiddenInputTokens: XAI_HIDDEN_PROMPT_TOKENS,
    upstreamModel: 'grok-3-mini',
    protocol: 'openai-chat',
    tier: 'legacy',
    prices: usd(0.3, 0.075, null, 0.5), // last published grok-3-mini prices
    // Not on xAI's May 15 list, but dropped with its models (models.dev, 2026-05-16): names older than grok-4.20 stopped
    // working or are billed as aliases of grok-4.3 at its rates (an xAI contributor: "older than grok-4.20 ... do not
    // work anymore", BerriAI/litellm-docs#816). Retired with grok-3, so that no call is charged grok-3-mini's rates for
    // grok-4.3's (4 to 5 times more).
    retirement: { on: '2026-05-15', successor: 'fam_d-4.3' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 131_072,
    contextWindow: 131_072,
  },

  // ───────────── Cerebras (automatic prompt caching, no cached price listed) ─────────────
  {
    id: 'fam_e-gpt-oss-120b',
    family: 'fam_e',
    openWeights: { maker: 'fam_c', weights: 'gpt-oss-120b' },
    provider: 'cerebras',
    upstreamModel: 'gpt-oss-120b',
    protocol: 'openai-chat',
    tier: 'flagship',
    prices: usd(0.35, null, null, 0.75),
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: EFFORT_LMH, cache: AUTO_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 32_768,
    contextWindow: 131_072, // unverified: output cap (paid tier)
  },
  {
    id: 'fam_e-glm-4.7',
    family: 'fam_e',
    openWeights: { maker: 'zhipu', weights: 'glm-4.7' },
    provider: 'cerebras',
    upstreamModel: 'zai-glm-4.7',
    protocol: 'openai-chat',
    tier: 'flagship',
    prices: usd(2.25, null, null, 2.75),
    // Cerebras shut zai-glm-4.7 down on 2026-08-17 (as Cerebras staff announced it); gpt-oss-120b is its other model.
    retirement: { on: '2026-08-17', successor: 'fam_e-gpt-oss-120b' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: EFFORT_LMH, cache: AUTO_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 40_960,
    contextWindow: 131_072,
  },

  // ───────────── DeepSeek (peak-hour rates; off-peak is half) ─────────────
  {
    id: 'fam_f-v4-pro',
    family: 'fam_f',
    provider: 'deepseek',
    upstreamModel: 'deepseek-v4-pro',
    protocol: 'openai-chat',
    tier: 'flagship',
    prices: { ...usd(1.32, 0.044, null, 3.96), offPeak: DEEPSEEK_OFF_PEAK },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: DEEPSEEK_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 384_000,
    contextWindow: 1_000_000,
  },
  {
    // Vendor name is now `deepseek-flash` (V4.1-Flash); legacy `deepseek-v4-flash` is served by the same model.
    id: 'fam_f-v4-flash',
    family: 'fam_f',
    provider: 'deepseek',
    upstreamModel: 'deepseek-flash',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: { ...usd(0.3, 0.006, null, 1.2), offPeak: DEEPSEEK_OFF_PEAK },
    capabilities: { attachments: IMAGE_TYPES, structuredOutput: 'instruction', tuning: NO_TUNING, cache: DEEPSEEK_CACHE }, // unverified: accepted image formats
    defaultMaxTokens: 4096,
    maxOutputTokens: 384_000,
    contextWindow: 1_000_000,
  },

  // ───────────── Mistral (max_tokens + prompt share the context window) ─────────────
  // Called by their dated names: Mistral moves a `-latest` alias to each new version of a model,
  // prices included (mistral-large-latest went from 2402 to 2407, 2411 and 2512, and Large 4
  // is out at other prices), so a model priced here could have been billed as another.
  {
    id: 'fam_g-large',
    family: 'fam_g',
    provider: 'mistral',
    upstreamModel: 'mistral-large-2512',
    protocol: 'openai-chat',
    tier: 'flagship',
    prices: mistral(0.5, 1.5), // Mistral Large 3
    capabilities: { attachments: IMAGE_TYPES, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 262_144,
    contextWindow: 262_144,
  },
  {
    id: 'fam_g-medium',
    family: 'fam_g',
    provider: 'mistral',
    // Still the alias: Medium 3.5's dated name is not settled in the sources (mistral-medium-3.5, -3-5-26-04).
    upstreamModel: 'mistral-medium-latest',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: mistral(1.5, 7.5), // Mistral Medium 3.5
    capabilities: { attachments: IMAGE_TYPES, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 262_144,
    contextWindow: 262_144,
  },
  {
    id: 'fam_g-small',
    family: 'fam_g',
    provider: 'mistral',
    upstreamModel: 'mistral-small-2603',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: mistral(0.15, 0.6), // Mistral Small 4 (models.dev; an older copy gave Small 3's 0.10/0.30)
    capabilities: { attachments: IMAGE_TYPES, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 262_144,
    contextWindow: 262_144,
  },
  {
    id: 'fam_k-8b',
    family: 'fam_k',
    provider: 'mistral',
    upstreamModel: 'ministral-8b-2512',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: mistral(0.15, 0.15), // Ministral 3 8B
    capabilities: { attachments: IMAGE_TYPES, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 262_144,
    contextWindow: 262_144,
  },
  {
    id: 'fam_l',
    family: 'fam_l',
    provider: 'mistral',
    upstreamModel: 'codestral-2508',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: mistral(0.3, 0.9), // Codestral 25.08
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 256_000,
    contextWindow: 256_000,
  },

  // ───────────── Amazon Nova on Bedrock (Converse) ─────────────
  {
    id: 'fam_h-pro',
    family: 'fam_h',
    provider: 'bedrock',
    upstreamModel: 'amazon.nova-pro-v1:0',
    protocol: 'bedrock-converse',
    tier: 'flagship',
    prices: usd(0.8, 0.2, null, 3.2),
    capabilities: { attachments: IMAGES_AND_PDF, mostPdfs: NOVA_MOST_DOCUMENTS, structuredOutput: 'tool', tuning: NO_TUNING, cache: NOVA_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 10_000,
    contextWindow: 300_000, // unverified: 5K at launch, 10K later
  },
  {
    id: 'fam_h-lite',
    family: 'fam_h',
    provider: 'bedrock',
    upstreamModel: 'amazon.nova-lite-v1:0',
    protocol: 'bedrock-converse',
    tier: 'fast',
    prices: usd(0.06, 0.015, null, 0.24),
    capabilities: { attachments: IMAGES_AND_PDF, mostPdfs: NOVA_MOST_DOCUMENTS, structuredOutput: 'tool', tuning: NO_TUNING, cache: NOVA_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 10_000,
    contextWindow: 300_000, // unverified: output cap
  },
  {
    id: 'fam_h-micro',
    family: 'fam_h',
    provider: 'bedrock',
    upstreamModel: 'amazon.nova-micro-v1:0',
    protocol: 'bedrock-converse',
    tier: 'fast',
    prices: usd(0.035, 0.00875, null, 0.14),
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'tool', tuning: NO_TUNING, cache: NOVA_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 10_000,
    contextWindow: 128_000, // unverified: output cap
  },

  // ───────────── Groq (automatic caching, 50% off, on gpt-oss only) ─────────────
  {
    id: 'fam_i-gpt-oss-120b',
    family: 'fam_i',
    openWeights: { maker: 'fam_c', weights: 'gpt-oss-120b' },
    provider: 'groq',
    upstreamModel: 'openai/gpt-oss-120b',
    protocol: 'openai-chat',
    tier: 'flagship',
    prices: usd(0.15, 0.075, null, 0.6),
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'native', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 65_536,
    contextWindow: 131_072,
  },
  {
    id: 'fam_i-gpt-oss-20b',
    family: 'fam_i',
    openWeights: { maker: 'fam_c', weights: 'gpt-oss-20b' },
    provider: 'groq',
    upstreamModel: 'openai/gpt-oss-20b',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: usd(0.075, 0.0375, null, 0.3),
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'native', tuning: NO_TUNING, cache: AUTO_CACHE },
    defaultMaxTokens: 8192,
    maxOutputTokens: 65_536,
    contextWindow: 131_072,
  },
  {
    id: 'fam_i-4-scout',
    family: 'fam_i',
    openWeights: { maker: 'meta', weights: 'llama-4-scout-17b-16e' },
    provider: 'groq',
    upstreamModel: 'meta-llama/llama-4-scout-17b-16e-instruct',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: usd(0.11, null, null, 0.34),
    // Groq shut Scout down on 2026-07-17 (its deprecations page; it recommends openai/gpt-oss-120b).
    retirement: { on: '2026-07-17', successor: 'fam_i-gpt-oss-120b' },
    // Groq lists Scout for best-effort json_schema only; strict mode is gpt-oss only.
    capabilities: { attachments: IMAGE_TYPES, structuredOutput: 'instruction', tuning: NO_TUNING, cache: NO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 8192,
    contextWindow: 131_072,
  },
  {
    id: 'fam_j3-32b',
    family: 'fam_j3',
    openWeights: { maker: 'qwen', weights: 'qwen3-32b' },
    provider: 'groq',
    upstreamModel: 'qwen/qwen3-32b',
    protocol: 'openai-chat',
    tier: 'fast',
    prices: usd(0.29, null, null, 0.59),
    // Groq shut Qwen3 32B down on 2026-07-17 (its deprecations page; it recommends openai/gpt-oss-120b).
    retirement: { on: '2026-07-17', successor: 'fam_i-gpt-oss-120b' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: NO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 40_960,
    contextWindow: 131_072,
  },
  {
    id: 'fam_i-3.3-70b',
    family: 'fam_i',
    openWeights: { maker: 'meta', weights: 'llama-3.3-70b' },
    provider: 'groq',
    upstreamModel: 'llama-3.3-70b-versatile',
    protocol: 'openai-chat',
    tier: 'legacy',
    prices: usd(0.59, null, null, 0.79),
    // Groq shut it down on 2026-08-16 (its deprecations page and notice; it recommends openai/gpt-oss-120b).
    retirement: { on: '2026-08-16', successor: 'fam_i-gpt-oss-120b' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: NO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 32_768,
    contextWindow: 131_072,
  },
  {
    id: 'fam_i-3.1-8b',
    family: 'fam_i',
    openWeights: { maker: 'meta', weights: 'llama-3.1-8b' },
    provider: 'groq',
    upstreamModel: 'llama-3.1-8b-instant',
    protocol: 'openai-chat',
    tier: 'legacy',
    prices: usd(0.05, null, null, 0.08),
    // Groq shut it down on 2026-08-16 (its deprecations page and notice; it recommends openai/gpt-oss-20b).
    retirement: { on: '2026-08-16', successor: 'fam_i-gpt-oss-20b' },
    capabilities: { attachments: TEXT_ONLY, structuredOutput: 'instruction', tuning: NO_TUNING, cache: NO_CACHE },
    defaultMaxTokens: 4096,
    maxOutputTokens: 131_072,
    contextWindow: 131_072,
  },
];

/** Family token -> the real vendor token used in alias IDs. */
export const FAMILY_TOKENS: Readonly<Record<string, string>> = {
  fam_a: 'claude',
  fam_b: 'gemini',
  fam_c: 'gpt',
  fam_d: 'grok',
  fam_e: 'cerebras',
  fam_f: 'deepseek',
  fam_g: 'mistral',
  fam_h: 'nova',
  fam_i: 'groq',
  fam_j3: 'qwen3',
  fam_k: 'ministral',
  fam_l: 'codestral',
};
