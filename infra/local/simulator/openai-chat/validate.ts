/**
 * The checks of a simulated chat completions request, one per section of the body (model,
 * messages, sampling, limits, reasoning effort, response format, then the dialect's own),
 * each refusing with the dialect's error body, in the order OpenAI reports them.
 */
import { createHash } from 'node:crypto';
import { isObject, type Json } from '../json.js';
import { countTokens, schemaFromInstruction } from '../text.js';
import { isRefusal, type Prepared, type Refusal } from '../types.js';
import { answerChat, type ChatCall, type Format } from './answer.js';
import { type ChatVendor, chatVendorOf, VENDORS } from './dialects.js';

const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant']);
const IMAGE_TOKENS = 85;
const DOCUMENT_TOKENS = 258;
const PER_MESSAGE_TOKENS = 4;
const SEP = '\u0000';

/** A 400 in the dialect's shape: `invalid_request_error` naming the parameter. */
type Refuse = (message: string, param: string | null, code?: string | null) => Refusal;

/** What the messages give the answer: the prompt's hash and tokens, and the system texts. */
interface PromptRead {
  digest: Buffer;
  promptTokens: number;
  /** Tokens of the leading system messages (what a warm cache holds). */
  systemTokens: number;
  systemTexts: string[];
}

function readModel(body: Json, refuse: Refuse): string | Refusal {
  const model = body['model'];
  if (typeof model !== 'string' || model === '') {
    return refuse('you must provide a model parameter', 'model', model === undefined ? 'missing_required_parameter' : null);
  }
  return model;
}

/** One content part of a message: its hash key and tokens. */
function readPart(part: unknown, pat: string, vendorId: ChatVendor, refuse: Refuse): { key: string; tokens: number } | Refusal {
  if (!isObject(part)) return refuse(`Invalid type for '${pat}': expected an object.`, pat);
  switch (part['type']) {
    case 'text': {
      const text = part['text'];
      if (typeof text !== 'string') return refuse(`Invalid type for '${pat}.text': expected a string.`, `${pat}.text`);
      return { key: `${SEP}t${text}`, tokens: countTokens(text) };
    }
    case 'image_url': {
      const img = part['image_url'];
      // Mistral takes the URL itself; OpenAI and the others an object with `url`.
      const url = vendorId === 'mistral' && typeof img === 'string' ? img : isObject(img) ? img['url'] : undefined;
      if (typeof url !== 'string') return refuse(`Missing required parameter: '${pat}.image_url.url'.`, `${pat}.image_url.url`, 'missing_required_parameter');
      return { key: `${SEP}i${url}`, tokens: IMAGE_TOKENS };
    }
    case 'file': {
      if (vendorId !== 'openai') return refuse(`Invalid value: 'file'. Supported values are: 'text' and 'image_url'.`, `${pat}.type`, 'invalid_value');
      const file = part['file'];
      if (!isObject(file)) return refuse(`Missing required parameter: '${pat}.file'.`, `${pat}.file`, 'missing_required_parameter');
      return { key: `${SEP}f${JSON.stringify(file)}`, tokens: 0 };
    }
    case 'document_url': {
      const url = part['document_url'];
      if (vendorId !== 'mistral' || typeof url !== 'string') {
        return refuse(`Invalid value: 'document_url'. Supported values are: 'text', 'image_url', and 'file'.`, `${pat}.type`, 'invalid_value');
      }
      return { key: `${SEP}d${url}`, tokens: DOCUMENT_TOKENS };
    }
    default:
      return refuse(`Invalid value: '${String(part['type'])}'. Supported values are: 'text', 'image_url', and 'file'.`, `${pat}.type`, 'invalid_value');
  }
}

function readMessages(body: Json, model: string, vendorId: ChatVendor, refuse: Refuse): PromptRead | Refusal {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return refuse("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (messages.length === 0) {
    return refuse("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  const hash = createHash('sha1');
  hash.update(model);
  const read = { promptTokens: 0, systemTokens: 0, systemTexts: [] as string[] };
  let leadingSystem = true;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    const at = `messages[${i}]`;
    if (!isObject(m)) return refuse(`Invalid type for '${at}': expected an object.`, at);
    const role = m['role'];
    if (typeof role !== 'string' || !ROLES.has(role)) {
      return refuse(`Invalid value: '${String(role)}'. Supported values are: 'system', 'developer', 'user', and 'assistant'.`, `${at}.role`, 'invalid_value');
    }
    leadingSystem &&= role === 'system';
    hash.update(SEP + role + SEP);
    read.promptTokens += PER_MESSAGE_TOKENS;
    const content = m['content'];
    if (typeof content === 'string') {
      hash.update(content);
      read.promptTokens += countTokens(content);
      if (leadingSystem) read.systemTokens += countTokens(content);
      if (role === 'system' || role === 'developer') read.systemTexts.push(content);
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const part = readPart(content[j], `${at}.content[${j}]`, vendorId, refuse);
        if (isRefusal(part)) return part;
        hash.update(part.key);
        read.promptTokens += part.tokens;
      }
    } else if (!((content === null || content === undefined) && role === 'assistant')) {
      return refuse(`Invalid type for '${at}.content': expected a string or an array of content parts.`, `${at}.content`);
    }
  }
  return { ...read, digest: hash.digest() };
}

