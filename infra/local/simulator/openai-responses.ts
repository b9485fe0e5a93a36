/**
 * OpenAI Responses API protocol for the provider simulator: `POST /{provider}/v1/responses`.
 *
 * Validates the request like OpenAI (the message input items, content parts, sampling and
 * reasoning settings per model family, strict json_schema formats), answers in the exact
 * Responses object shape with deterministic content, and reports usage as OpenAI does:
 * reasoning tokens inside output_tokens, automatic prefix caching inside input_tokens.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { simulatedOpenAiChat as openAiChat } from './openai-chat/index.js';
import { openAiHeaders as responseHeaders, simulatedOpenAiError as openAiError } from './openai-chat/errors.js';
import type { Prepared, ProtocolHandler, Reply } from './types.js';
import { countTokens, generateFromSchema, generateParagraph, truncateToTokens } from './text.js';
import { isObject, type Json } from './json.js';
import { PrefixCache } from './prefix-cache.js';
import { strictProblem } from './strict-schema.js';
import { responsesStream } from './openai-responses-stream.js';

const RESPONSES_PATH = '/v1/responses';
const SEP = '\u0000';
const PER_MESSAGE_TOKENS = 4;
const IMAGE_TOKENS = 85;
const FILE_TOKENS = 256;
const MIN_OUTPUT_TOKENS = 16;
/** OpenAI caches prompt prefixes from 1,024 tokens on, in steps of 128. */
const CACHE_MIN_TOKENS = 1024;
const CACHE_STEP_TOKENS = 128;
/** Prefix hashes remembered for automatic caching, oldest forgotten first. */
const CACHE_CAPACITY = 20_000;
/** Reasoning tokens spent per effort (reported inside output_tokens). */
const REASONING_TOKENS: Readonly<Record<string, number>> = { none: 0, minimal: 16, low: 64, medium: 256, high: 1024, xhigh: 2048 };
const INPUT_ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'developer']);
const IMAGE_DETAILS: ReadonlySet<string> = new Set(['auto', 'low', 'high', 'original']);

function badRequest(message: string, param: string | null, code: string | null = null): Prepared {
  return { ok: false, reply: openAiError(400, message, 'invalid_request_error', param, code) };
}

// ---------------------------------------------------------------------------
// Model families, as OpenAI treats them
// ---------------------------------------------------------------------------

interface Family {
  /** o-series and GPT-5 and later (not the -chat variants): take `reasoning`, refuse sampling while reasoning. */
  reasoning: boolean;
  /** GPT-5.1 and later, not -pro: take effort `none` (their default) and then accept sampling. */
  effortNone: boolean;
  /** GPT-3.5/4 family: refuse `reasoning`. */
  classic: boolean;
}

export function familyOf(model: string): Family {
  if (/^o\d+(?:-|$)/.test(model)) return { reasoning: true, effortNone: false, classic: false };
  // gpt-4o, gpt-4.1-mini, gpt-5, gpt-5.4-pro, gpt-5-chat-latest: major, optional minor, then the variant.
  const gpt = /^gpt-(\d+)(?:\.(\d+))?-?(.*)$/.exec(model);
  if (gpt) {
    const major = Number(gpt[1]);
    const minor = Number(gpt[2] ?? 0);
    const variant = gpt[3] ?? '';
    if (major <= 4) return { reasoning: false, effortNone: false, classic: true };
    if (!variant.startsWith('chat')) return { reasoning: true, effortNone: (major > 5 || minor >= 1) && !variant.startsWith('pro'), classic: false };
    return { reasoning: false, effortNone: false, classic: true };
  }
  if (model.startsWith('chatgpt-')) return { reasoning: false, effortNone: false, classic: true };
  return { reasoning: false, effortNone: false, classic: false };
}

// ---------------------------------------------------------------------------
// Automatic prefix caching
// ---------------------------------------------------------------------------

/** Prefix hashes seen in answered requests (per model). */
const seenPrefixes = new PrefixCache(CACHE_CAPACITY);

interface Prefix {
  hash: string;
  tokens: number;
}

