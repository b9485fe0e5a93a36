/**
 * OpenAI-compatible chat completions protocol for the provider simulator:
 * `POST /{provider}/v1/chat/completions`.
 *
 * Validates the OpenAI request shape, answers in the exact `chat.completion`
 * shape with deterministic content, and shapes errors like OpenAI does.
 *
 * The five vendors that speak this protocol differ where it matters to a
 * client's mapping, and the simulator answers in each one's dialect (see
 * VENDORS below): xAI counts reasoning tokens beside completion_tokens and
 * rejects reasoning_effort on grok-4.20; DeepSeek thinks by default and reports
 * prompt_cache_hit/miss_tokens; Mistral rejects unknown fields with a 422 and
 * has its own error body; Cerebras caps temperature at 1.5 and returns
 * `reasoning`; Groq returns `reasoning` (gpt-oss) or inline `<think>` (Qwen3).
 * The dialect follows the model when the catalog knows it (its upstream model
 * name), else the provider token of the path when the server passes it, else
 * OpenAI's. Dialects that cache pretend the cache is warm: the system prompt,
 * in the vendor's cache blocks, is reported as read from cache.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { MODELS } from '../../../shared/catalog/models.js';
import type { Prepared, ProtocolHandler, Reply } from './types.js';
import { countTokens, generateFromSchema, generateParagraph, schemaFromInstruction, truncateToTokens } from './text.js';
import { isObject, type Json } from './json.js';
import { chatStream } from './openai-chat-stream.js';
import { strictProblem } from './strict-schema.js';

let requestSeq = 0;

/** Headers OpenAI sends with every answer (rate-limit headers included). */
export function responseHeaders(totalTokens: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-request-id': `req_sim_${(++requestSeq).toString(36)}`,
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-remaining-requests': '9999',
    'x-ratelimit-reset-requests': '6ms',
    'x-ratelimit-limit-tokens': '30000000',
    'x-ratelimit-remaining-tokens': String(Math.max(0, 30000000 - totalTokens)),
    'x-ratelimit-reset-tokens': '0s',
  };
}

/** An error reply in the OpenAI shape `{"error":{"message","type","param","code"}}`. */
export function openAiError(status: number, message: string, type = 'invalid_request_error', param: string | null = null, code: string | null = null): Reply {
  return {
    status,
    headers: responseHeaders(0),
    body: JSON.stringify({ error: { message, type, param, code } }),
  };
}

