/**
 * The dialects of the simulated chat completions protocol. The five vendors that speak it
 * differ where it matters to a client's mapping, and the simulator answers in each one's
 * dialect: xAI counts reasoning tokens beside completion_tokens and rejects
 * reasoning_effort on grok-4.20; DeepSeek thinks by default and reports
 * prompt_cache_hit/miss_tokens; Mistral rejects unknown fields with a 422 and has its own
 * error body; Cerebras caps temperature at 1.5 and returns `reasoning` (inline `<think>` with
 * `reasoning_format: "raw"`); Groq returns `reasoning` (gpt-oss). The dialect follows the
 * model when the catalog knows it (its upstream model name), else the provider token of the
 * path when the server passes it, else OpenAI's. Dialects that cache pretend the cache is
 * warm: the system prompt, in the vendor's cache blocks, is reported as read from cache.
 */
import { MODELS } from '../../../../shared/catalog/models.js';
import { isObject, type Json } from '../json.js';
import { strictProblem } from '../strict-schema.js';
import type { Reply } from '../types.js';
import { cerebrasError, deepSeekError, type ErrorDetails, jsonReply, mistralError, nextRequestId, openAiErrorType, openAiFault, simulatedOpenAiError, xaiError } from './errors.js';

export type ChatVendor = 'openai' | 'xai' | 'cerebras' | 'deepseek' | 'mistral' | 'groq';

const CHAT_VENDORS: ReadonlySet<string> = new Set<ChatVendor>(['xai', 'cerebras', 'deepseek', 'mistral', 'groq']);

const VENDOR_BY_MODEL: ReadonlyMap<string, ChatVendor> = new Map(
  MODELS.filter((entry) => CHAT_VENDORS.has(entry.provider)).map((entry) => [entry.upstreamModel, entry.provider as ChatVendor]),
);

/** The dialect a request is answered in: the catalog model's vendor, else the path's provider token, else OpenAI's. */
export function chatVendorOf(model: string, provider?: string): ChatVendor {
  const byModel = VENDOR_BY_MODEL.get(model);
  if (byModel) return byModel;
  return provider !== undefined && CHAT_VENDORS.has(provider) ? (provider as ChatVendor) : 'openai';
}

/** Where a reasoning model's thinking goes in the answer. */
export interface Reasoning {
  tokens: number;
  /** Message field carrying the text (`reasoning`, `reasoning_content`); none when hidden or inline. */
  field?: string;
  /** `<think>…</think>` before the answer in `content`. */
  inline?: boolean;
}

/** Token counts of one answer; `visible` counts `content` as sent (inline thinking included). */
export interface Tokens {
  prompt: number;
  cached: number;
  visible: number;
  reasoning: Reasoning;
}

export interface VendorProfile {
  /** Checks beyond OpenAI's on a structurally valid request; an error reply or undefined. */
  check(body: Json, model: string): Reply | undefined;
  /** The thinking the model does for this request. */
  reasoning(body: Json, model: string): Reasoning;
  /**
   * Whether reasoning is billed beside the output limit (xAI) instead of within it: elsewhere
   * the limit counts reasoning, so thinking comes first and the answer gets what is left.
   */
  reasoningBeyondLimit?: true;
  /** Cache block size when the dialect reports the (warm) system prompt as cached. */
  cacheBlock?: number;
  usage(t: Tokens): Json;
  /** Top-level fields besides OpenAI's. */
  extras?(t: Tokens): Json;
  /** The vendor's answer to a model it has shut down; not given where it answers the name anyway. */
  shutDown?(model: string): Reply | undefined;
  /** A request error in the vendor's shape. */
  error(status: number, message: string, details?: ErrorDetails): Reply;
  /** A fault-injected error in the vendor's shape. */
  fault(status: number): Reply;
}

const EFFORT_TOKENS: Readonly<Record<string, number>> = { none: 0, minimal: 32, low: 64, medium: 192, high: 512, xhigh: 1024, max: 1024 };
const NO_REASONING: Reasoning = { tokens: 0 };