function cachedTokensFor(prefixes: readonly Prefix[]): number {
  let cached = 0;
  for (const prefix of prefixes) {
    if (prefix.tokens >= CACHE_MIN_TOKENS && seenPrefixes.has(prefix.hash)) cached = prefix.tokens;
  }
  return Math.floor(cached / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS;
}

function remember(prefixes: readonly Prefix[]): void {
  for (const prefix of prefixes) {
    if (prefix.tokens >= CACHE_MIN_TOKENS) seenPrefixes.remember(prefix.hash);
  }
}

// ---------------------------------------------------------------------------
// Request validation
// ---------------------------------------------------------------------------

/** The input as segments (instructions, then one per message), each hashed cumulatively. */
class InputDigest {
  readonly prefixes: Prefix[] = [];
  private readonly hash = createHash('sha1');
  private tokens = 0;

  constructor(model: string) {
    this.hash.update(model);
  }

  add(key: string, tokens: number): void {
    this.hash.update(SEP + key);
    this.tokens += tokens;
    this.prefixes.push({ hash: this.hash.copy().digest('hex'), tokens: this.tokens });
  }

  get totalTokens(): number {
    return this.tokens;
  }

  final(): Buffer {
    return this.hash.digest();
  }
}

/** One content part of a message: its hash key and tokens, or an error reply. */
function contentPart(part: unknown, at: string, role: string): { key: string; tokens: number } | Prepared {
  if (!isObject(part)) return badRequest(`Invalid type for '${at}': expected an object.`, at);
  const type = part['type'];
  if (role === 'assistant') {
    if (type === 'output_text') {
      if (typeof part['text'] !== 'string') return badRequest(`Invalid type for '${at}.text': expected a string.`, `${at}.text`);
      return { key: `o${part['text']}`, tokens: countTokens(part['text']) };
    }
    if (type === 'refusal') {
      if (typeof part['refusal'] !== 'string') return badRequest(`Invalid type for '${at}.refusal': expected a string.`, `${at}.refusal`);
      return { key: `r${part['refusal']}`, tokens: countTokens(part['refusal']) };
    }
    return badRequest(`Invalid value: '${String(type)}'. Supported values are: 'output_text' and 'refusal'.`, `${at}.type`, 'invalid_value');
  }
  switch (type) {
    case 'input_text':
      if (typeof part['text'] !== 'string') return badRequest(`Invalid type for '${at}.text': expected a string.`, `${at}.text`);
      return { key: `t${part['text']}`, tokens: countTokens(part['text']) };
    case 'input_image': {
      const url = part['image_url'];
      const fileId = part['file_id'];
      if (typeof url !== 'string' && typeof fileId !== 'string') {
        return badRequest(`Missing required parameter: '${at}.image_url'.`, `${at}.image_url`, 'missing_required_parameter');
      }
      const detail = part['detail'];
      if (detail !== undefined && detail !== null && (typeof detail !== 'string' || !IMAGE_DETAILS.has(detail))) {
        return badRequest(`Invalid value: '${String(detail)}'. Supported values are: 'low', 'high', 'auto', and 'original'.`, `${at}.detail`, 'invalid_value');
      }
      if (typeof url === 'string' && !/^(https?:\/\/|data:image\/[a-z+.-]+;base64,)/.test(url)) {
        return badRequest(`Invalid '${at}.image_url'. Expected a base64-encoded data URL with an image MIME type or a valid URL.`, `${at}.image_url`, 'invalid_value');
      }
      return { key: `i${String(url ?? fileId)}`, tokens: IMAGE_TOKENS };
    }
    case 'input_file': {
      const data = part['file_data'];
      if (typeof data === 'string') {
        if (typeof part['filename'] !== 'string' || part['filename'] === '') {
          return badRequest(`Missing required parameter: '${at}.filename'.`, `${at}.filename`, 'missing_required_parameter');
        }
        if (!/^data:[a-z]+\/[a-z0-9.+-]+;base64,/.test(data)) {
          return badRequest(`Invalid '${at}.file_data'. Expected a base64-encoded data URL.`, `${at}.file_data`, 'invalid_value');
        }
        return { key: `f${part['filename']}${SEP}${data}`, tokens: FILE_TOKENS };
      }
      if (typeof part['file_id'] === 'string' || typeof part['file_url'] === 'string') {
        return { key: `f${String(part['file_id'] ?? part['file_url'])}`, tokens: FILE_TOKENS };
      }
      return badRequest(`Missing required parameter: '${at}.file_data'.`, `${at}.file_data`, 'missing_required_parameter');
    }
    default:
      return badRequest(`Invalid value: '${String(type)}'. Supported values are: 'input_text', 'input_image', and 'input_file'.`, `${at}.type`, 'invalid_value');
  }
}

/** Adds every input message to the digest; an error reply when an item is not a valid message. */
function digestInput(input: unknown, digest: InputDigest): Prepared | undefined {
  if (typeof input === 'string') {
    digest.add(`user${SEP}${input}`, PER_MESSAGE_TOKENS + countTokens(input));
    return undefined;
  }
  if (!Array.isArray(input)) return badRequest("Invalid type for 'input': expected a string or an array of input items.", 'input');
  if (input.length === 0) return badRequest("Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'input', 'empty_array');
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const at = `input[${i}]`;
    if (!isObject(item)) return badRequest(`Invalid type for '${at}': expected an object.`, at);
    if (item['type'] !== undefined && item['type'] !== 'message') {
      return badRequest(`Invalid value: '${String(item['type'])}'. The simulator supports message input items only.`, `${at}.type`, 'invalid_value');
    }
    const role = item['role'];
    if (typeof role !== 'string' || !INPUT_ROLES.has(role)) {
      return badRequest(`Invalid value: '${String(role)}'. Supported values are: 'user', 'assistant', 'system', and 'developer'.`, `${at}.role`, 'invalid_value');
    }
    const content = item['content'];
    let key = role + SEP;
    let tokens = PER_MESSAGE_TOKENS;
    if (typeof content === 'string') {
      key += content;
      tokens += countTokens(content);
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const part = contentPart(content[j], `${at}.content[${j}]`, role);
        if ('ok' in part) return part;
        key += SEP + part.key;
        tokens += part.tokens;
      }
    } else {
      return badRequest(`Invalid type for '${at}.content': expected a string or an array of content parts.`, `${at}.content`);
    }
    digest.add(key, tokens);
  }
  return undefined;
}