/** The error `type` OpenAI uses for a status. */
export function errorTypeFor(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

// ---------------------------------------------------------------------------
// Vendor dialects
// ---------------------------------------------------------------------------

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
interface Reasoning {
  tokens: number;
  /** Message field carrying the text (`reasoning`, `reasoning_content`); none when hidden or inline. */
  field?: string;
  /** `<think>…</think>` before the answer in `content`. */
  inline?: boolean;
}

/** Token counts of one answer; `visible` counts `content` as sent (inline thinking included). */
interface Tokens {
  prompt: number;
  cached: number;
  visible: number;
  reasoning: Reasoning;
}

interface ErrorDetails {
  type?: string;
  param?: string | null;
  code?: string | null;
}

interface VendorProfile {
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

function jsonReply(status: number, body: unknown): Reply {
  return { status, headers: responseHeaders(0), body: JSON.stringify(body) };
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

function openAiFault(status: number, code: string | null = null): Reply {
  return jsonReply(status, { error: { message: `Simulated upstream error ${status}`, type: errorTypeFor(status), code } });
}

const OPENAI: VendorProfile = {
  check: () => undefined,
  reasoning: () => NO_REASONING,
  usage: openAiUsage,
  error: (status, message, d = {}) => openAiError(status, message, d.type ?? errorTypeFor(status), d.param ?? null, d.code ?? null),
  fault: (status) => openAiFault(status),
};

/** gRPC status texts xAI puts in `code`. */
const XAI_CODES: Readonly<Record<number, string>> = {
  400: 'Client specified an invalid argument',
  401: 'Request not authenticated',
  403: 'The caller does not have permission to execute the specified operation',
  404: 'Some requested entity was not found',
  429: 'Some resource has been exhausted',
  500: 'Internal error',
  503: 'The service is currently unavailable',
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

function xaiError(status: number, message: string): Reply {
  return jsonReply(status, { code: XAI_CODES[status] ?? 'Unknown error', error: message });
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
  error: (status, message) => xaiError(status, message),
  fault: (status) => xaiError(status, `Simulated upstream error ${status}`),
};

function cerebrasError(status: number, message: string, d: ErrorDetails = {}): Reply {
  if (status >= 500) {
    return jsonReply(status, { status_code: status, error: { message, type: 'server_error', param: '', code: '', id: '' } });
  }
  return jsonReply(status, { message, type: d.type ?? errorTypeFor(status), param: d.param ?? '', code: d.code ?? '' });
}

const CEREBRAS: VendorProfile = {
  check(body) {
    const temperature = body['temperature'];
    if (typeof temperature === 'number' && temperature > 1.5) {
      return cerebrasError(400, 'temperature: Input should be less than or equal to 1.5', { param: 'validation_error', code: 'wrong_api_format' });
    }
    return undefined;
  },
  reasoning(body, model) {
    if (!model.startsWith('gpt-oss') && !model.startsWith('zai-glm')) return NO_REASONING;
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
  error: cerebrasError,
  fault: (status) => cerebrasError(status, `Simulated upstream error ${status}`),
};

function deepSeekError(status: number, message: string, d: ErrorDetails = {}): Reply {
  return jsonReply(status, { error: { message, type: d.type ?? errorTypeFor(status), param: d.param ?? null, code: d.code ?? errorTypeFor(status) } });
}

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

function mistralError(status: number, message: string, d: ErrorDetails = {}): Reply {
  return jsonReply(status, { object: 'error', message, type: d.type ?? errorTypeFor(status), param: d.param ?? null, code: d.code ?? null });
}

const MISTRAL: VendorProfile = {
  check(body) {
    const extra = Object.keys(body).filter((key) => !MISTRAL_FIELDS.has(key));
    if (extra.length === 0) return undefined;
    const detail = extra.map((key) => ({ type: 'extra_forbidden', loc: ['body', key], msg: 'Extra inputs are not permitted', input: body[key] }));
    return jsonReply(422, { detail });
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

const GROQ: VendorProfile = {
  check(body) {
    const problem = groqStrictSchema(body);
    return problem === undefined ? undefined : openAiError(400, problem, 'invalid_request_error', 'response_format', null);
  },
  reasoning(body, model) {
    if (model.startsWith('openai/gpt-oss')) {
      const tokens = effortTokens(body, 'medium');
      return body['include_reasoning'] === false || body['reasoning_format'] === 'hidden' ? { tokens } : { tokens, field: 'reasoning' };
    }
    if (model.startsWith('qwen/qwen3')) {
      if (body['reasoning_effort'] === 'none') return NO_REASONING;
      const tokens = EFFORT_TOKENS['medium'] as number;
      const format = body['reasoning_format'];
      if (format === 'parsed') return { tokens, field: 'reasoning' };
      if (format === 'hidden') return { tokens };
      return { tokens, inline: true };
    }
    return NO_REASONING;
  },
  usage: openAiUsage,
  extras: () => ({ x_groq: { id: `req_sim_${(requestSeq + 1).toString(36)}` } }),
  error: OPENAI.error,
  // 498: flex-tier capacity exceeded.
  fault: (status) => openAiFault(status, status === 498 ? 'capacity_exceeded' : null),
};

const VENDORS: Readonly<Record<ChatVendor, VendorProfile>> = { openai: OPENAI, xai: XAI, cerebras: CEREBRAS, deepseek: DEEPSEEK, mistral: MISTRAL, groq: GROQ };

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

// ---------------------------------------------------------------------------
// Request validation and answer
// ---------------------------------------------------------------------------

const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant']);
const IMAGE_TOKENS = 85;
const DOCUMENT_TOKENS = 258;
const PER_MESSAGE_TOKENS = 4;
const CHAT_PATH = '/v1/chat/completions';
const SEP = '\u0000';

type Format = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; schema: unknown };

function optionalNumber(body: Json, key: string, min: number, max: number): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return `Invalid type for '${key}': expected a number, but got ${typeof v} instead.`;
  if (v < min || v > max) return `Invalid '${key}': expected a value between ${min} and ${max}, but got ${v} instead.`;
  return undefined;
}

function optionalMaxTokens(body: Json, key: string): { error?: string; value?: number } {
  const v = body[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'number' || !Number.isInteger(v)) return { error: `Invalid type for '${key}': expected an integer.` };
  if (v < 1) return { error: `Invalid '${key}': integer below minimum value. Expected a value >= 1, but got ${v} instead.` };
  return { value: v };
}

function parseFormat(v: unknown): Format | string {
  if (v === undefined || v === null) return { type: 'text' };
  if (!isObject(v)) return "Invalid type for 'response_format': expected an object.";
  switch (v['type']) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const js = v['json_schema'];
      if (!isObject(js)) return "Missing required parameter: 'response_format.json_schema'.";
      if (typeof js['name'] !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(js['name'])) {
        return "Invalid 'response_format.json_schema.name': expected a string of 1-64 letters, digits, '_' or '-'.";
      }
      if (js['schema'] !== undefined && !isObject(js['schema'])) return "Invalid type for 'response_format.json_schema.schema': expected an object.";
      if (js['strict'] !== undefined && js['strict'] !== null && typeof js['strict'] !== 'boolean') {
        return "Invalid type for 'response_format.json_schema.strict': expected a boolean.";
      }
      return { type: 'json_schema', schema: js['schema'] ?? {} };
    }
    default:
      return "Invalid value for 'response_format.type': supported values are 'text', 'json_object' and 'json_schema'.";
  }
}

interface ChatCall {
  model: string;
  vendor: VendorProfile;
  seed: number;
  id: string;
  promptTokens: number;
  cachedTokens: number;
  maxTokens: number | undefined;
  format: Format;
  reasoning: Reasoning;
}

/** Deterministic thinking text of exactly `tokens` simulator tokens, recognisable by its opening. */
export const THINKING_OPENING = 'Simulated reasoning: ';

function thinkingText(model: string, seed: number, tokens: number): string {
  const length = tokens * 4;
  let text = THINKING_OPENING;
  for (let round = 0; text.length < length; round++) text += `${generateParagraph(model, (seed ^ 0x5bd1e995) + round)} `;
  return text.slice(0, length);
}

function answer(call: ChatCall, usage: boolean, structured?: Json): Reply {
  let content: string;
  switch (call.format.type) {
    case 'json_schema':
      content = JSON.stringify(structured ?? generateFromSchema(call.format.schema, call.seed));
      break;
    case 'json_object':
      content = JSON.stringify({ answer: generateParagraph(call.model, call.seed) });
      break;
    default:
      content = generateParagraph(call.model, call.seed);
  }
  const limit = call.maxTokens ?? Infinity;
  const reasoning = call.vendor.reasoningBeyondLimit ? call.reasoning : { ...call.reasoning, tokens: Math.min(call.reasoning.tokens, limit) };
  const room = call.vendor.reasoningBeyondLimit ? limit : limit - reasoning.tokens;
  let finishReason: 'stop' | 'length' = 'stop';
  if (countTokens(content) > room) {
    content = truncateToTokens(content, room);
    finishReason = 'length';
  }
  const thinking = reasoning.tokens > 0 ? thinkingText(call.model, call.seed, reasoning.tokens) : '';
  if (reasoning.inline && thinking) content = `<think>${thinking}</think>${content}`;
  const message: Json = { role: 'assistant', content, refusal: null };
  if (reasoning.field && thinking) message[reasoning.field] = thinking;

  const tokens: Tokens = { prompt: call.promptTokens, cached: call.cachedTokens, visible: countTokens(content), reasoning };
  const usageBlock = call.vendor.usage(tokens);
  const totalTokens = typeof usageBlock['total_tokens'] === 'number' ? usageBlock['total_tokens'] : 0;
  const body: Json = {
    id: call.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
  };
  if (usage) body['usage'] = usageBlock;
  body['system_fingerprint'] = 'fp_simulator';
  if (call.vendor.extras) Object.assign(body, call.vendor.extras(tokens));
  return { status: 200, headers: responseHeaders(totalTokens), body: JSON.stringify(body) };
}

/** Validates a chat completions request in the dialect of its model (or of `provider`); on success returns a ready-to-answer call. */
function prepareIn(input: unknown, provider: string | undefined): { prepared: Prepared; vendor: VendorProfile } {
  const modelName = isObject(input) && typeof input['model'] === 'string' ? input['model'] : '';
  const vendorId = chatVendorOf(modelName, provider);
  const vendor = VENDORS[vendorId];
  const badRequest = (message: string, param: string | null, code: string | null = null): { prepared: Prepared; vendor: VendorProfile } => ({
    prepared: { ok: false, reply: vendor.error(400, message, { type: 'invalid_request_error', param, code }) },
    vendor,
  });

  if (!isObject(input)) return badRequest('The request body must be a JSON object.', null);
  const body = input;
  const model = body['model'];
  if (typeof model !== 'string' || model === '') {
    return badRequest('you must provide a model parameter', 'model', model === undefined ? 'missing_required_parameter' : null);
  }
  const messages = body['messages'];
  if (!Array.isArray(messages)) return badRequest("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (messages.length === 0) {
    return badRequest("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }

  const hash = createHash('sha1');
  hash.update(model);
  let promptTokens = 0;
  let systemTokens = 0;
  let leadingSystem = true;
  const systemTexts: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    const at = `messages[${i}]`;
    if (!isObject(m)) return badRequest(`Invalid type for '${at}': expected an object.`, at);
    const role = m['role'];
    if (typeof role !== 'string' || !ROLES.has(role)) {
      return badRequest(`Invalid value: '${String(role)}'. Supported values are: 'system', 'developer', 'user', and 'assistant'.`, `${at}.role`, 'invalid_value');
    }
    leadingSystem &&= role === 'system';
    hash.update(SEP + role + SEP);
    promptTokens += PER_MESSAGE_TOKENS;
    const content = m['content'];
    if (typeof content === 'string') {
      hash.update(content);
      promptTokens += countTokens(content);
      if (leadingSystem) systemTokens += countTokens(content);
      if (role === 'system' || role === 'developer') systemTexts.push(content);
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const part: unknown = content[j];
        const pat = `${at}.content[${j}]`;
        if (!isObject(part)) return badRequest(`Invalid type for '${pat}': expected an object.`, pat);
        switch (part['type']) {
          case 'text': {
            const text = part['text'];
            if (typeof text !== 'string') return badRequest(`Invalid type for '${pat}.text': expected a string.`, `${pat}.text`);
            hash.update(`${SEP}t${text}`);
            promptTokens += countTokens(text);
            break;
          }
          case 'image_url': {
            const img = part['image_url'];
            // Mistral takes the URL itself; OpenAI and the others an object with `url`.
            const url = vendorId === 'mistral' && typeof img === 'string' ? img : isObject(img) ? img['url'] : undefined;
            if (typeof url !== 'string') {
              return badRequest(`Missing required parameter: '${pat}.image_url.url'.`, `${pat}.image_url.url`, 'missing_required_parameter');
            }
            hash.update(`${SEP}i${url}`);
            promptTokens += IMAGE_TOKENS;
            break;
          }
          case 'file': {
            if (vendorId !== 'openai') return badRequest(`Invalid value: 'file'. Supported values are: 'text' and 'image_url'.`, `${pat}.type`, 'invalid_value');
            const file = part['file'];
            if (!isObject(file)) return badRequest(`Missing required parameter: '${pat}.file'.`, `${pat}.file`, 'missing_required_parameter');
            hash.update(`${SEP}f${JSON.stringify(file)}`);
            break;
          }
          case 'document_url': {
            const url = part['document_url'];
            if (vendorId !== 'mistral' || typeof url !== 'string') {
              return badRequest(`Invalid value: 'document_url'. Supported values are: 'text', 'image_url', and 'file'.`, `${pat}.type`, 'invalid_value');
            }
            hash.update(`${SEP}d${url}`);
            promptTokens += DOCUMENT_TOKENS;
            break;
          }
          default:
            return badRequest(`Invalid value: '${String(part['type'])}'. Supported values are: 'text', 'image_url', and 'file'.`, `${pat}.type`, 'invalid_value');
        }
      }
    } else if (!((content === null || content === undefined) && role === 'assistant')) {
      return badRequest(`Invalid type for '${at}.content': expected a string or an array of content parts.`, `${at}.content`);
    }
  }

  const numErr = optionalNumber(body, 'temperature', 0, 2) ?? optionalNumber(body, 'top_p', 0, 1);
  if (numErr !== undefined) return badRequest(numErr, numErr.includes("'temperature'") ? 'temperature' : 'top_p');
  const mt = optionalMaxTokens(body, 'max_tokens');
  if (mt.error !== undefined) return badRequest(mt.error, 'max_tokens');
  const mct = optionalMaxTokens(body, 'max_completion_tokens');
  if (mct.error !== undefined) return badRequest(mct.error, 'max_completion_tokens');
  const maxTokens = mt.value === undefined ? mct.value : mct.value === undefined ? mt.value : Math.min(mt.value, mct.value);
  const effort = body['reasoning_effort'];
  if (effort !== undefined && effort !== null && typeof effort !== 'string') {
    return badRequest("Invalid type for 'reasoning_effort': expected a string.", 'reasoning_effort');
  }
  let format = parseFormat(body['response_format']);
  if (typeof format === 'string') return badRequest(format, 'response_format');
  const instructed = format.type === 'text' ? schemaFromInstruction(systemTexts) : undefined;
  if (instructed) format = { type: 'json_schema', schema: instructed };
  const rejected = vendor.check(body, model);
  if (rejected) return { prepared: { ok: false, reply: rejected }, vendor };

  const digest = hash.digest();
  const call: ChatCall = {
    model,
    vendor,
    seed: digest.readUInt32BE(0),
    id: `chatcmpl-${digest.toString('hex', 0, 15)}`,
    promptTokens,
    cachedTokens: vendor.cacheBlock ? Math.floor(systemTokens / vendor.cacheBlock) * vendor.cacheBlock : 0,
    maxTokens,
    format,
    reasoning: vendor.reasoning(body, model),
  };
  return { prepared: { ok: true, model, answer: (opts) => answer(call, opts.usage, opts.structured) }, vendor };
}

/** Validates a chat completions request body; on success returns a ready-to-answer call. */
export function prepareChat(input: unknown, provider?: string): Prepared {
  return prepareIn(input, provider).prepared;
}

/** The protocol module registered by the simulator server. */
export const openAiChat: ProtocolHandler = {
  protocol: 'openai-chat',

  streams: (body) => isObject(body) && body['stream'] === true,
  toStream: chatStream,
  route(method: string, rest: string): boolean {
    return method === 'POST' && rest === CHAT_PATH;
  },

  modelOf(body: unknown): string {
    return isObject(body) && typeof body['model'] === 'string' ? body['model'] : '';
  },

  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    const auth = headers.authorization;
    if (auth === undefined || /^Bearer +\S/.test(auth)) return undefined;
    return openAiError(401, 'Invalid authorization header: expected "Bearer <api key>".', 'invalid_request_error', null, 'invalid_api_key');
  },

  prepare(body: unknown, _rest: string, provider?: string): Prepared {
    return prepareIn(body, provider).prepared;
  },

  invalidJson(): Reply {
    return openAiError(
      400,
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload.)",
      'invalid_request_error',
    );
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown, target?: { provider: string; model: string }): Reply {
    let reply: Reply;
    if (body === undefined) {
      const vendor = VENDORS[chatVendorOf(target?.model ?? '', target?.provider)];
      reply = vendor.fault(status);
    } else {
      reply = { status, headers: responseHeaders(0), body: typeof body === 'string' ? body : JSON.stringify(body) };
    }
    if (retryAfter !== undefined) reply.headers['retry-after'] = retryAfter;
    return reply;
  },
};