function effortTokens(body: Json, fallback: string): number {
  const effort = typeof body['reasoning_effort'] === 'string' ? body['reasoning_effort'] : fallback;
  return EFFORT_TOKENS[effort] ?? EFFORT_TOKENS[fallback] ?? 0;
}

/** OpenAI's usage block: reasoning inside completion_tokens. */
function openAiUsage(t: Tokens): Json {
  const completion = t.visible + (t.reasoning.inline ? 0 : t.reasoning.tokens);
  return {
    prompt_tokens: t.prompt,
    completion_tokens: completion,
    total_tokens: t.prompt + completion,
    prompt_tokens_details: { cached_tokens: t.cached },
    completion_tokens_details: { reasoning_tokens: t.reasoning.tokens },
  };
}

const OPENAI: VendorProfile = {
  check: () => undefined,
  reasoning: () => NO_REASONING,
  usage: openAiUsage,
  error: (status, message, d = {}) => simulatedOpenAiError(status, message, d.type ?? openAiErrorType(status), d.param ?? null, d.code ?? null),
  fault: (status) => openAiFault(status),
};

const XAI_EFFORT_MODELS = ['grok-4.3', 'grok-3-mini'];
const XAI_REASONING_ONLY_REJECTS: ReadonlyArray<[string, string]> = [
  ['presence_penalty', 'presencePenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
  ['stop', 'stop'],
];

function xaiReasons(model: string): boolean {
  return (model.includes('-reasoning') && !model.includes('non-reasoning')) || XAI_EFFORT_MODELS.some((p) => model.startsWith(p));
}

const XAI: VendorProfile = {
  check(body, model) {
    if (body['reasoning_effort'] !== undefined && !XAI_EFFORT_MODELS.some((p) => model.startsWith(p))) {
      return xaiError(400, `Model ${model} does not support parameter reasoningEffort.`);
    }
    if (xaiReasons(model)) {
      for (const [field, name] of XAI_REASONING_ONLY_REJECTS) {
        if (body[field] !== undefined) return xaiError(400, `Model ${model} does not support parameter ${name}.`);
      }
    }
    for (const url of imageUrls(body)) {
      if (url.startsWith('data:') && !/^data:image\/(png|jpeg|jpg);/.test(url)) {
        return xaiError(400, 'Unsupported image format: only jpg/jpeg and png images are supported.');
      }
    }
    return undefined;
  },
  reasoning: (body, model) => (xaiReasons(model) ? { tokens: effortTokens(body, model.startsWith('grok-4.3') ? 'low' : 'medium') } : NO_REASONING),
  reasoningBeyondLimit: true,
  cacheBlock: 64,
  usage: (t) => ({
    prompt_tokens: t.prompt,
    completion_tokens: t.visible,
    total_tokens: t.prompt + t.visible + t.reasoning.tokens,
    prompt_tokens_details: { text_tokens: t.prompt, audio_tokens: 0, image_tokens: 0, cached_tokens: t.cached },
    completion_tokens_details: { reasoning_tokens: t.reasoning.tokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    num_sources_used: 0,
  }),
  // xAI answers its retired slugs still: redirected to grok-4.3, billed at its rates (its May 15, 2026 retirement notice).
  shutDown: () => undefined,
  error: (status, message) => xaiError(status, message),
  fault: (status) => xaiError(status, `Simulated upstream error ${status}`),
};

const CEREBRAS: VendorProfile = {
  check(body) {
    const temperature = body['temperature'];
    if (typeof temperature === 'number' && temperature > 1.5) {
      return cerebrasError(400, 'temperature: Input should be less than or equal to 1.5', { param: 'validation_error', code: 'wrong_api_format' });
    }
    return undefined;
  },
  reasoning(body, model) {
    if (!model.startsWith('gpt-oss')) return NO_REASONING;
    const tokens = effortTokens(body, 'medium');
    const format = body['reasoning_format'];
    if (format === 'hidden') return { tokens };
    if (format === 'raw') return { tokens, inline: true };
    return { tokens, field: 'reasoning' };
  },
  usage: (t) => {
    const completion = t.visible + (t.reasoning.inline ? 0 : t.reasoning.tokens);
    return {
      prompt_tokens: t.prompt,
      completion_tokens: completion,
      total_tokens: t.prompt + completion,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    };
  },
  extras: () => ({ time_info: { queue_time: 0.000073, prompt_time: 0.001, completion_time: 0.005, total_time: 0.006, created: Math.floor(Date.now() / 1000) } }),
  // As Cerebras answers a model it no longer serves (its users quote it, e.g. nminaya/grammar-nazi-bot#933).
  shutDown: () => cerebrasError(404, 'Model does not exist or you do not have access to it.', { type: 'not_found_error', param: 'model', code: 'model_not_found' }),
  error: cerebrasError,
  fault: (status) => cerebrasError(status, `Simulated upstream error ${status}`),
};

function deepSeekThinks(body: Json): boolean {
  const thinking = body['thinking'];
  return !(isObject(thinking) && thinking['type'] === 'disabled');
}

/** DeepSeek in thinking mode: the first message after the system ones is the user's, and user and assistant alternate. */
function deepSeekTurnOrder(body: Json, model: string): string | undefined {
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  let previous: { role: unknown; index: number } | undefined;
  for (let i = 0; i < messages.length; i++) {
    const role: unknown = isObject(messages[i]) ? messages[i]['role'] : undefined;
    if (role === 'system') continue;
    if (previous === undefined && role !== 'user') {
      return `The first message (except the system message) of ${model} must be a user message, but an assistant message detected.`;
    }
    if (previous !== undefined && previous.role === role) {
      return `${model} does not support successive user or assistant messages (messages[${previous.index}] and messages[${i}] in your input). You should interleave the user/assistant messages in the message sequence.`;
    }
    previous = { role, index: i };
  }
  return undefined;
}

const DEEPSEEK: VendorProfile = {
  check(body, model) {
    const order = deepSeekThinks(body) ? deepSeekTurnOrder(body, model) : undefined;
    return order === undefined ? undefined : deepSeekError(400, order, { type: 'invalid_request_error', code: 'invalid_request_error' });
  },
  reasoning(body) {
    if (!deepSeekThinks(body)) return NO_REASONING;
    return { tokens: effortTokens(body, 'high'), field: 'reasoning_content' };
  },
  cacheBlock: 64,
  usage: (t) => {
    const completion = t.visible + t.reasoning.tokens;
    return {
      prompt_tokens: t.prompt,
      completion_tokens: completion,
      total_tokens: t.prompt + completion,
      prompt_cache_hit_tokens: t.cached,
      prompt_cache_miss_tokens: t.prompt - t.cached,
      completion_tokens_details: { reasoning_tokens: t.reasoning.tokens },
    };
  },
  error: deepSeekError,
  fault: (status) => deepSeekError(status, status === 503 ? 'Server overloaded, please try again later.' : `Simulated upstream error ${status}`),
};

/** Top-level fields Mistral's chat completions accept; anything else is a 422. */
const MISTRAL_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'temperature',
  'top_p',
  'max_tokens',
  'stream',
  'stop',
  'random_seed',
  'response_format',
  'tools',
  'tool_choice',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'prediction',
  'parallel_tool_calls',
  'prompt_mode',
  'safe_prompt',
  'prompt_cache_key',
  'metadata',
]);