function optionalNumber(body: Json, key: string, min: number, max: number): Prepared | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return badRequest(`Invalid type for '${key}': expected a number, but got ${typeof v} instead.`, key, 'invalid_type');
  if (v < min || v > max) {
    const code = v < min ? 'decimal_below_min_value' : 'decimal_above_max_value';
    return badRequest(`Invalid '${key}': expected a value between ${min} and ${max}, but got ${v} instead.`, key, code);
  }
  return undefined;
}

type Format = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Json; strict: boolean };

function parseFormat(text: unknown): Format | Prepared {
  if (text === undefined || text === null) return { type: 'text' };
  if (!isObject(text)) return badRequest("Invalid type for 'text': expected an object.", 'text');
  const format = text['format'];
  if (format === undefined || format === null) return { type: 'text' };
  if (!isObject(format)) return badRequest("Invalid type for 'text.format': expected an object.", 'text.format');
  switch (format['type']) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const name = format['name'];
      if (typeof name !== 'string') return badRequest("Missing required parameter: 'text.format.name'.", 'text.format.name', 'missing_required_parameter');
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
        return badRequest(
          "Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
          'text.format.name',
          'invalid_value',
        );
      }
      const schema = format['schema'];
      if (!isObject(schema)) return badRequest("Missing required parameter: 'text.format.schema'.", 'text.format.schema', 'missing_required_parameter');
      const strict = format['strict'];
      if (strict !== undefined && strict !== null && typeof strict !== 'boolean') {
        return badRequest("Invalid type for 'text.format.strict': expected a boolean.", 'text.format.strict', 'invalid_type');
      }
      if (strict === true) {
        const problem = strictProblem(schema, []);
        if (problem) return badRequest(`Invalid schema for response_format '${name}': ${problem}`, 'text.format.schema', 'invalid_json_schema');
      }
      return { type: 'json_schema', name, schema, strict: strict === true };
    }
    default:
      return badRequest(`Invalid value: '${String(format['type'])}'. Supported values are: 'text', 'json_object', and 'json_schema'.`, 'text.format.type', 'invalid_value');
  }
}

interface ResponsesCall {
  model: string;
  seed: number;
  id: string;
  itemId: string;
  inputTokens: number;
  prefixes: Prefix[];
  instructions: string | null;
  maxOutputTokens: number | null;
  effort: string | null;
  summary: string | null;
  temperature: number;
  topP: number;
  store: boolean;
  format: Format;
  metadata: Json;
}

