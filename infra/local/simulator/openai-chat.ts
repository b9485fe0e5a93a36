/**
 * OpenAI-compatible chat completions protocol for the provider simulator:
 * `POST /{provider}/v1/chat/completions`.
 *
 * Validates the OpenAI request shape, answers in the exact `chat.completion`
 * shape with deterministic content, and shapes errors like OpenAI does.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Prepared, ProtocolHandler, Reply } from './server.js';
import { countTokens, generateFromSchema, generateParagraph, truncateToTokens } from './text.js';

type Json = Record<string, unknown>;

function isObject(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

let requestSeq = 0;

/** Headers OpenAI sends with every answer (rate-limit headers included). */
function responseHeaders(totalTokens: number): Record<string, string> {
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
export function openAiError(
  status: number,
  message: string,
  type = 'invalid_request_error',
  param: string | null = null,
  code: string | null = null,
): Reply {
  return {
    status,
    headers: responseHeaders(0),
    body: JSON.stringify({ error: { message, type, param, code } }),
  };
}

function badRequest(message: string, param: string | null, code: string | null = null): Prepared {
  return { ok: false, reply: openAiError(400, message, 'invalid_request_error', param, code) };
}

/** The error `type` OpenAI uses for a status. */
export function errorTypeFor(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant']);
const IMAGE_TOKENS = 85;
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
  seed: number;
  id: string;
  promptTokens: number;
  maxTokens: number | undefined;
  format: Format;
}

function answer(call: ChatCall, usage: boolean): Reply {
  let content: string;
  switch (call.format.type) {
    case 'json_schema':
      content = JSON.stringify(generateFromSchema(call.format.schema, call.seed));
      break;
    case 'json_object':
      content = JSON.stringify({ answer: generateParagraph(call.model, call.seed) });
      break;
    default:
      content = generateParagraph(call.model, call.seed);
  }
  let finishReason: 'stop' | 'length' = 'stop';
  if (call.maxTokens !== undefined && countTokens(content) > call.maxTokens) {
    content = truncateToTokens(content, call.maxTokens);
    finishReason = 'length';
  }
  const completionTokens = countTokens(content);
  const totalTokens = call.promptTokens + completionTokens;
  const body: Json = {
    id: call.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
  };
  if (usage) {
    body['usage'] = {
      prompt_tokens: call.promptTokens,
      completion_tokens: completionTokens,
      total_tokens: totalTokens,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
  }
  body['system_fingerprint'] = 'fp_simulator';
  return { status: 200, headers: responseHeaders(totalTokens), body: JSON.stringify(body) };
}

/** Validates a chat completions request body; on success returns a ready-to-answer call. */
export function prepareChat(input: unknown): Prepared {
  if (!isObject(input)) return badRequest('The request body must be a JSON object.', null);
  const body = input;
  const model = body['model'];
  if (typeof model !== 'string' || model === '') {
    return badRequest('you must provide a model parameter', 'model', model === undefined ? 'missing_required_parameter' : null);
  }
  if (body['stream'] === true) return badRequest('streaming not supported by simulator', 'stream', 'unsupported_parameter');
  const messages = body['messages'];
  if (!Array.isArray(messages)) return badRequest("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (messages.length === 0) {
    return badRequest("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }

  const hash = createHash('sha1');
  hash.update(model);
  let promptTokens = 0;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    const at = `messages[${i}]`;
    if (!isObject(m)) return badRequest(`Invalid type for '${at}': expected an object.`, at);
    const role = m['role'];
    if (typeof role !== 'string' || !ROLES.has(role)) {
      return badRequest(
        `Invalid value: '${String(role)}'. Supported values are: 'system', 'developer', 'user', and 'assistant'.`,
        `${at}.role`,
        'invalid_value',
      );
    }
    hash.update(SEP + role + SEP);
    promptTokens += PER_MESSAGE_TOKENS;
    const content = m['content'];
    if (typeof content === 'string') {
      hash.update(content);
      promptTokens += countTokens(content);
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const part: unknown = content[j];
        const pat = `${at}.content[${j}]`;
        if (!isObject(part)) return badRequest(`Invalid type for '${pat}': expected an object.`, pat);
        switch (part['type']) {
          case 'text': {
            const text = part['text'];
            if (typeof text !== 'string') return badRequest(`Invalid type for '${pat}.text': expected a string.`, `${pat}.text`);
            hash.update(SEP + 't' + text);
            promptTokens += countTokens(text);
            break;
          }
          case 'image_url': {
            const img = part['image_url'];
            if (!isObject(img) || typeof img['url'] !== 'string') {
              return badRequest(`Missing required parameter: '${pat}.image_url.url'.`, `${pat}.image_url.url`, 'missing_required_parameter');
            }
            hash.update(SEP + 'i' + img['url']);
            promptTokens += IMAGE_TOKENS;
            break;
          }
          case 'file': {
            const file = part['file'];
            if (!isObject(file)) return badRequest(`Missing required parameter: '${pat}.file'.`, `${pat}.file`, 'missing_required_parameter');
            hash.update(SEP + 'f' + JSON.stringify(file));
            break;
          }
          default:
            return badRequest(
              `Invalid value: '${String(part['type'])}'. Supported values are: 'text', 'image_url', and 'file'.`,
              `${pat}.type`,
              'invalid_value',
            );
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
  const format = parseFormat(body['response_format']);
  if (typeof format === 'string') return badRequest(format, 'response_format');

  const digest = hash.digest();
  const call: ChatCall = {
    model,
    seed: digest.readUInt32BE(0),
    id: 'chatcmpl-' + digest.toString('hex', 0, 15),
    promptTokens,
    maxTokens,
    format,
  };
  return { ok: true, model, answer: (opts) => answer(call, opts.usage) };
}

/** The protocol module registered by the simulator server. */
export const openAiChat: ProtocolHandler = {
  protocol: 'openai-chat',

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

  prepare(body: unknown): Prepared {
    return prepareChat(body);
  },

  invalidJson(): Reply {
    return openAiError(
      400,
      'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly. The OpenAI API expects a JSON payload.)',
      'invalid_request_error',
    );
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const headers = responseHeaders(0);
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    let text: string;
    if (body === undefined) {
      text = JSON.stringify({ error: { message: `Simulated upstream error ${status}`, type: errorTypeFor(status), code: null } });
    } else {
      text = typeof body === 'string' ? body : JSON.stringify(body);
    }
    return { status, headers, body: text };
  },
};