const MISTRAL: VendorProfile = {
  check(body) {
    const extra = Object.keys(body).filter((key) => !MISTRAL_FIELDS.has(key));
    const detail: Record<string, unknown>[] = extra.map((key) => ({ type: 'extra_forbidden', loc: ['body', key], msg: 'Extra inputs are not permitted', input: body[key] }));
    const temperature = body['temperature'];
    if (typeof temperature === 'number' && temperature > 1.5) {
      detail.push({ type: 'less_than_equal', loc: ['body', 'temperature'], msg: 'Input should be less than or equal to 1.5', input: temperature, ctx: { le: 1.5 } });
    }
    return detail.length === 0 ? undefined : jsonReply(422, { detail });
  },
  reasoning: () => NO_REASONING,
  cacheBlock: 64,
  usage: (t) => ({
    prompt_tokens: t.prompt,
    completion_tokens: t.visible,
    total_tokens: t.prompt + t.visible,
    prompt_tokens_details: { cached_tokens: t.cached },
  }),
  error: mistralError,
  fault: (status) =>
    status === 429 ? mistralError(429, 'Requests rate limit exceeded', { type: 'rate_limited', code: '1300' }) : mistralError(status, `Simulated upstream error ${status}`),
};

/** Groq's strict mode (constrained decoding, gpt-oss) refuses a schema it cannot enforce exactly: every property required, no extras. */
function groqStrictSchema(body: Json): string | undefined {
  const format = body['response_format'];
  const spec = isObject(format) && format['type'] === 'json_schema' ? format['json_schema'] : undefined;
  if (!isObject(spec) || spec['strict'] !== true) return undefined;
  const problem = strictProblem(spec['schema'], [String(spec['name'])]);
  return problem && `invalid JSON schema for response_format with strict: true: ${problem} All fields must be required and objects must set additionalProperties: false.`;
}