/** Validates a Responses API request body; on success returns a ready-to-answer call. */
export function prepareResponses(input: unknown): Prepared {
  if (!isObject(input)) return badRequest('The request body must be a JSON object.', null);
  const body = input;
  const model = body['model'];
  if (typeof model !== 'string' || model === '') {
    return badRequest("Missing required parameter: 'model'.", 'model', model === undefined ? 'missing_required_parameter' : 'invalid_type');
  }
  for (const unsupported of ['previous_response_id', 'conversation', 'prompt', 'background'] as const) {
    const v = body[unsupported];
    if (v !== undefined && v !== null && v !== false) {
      return badRequest(`'${unsupported}' is not supported by the simulator.`, unsupported, 'unsupported_parameter');
    }
  }
  if (body['input'] === undefined || body['input'] === null) {
    return badRequest("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  }

  const instructions = body['instructions'];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    return badRequest("Invalid type for 'instructions': expected a string.", 'instructions', 'invalid_type');
  }
  const digest = new InputDigest(model);
  if (typeof instructions === 'string' && instructions !== '') digest.add(`instructions${SEP}${instructions}`, PER_MESSAGE_TOKENS + countTokens(instructions));
  const inputError = digestInput(body['input'], digest);
  if (inputError) return inputError;

  const numberError = optionalNumber(body, 'temperature', 0, 2) ?? optionalNumber(body, 'top_p', 0, 1);
  if (numberError) return numberError;
  const maxOut = body['max_output_tokens'];
  if (maxOut !== undefined && maxOut !== null) {
    if (typeof maxOut !== 'number' || !Number.isInteger(maxOut)) {
      return badRequest(`Invalid type for 'max_output_tokens': expected an integer, but got ${typeof maxOut} instead.`, 'max_output_tokens', 'invalid_type');
    }
    if (maxOut < MIN_OUTPUT_TOKENS) {
      return badRequest(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${maxOut} instead.`,
        'max_output_tokens',
        'integer_below_min_value',
      );
    }
  }
  const store = body['store'];
  if (store !== undefined && store !== null && typeof store !== 'boolean') return badRequest("Invalid type for 'store': expected a boolean.", 'store', 'invalid_type');
  const metadata = body['metadata'];
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) return badRequest("Invalid type for 'metadata': expected an object.", 'metadata', 'invalid_type');

  const family = familyOf(model);
  let effort: string | null = null;
  let summary: string | null = null;
  const reasoning = body['reasoning'];
  if (reasoning !== undefined && reasoning !== null) {
    if (!isObject(reasoning)) return badRequest("Invalid type for 'reasoning': expected an object.", 'reasoning', 'invalid_type');
    const e = reasoning['effort'];
    if (e !== undefined && e !== null) {
      if (typeof e !== 'string' || !(e in REASONING_TOKENS)) {
        return badRequest(`Invalid value: '${String(e)}'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', and 'xhigh'.`, 'reasoning.effort', 'invalid_value');
      }
      if (family.classic) return badRequest("Unsupported parameter: 'reasoning.effort' is not supported with this model.", 'reasoning.effort', 'unsupported_parameter');
      if (e === 'none' && family.reasoning && !family.effortNone) {
        return badRequest(`Unsupported value: 'none' is not supported with the '${model}' model.`, 'reasoning.effort', 'unsupported_value');
      }
      effort = e;
    }
    const s = reasoning['summary'];
    if (s !== undefined && s !== null) {
      if (typeof s !== 'string') return badRequest("Invalid type for 'reasoning.summary': expected a string.", 'reasoning.summary', 'invalid_type');
      summary = s;
    }
  }
  if (family.reasoning) {
    const sampling = family.effortNone && (effort === null || effort === 'none');
    for (const key of ['temperature', 'top_p'] as const) {
      if (body[key] !== undefined && body[key] !== null && !sampling) {
        return badRequest(`Unsupported parameter: '${key}' is not supported with this model.`, key, 'unsupported_parameter');
      }
    }
  }
  const format = parseFormat(body['text']);
  if ('ok' in format) return format;

  const digestBytes = digest.final();
  const call: ResponsesCall = {
    model,
    seed: digestBytes.readUInt32BE(0),
    id: `resp_${digestBytes.toString('hex')}`,
    itemId: digestBytes.toString('hex', 0, 16),
    inputTokens: digest.totalTokens,
    prefixes: digest.prefixes,
    instructions: typeof instructions === 'string' ? instructions : null,
    maxOutputTokens: typeof maxOut === 'number' ? maxOut : null,
    effort,
    summary,
    temperature: typeof body['temperature'] === 'number' ? body['temperature'] : 1,
    topP: typeof body['top_p'] === 'number' ? body['top_p'] : 1,
    store: store !== false,
    format,
    metadata: isObject(metadata) ? metadata : {},
  };
  return { ok: true, model, answer: (opts) => answer(call, opts.usage, opts.structured) };
}

// ---------------------------------------------------------------------------
// Answer
// ---------------------------------------------------------------------------

function content(call: ResponsesCall, structured?: Json): string {
  switch (call.format.type) {
    case 'json_schema':
      return JSON.stringify(structured ?? generateFromSchema(call.format.schema, call.seed));
    case 'json_object':
      return JSON.stringify({ answer: generateParagraph(call.model, call.seed) });
    default:
      return generateParagraph(call.model, call.seed);
  }
}

function answer(call: ResponsesCall, withUsage: boolean, structured?: Json): Reply {
  const cachedTokens = cachedTokensFor(call.prefixes);
  remember(call.prefixes);

  const limit = call.maxOutputTokens ?? Infinity;
  const wantedReasoning = call.effort === null ? 0 : (REASONING_TOKENS[call.effort] ?? 0);
  const reasoningTokens = Math.min(wantedReasoning, limit);
  let text: string | undefined = content(call, structured);
  let incomplete = false;
  const room = limit - reasoningTokens;
  if (room <= 0) {
    text = undefined;
    incomplete = true;
  } else if (countTokens(text) > room) {
    text = truncateToTokens(text, room);
    incomplete = true;
  }
  const outputTokens = reasoningTokens + (text === undefined ? 0 : countTokens(text));

  const output: Json[] = [];
  if (call.effort !== null) output.push({ id: `rs_${call.itemId}`, type: 'reasoning', summary: [] });
  if (text !== undefined) {
    output.push({
      id: `msg_${call.itemId}`,
      type: 'message',
      status: incomplete ? 'incomplete' : 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
      role: 'assistant',
    });
  }
  const format =
    call.format.type === 'json_schema'
      ? { type: 'json_schema', description: null, name: call.format.name, schema: call.format.schema, strict: call.format.strict }
      : { type: call.format.type };
  const body: Json = {
    id: call.id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: call.instructions,
    max_output_tokens: call.maxOutputTokens,
    max_tool_calls: null,
    model: call.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: call.effort, summary: call.summary },
    safety_identifier: null,
    service_tier: 'default',
    store: call.store,
    temperature: call.temperature,
    text: { format, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_logprobs: 0,
    top_p: call.topP,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: call.metadata,
  };
  if (withUsage) {
    body['usage'] = {
      input_tokens: call.inputTokens,
      input_tokens_details: { cached_tokens: cachedTokens },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: call.inputTokens + outputTokens,
    };
  } else {
    delete body['usage'];
  }
  return { status: 200, headers: responseHeaders(call.inputTokens + outputTokens), body: JSON.stringify(body) };
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/** OpenAI's documented error body for a status (`{"error":{"message","type","param","code"}}`). */
function defaultError(status: number): Json {
  if (status === 429) {
    return {
      message: 'Rate limit reached for requests per min (RPM): Limit 10000, Used 10000, Requested 1. Please try again in 6ms.',
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    };
  }
  if (status === 401) {
    return {
      message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    };
  }
  if (status === 503) {
    return { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: null };
  }
  if (status >= 500) {
    return { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null };
  }
  return { message: `Simulated upstream error ${status}`, type: 'invalid_request_error', param: null, code: null };
}

/** The protocol module registered by the simulator server. */
export const openAiResponses: ProtocolHandler = {
  /** A cold prompt cache again. */
  reset: () => seenPrefixes.clear(),

  protocol: 'openai-responses',

  streams: (body) => isObject(body) && body['stream'] === true,
  toStream: responsesStream,
  route(method: string, rest: string): boolean {
    return method === 'POST' && rest === RESPONSES_PATH;
  },

  modelOf(body: unknown): string {
    return isObject(body) && typeof body['model'] === 'string' ? body['model'] : '';
  },

  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    return openAiChat.authorize(headers);
  },

  prepare(body: unknown): Prepared {
    return prepareResponses(body);
  },

  invalidJson(): Reply {
    return openAiChat.invalidJson();
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const headers = responseHeaders(0);
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    const text = body === undefined ? JSON.stringify({ error: defaultError(status) }) : typeof body === 'string' ? body : JSON.stringify(body);
    return { status, headers, body: text };
  },
};