function optionalNumber(body: Json, key: string, min: number, max: number, refuse: Refuse): Refusal | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return refuse(`Invalid type for '${key}': expected a number, but got ${typeof v} instead.`, key);
  if (v < min || v > max) return refuse(`Invalid '${key}': expected a value between ${min} and ${max}, but got ${v} instead.`, key);
  return undefined;
}

function checkSampling(body: Json, refuse: Refuse): Refusal | undefined {
  return optionalNumber(body, 'temperature', 0, 2, refuse) ?? optionalNumber(body, 'top_p', 0, 1, refuse);
}

function optionalMaxTokens(body: Json, key: string, refuse: Refuse): number | undefined | Refusal {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) return refuse(`Invalid type for '${key}': expected an integer.`, key);
  if (v < 1) return refuse(`Invalid '${key}': integer below minimum value. Expected a value >= 1, but got ${v} instead.`, key);
  return v;
}

/** The output limit: the smaller of `max_tokens` and `max_completion_tokens` when both are set. */
function readLimits(body: Json, refuse: Refuse): number | undefined | Refusal {
  const legacy = optionalMaxTokens(body, 'max_tokens', refuse);
  if (isRefusal(legacy)) return legacy;
  const completion = optionalMaxTokens(body, 'max_completion_tokens', refuse);
  if (isRefusal(completion)) return completion;
  return legacy === undefined ? completion : completion === undefined ? legacy : Math.min(legacy, completion);
}

function checkReasoningEffort(body: Json, refuse: Refuse): Refusal | undefined {
  const effort = body['reasoning_effort'];
  if (effort !== undefined && effort !== null && typeof effort !== 'string') return refuse("Invalid type for 'reasoning_effort': expected a string.", 'reasoning_effort');
  return undefined;
}

/** `response_format`, else a JSON Schema line the system messages end with (the gateway's instruction). */
function readFormat(body: Json, systemTexts: readonly string[], refuse: Refuse): Format | Refusal {
  const v = body['response_format'];
  const problem = (message: string): Refusal => refuse(message, 'response_format');
  let format: Format;
  if (v === undefined || v === null) format = { type: 'text' };
  else if (!isObject(v)) return problem("Invalid type for 'response_format': expected an object.");
  else if (v['type'] === 'text' || v['type'] === 'json_object') format = { type: v['type'] };
  else if (v['type'] === 'json_schema') {
    const js = v['json_schema'];
    if (!isObject(js)) return problem("Missing required parameter: 'response_format.json_schema'.");
    if (typeof js['name'] !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(js['name'])) {
      return problem("Invalid 'response_format.json_schema.name': expected a string of 1-64 letters, digits, '_' or '-'.");
    }
    if (js['schema'] !== undefined && !isObject(js['schema'])) return problem("Invalid type for 'response_format.json_schema.schema': expected an object.");
    if (js['strict'] !== undefined && js['strict'] !== null && typeof js['strict'] !== 'boolean') {
      return problem("Invalid type for 'response_format.json_schema.strict': expected a boolean.");
    }
    format = { type: 'json_schema', schema: js['schema'] ?? {} };
  } else return problem("Invalid value for 'response_format.type': supported values are 'text', 'json_object' and 'json_schema'.");
  const instructed = format.type === 'text' ? schemaFromInstruction(systemTexts) : undefined;
  return instructed ? { type: 'json_schema', schema: instructed } : format;
}

/** Validates a chat completions request in the dialect of its model (or of `provider`); on success a ready-to-answer call. */
export function validateChat(input: unknown, provider: string | undefined): Prepared {
  const modelName = isObject(input) && typeof input['model'] === 'string' ? input['model'] : '';
  const vendorId = chatVendorOf(modelName, provider);
  const vendor = VENDORS[vendorId];
  const refuse: Refuse = (message, param, code = null) => ({ ok: false, reply: vendor.error(400, message, { type: 'invalid_request_error', param, code }) });

  if (!isObject(input)) return refuse('The request body must be a JSON object.', null);
  const model = readModel(input, refuse);
  if (isRefusal(model)) return model;
  const prompt = readMessages(input, model, vendorId, refuse);
  if (isRefusal(prompt)) return prompt;
  const sampling = checkSampling(input, refuse);
  if (sampling) return sampling;
  const maxTokens = readLimits(input, refuse);
  if (isRefusal(maxTokens)) return maxTokens;
  const effort = checkReasoningEffort(input, refuse);
  if (effort) return effort;
  // The end user's identifier for the vendor's abuse detection (OpenAI's older field, which xAI, Groq and Cerebras take).
  const user = input['user'];
  if (user !== undefined && user !== null && typeof user !== 'string')
    return refuse(`Invalid type for 'user': expected a string, but got ${typeof user} instead.`, 'user', 'invalid_type');
  const format = readFormat(input, prompt.systemTexts, refuse);
  if (isRefusal(format)) return format;
  const rejected = vendor.check(input, model);
  if (rejected) return { ok: false, reply: rejected };

  const call: ChatCall = {
    model,
    vendor,
    seed: prompt.digest.readUInt32BE(0),
    id: `chatcmpl-${prompt.digest.toString('hex', 0, 15)}`,
    promptTokens: prompt.promptTokens,
    cachedTokens: vendor.cacheBlock ? Math.floor(prompt.systemTokens / vendor.cacheBlock) * vendor.cacheBlock : 0,
    maxTokens,
    format,
    reasoning: vendor.reasoning(input, model),
  };
  return { ok: true, model, answer: (opts) => answerChat(call, opts.usage, opts.structured) };
}