/**
 * Groq documents that Structured Outputs do not stream ("Streaming and tool use are not currently
 * supported with Structured Outputs", console.groq.com/docs/structured-outputs); the wording of
 * its refusal is not documented, so this one's is ours.
 */
function groqStreamedSchema(body: Json): string | undefined {
  const format = body['response_format'];
  const schema = isObject(format) && format['type'] === 'json_schema';
  return schema && body['stream'] === true ? 'response_format json_schema is not supported with stream: true' : undefined;
}

const GROQ: VendorProfile = {
  check(body) {
    const problem = groqStreamedSchema(body) ?? groqStrictSchema(body);
    return problem === undefined ? undefined : simulatedOpenAiError(400, problem, 'invalid_request_error', 'response_format', null);
  },
  reasoning(body, model) {
    if (!model.startsWith('openai/gpt-oss')) return NO_REASONING;
    const tokens = effortTokens(body, 'medium');
    return body['include_reasoning'] === false || body['reasoning_format'] === 'hidden' ? { tokens } : { tokens, field: 'reasoning' };
  },
  usage: openAiUsage,
  extras: () => ({ x_groq: { id: nextRequestId() } }),
  // Groq's 400 for a decommissioned model (its users quote it, e.g. valentinfrlch/ha-llmvision#332, rashadphz/farfalle#107).
  shutDown: (model) =>
    jsonReply(400, {
      error: {
        message: `The model \`${model}\` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead.`,
        type: 'invalid_request_error',
        code: 'model_decommissioned',
      },
    }),
  error: OPENAI.error,
  // 498: flex-tier capacity exceeded.
  fault: (status) => openAiFault(status, status === 498 ? 'capacity_exceeded' : null),
};

export const VENDORS: Readonly<Record<ChatVendor, VendorProfile>> = { openai: OPENAI, xai: XAI, cerebras: CEREBRAS, deepseek: DEEPSEEK, mistral: MISTRAL, groq: GROQ };

function imageUrls(body: Json): string[] {
  const urls: string[] = [];
  for (const message of Array.isArray(body['messages']) ? body['messages'] : []) {
    const content = isObject(message) ? message['content'] : undefined;
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (!isObject(part) || part['type'] !== 'image_url') continue;
      const image = part['image_url'];
      const url = typeof image === 'string' ? image : isObject(image) ? image['url'] : undefined;
      if (typeof url === 'string') urls.push(url);
    }
  }
  return urls;
}
