/**
 * Gemini `generateContent` protocol for the provider simulator:
 * `POST /{provider}/v1/models/{model}:generateContent` and `/v1beta/...` (the model is in the path).
 *
 * Validates the request as Gemini does (unknown fields, empty contents, role names,
 * thinkingLevel with thinkingBudget, cachedContent with systemInstruction or tools, levels a
 * model does not support), answers in the GenerateContentResponse shape with deterministic
 * text, and shapes errors as Google does: `{"error":{"code","message","status","details"}}`.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Prepared, ProtocolHandler, Reply } from './types.js';
import { countTokens, generateFromSchema, generateParagraph, truncateToTokens } from './text.js';
import { isObject, type Json } from './json.js';
import { generateContentStream } from './gemini-stream.js';

const PATH = /^\/(v1|v1beta)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
/** Tokens Gemini counts for one inline image or PDF page (258 at default media resolution). */
const MEDIA_TOKENS = 258;
const SEP = '\u0000';

/** Google RPC status names by HTTP status. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  429: 'Resource has been exhausted (e.g. check quota).',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'The request timed out. Please try again.',
};

export function statusNameFor(status: number): string {
  return STATUS_NAMES[status] ?? (status >= 500 ? 'UNKNOWN' : 'FAILED_PRECONDITION');
}

function headers(): Record<string, string> {
  return { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', server: 'scaffolding on HTTPServer2' };
}

/** An error reply in Google's shape. */
export function googleError(status: number, message: string, details?: unknown[]): Reply {
  const error: Json = { code: status, message, status: statusNameFor(status) };
  if (details) error['details'] = details;
  return { status, headers: headers(), body: JSON.stringify({ error }) };
}

function invalid(message: string): Prepared {
  return { ok: false, reply: googleError(400, message) };
}

function unknownName(name: string, at: string): Prepared {
  return invalid(`Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`);
}

/** Proto JSON accepts a field under its camelCase and its snake_case name. */
function field(obj: Json, camel: string): unknown {
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return obj[camel] !== undefined ? obj[camel] : obj[snake];
}

function firstUnknown(obj: Json, known: readonly string[]): string | undefined {
  const names = new Set<string>();
  for (const camel of known) {
    names.add(camel);
    names.add(camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  }
  return Object.keys(obj).find((key) => !names.has(key));
}

const REQUEST_FIELDS = ['contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig', 'safetySettings', 'cachedContent', 'model', 'labels'];
const CONFIG_FIELDS = [
  'temperature',
  'topP',
  'topK',
  'candidateCount',
  'maxOutputTokens',
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'mediaResolution',
];
const THINKING_FIELDS = ['thinkingBudget', 'thinkingLevel', 'includeThoughts'];
const LEVELS = ['MINIMAL', 'LOW', 'MEDIUM', 'HIGH'] as const;
type Level = (typeof LEVELS)[number];
const MIME_TYPES: ReadonlySet<string> = new Set(['text/plain', 'application/json', 'text/x.enum']);

/** Which thinking levels a model takes, and whether it thinks when not told. */
function thinkingTraits(model: string): { levels?: readonly Level[]; canDisable: boolean; thinksByDefault: boolean } {
  const pro = model.includes('-pro');
  if (model.startsWith('gemini-3')) {
    const levels: readonly Level[] = model.startsWith('gemini-3-pro') ? ['LOW', 'HIGH'] : pro ? ['LOW', 'MEDIUM', 'HIGH'] : LEVELS;
    return { levels, canDisable: false, thinksByDefault: true };
  }
  if (model.startsWith('gemini-2.5')) return { canDisable: !pro, thinksByDefault: !model.includes('flash-lite') };
  return { canDisable: true, thinksByDefault: false };
}

const LEVEL_THOUGHTS: Record<Level, number> = { MINIMAL: 0, LOW: 48, MEDIUM: 160, HIGH: 384 };

interface GeminiCall {
  model: string;
  seed: number;
  responseId: string;
  promptTokens: number;
  maxTokens: number | undefined;
  json: boolean;
  schema: unknown;
  thoughts: number;
  includeThoughts: boolean;
  cached: boolean;
  search: boolean;
}

function validateParts(parts: unknown, at: string, hash: ReturnType<typeof createHash>): { tokens: number } | Prepared {
  if (!Array.isArray(parts) || parts.length === 0) return invalid(`* GenerateContentRequest.${at}.parts: contents.parts must not be empty.\n`);
  let tokens = 0;
  for (let j = 0; j < parts.length; j++) {
    const part: unknown = parts[j];
    const pat = `${at}.parts[${j}]`;
    if (!isObject(part)) return invalid(`Invalid value at '${pat}': expected an object.`);
    const unknown = firstUnknown(part, ['text', 'inlineData', 'fileData', 'thought', 'thoughtSignature', 'mediaResolution']);
    if (unknown !== undefined) return unknownName(unknown, pat);
    const text = part['text'];
    const inline = field(part, 'inlineData');
    // An empty string is proto3's default, so `{text: ''}` sets no member of the `data` oneof.
    if (text !== undefined && text !== '') {
      if (typeof text !== 'string') return invalid(`Invalid value at '${pat}.text' (TYPE_STRING)`);
      hash.update(`${SEP}t${text}`);
      tokens += countTokens(text);
    } else if (inline !== undefined) {
      if (!isObject(inline)) return invalid(`Invalid value at '${pat}.inline_data': expected an object.`);
      const mimeType = field(inline, 'mimeType');
      const data = inline['data'];
      if (typeof mimeType !== 'string' || mimeType === '') return invalid(`* GenerateContentRequest.${pat}.inline_data.mime_type: mime_type is not specified.\n`);
      if (typeof data !== 'string' || data === '') return invalid(`* GenerateContentRequest.${pat}.inline_data.data: data is not specified.\n`);
      if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data)) return invalid(`Invalid value at '${pat}.inline_data.data' (TYPE_BYTES), Base64 decoding failed.`);
      hash.update(`${SEP}i${mimeType}${data.length}${data.slice(0, 64)}`);
      tokens += MEDIA_TOKENS;
    } else {
      return invalid(`* GenerateContentRequest.${pat}.data: required oneof field 'data' must have one initialized field\n`);
    }
  }
  return { tokens };
}

/** Validates a generateContent body; on success returns a ready-to-answer call. */
export function prepareGenerateContent(input: unknown, model: string): Prepared {
  if (!isObject(input)) return invalid('Invalid JSON payload received. Expected an object.');
  const body = input;
  const unknown = firstUnknown(body, REQUEST_FIELDS);
  if (unknown !== undefined) return unknownName(unknown, '');

  const hash = createHash('sha1');
  hash.update(model);
  let promptTokens = 0;

  const contents = body['contents'];
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) {
    return invalid('* GenerateContentRequest.contents: contents is not specified\n');
  }
  if (!Array.isArray(contents)) return invalid("Invalid value at 'contents': expected a list.");
  for (let i = 0; i < contents.length; i++) {
    const content: unknown = contents[i];
    const at = `contents[${i}]`;
    if (!isObject(content)) return invalid(`Invalid value at '${at}': expected an object.`);
    const extra = firstUnknown(content, ['role', 'parts']);
    if (extra !== undefined) return unknownName(extra, at);
    const role = content['role'];
    if (role !== undefined && role !== 'user' && role !== 'model') {
      return invalid(`Please use a valid role: user, model.`);
    }
    hash.update(SEP + String(role ?? 'user') + SEP);
    const parts = validateParts(content['parts'], at, hash);
    if ('ok' in parts) return parts;
    promptTokens += parts.tokens;
  }

  const system = field(body, 'systemInstruction');
  if (system !== undefined) {
    if (!isObject(system)) return invalid("Invalid value at 'system_instruction': expected an object.");
    const extra = firstUnknown(system, ['role', 'parts']);
    if (extra !== undefined) return unknownName(extra, 'system_instruction');
    hash.update(`${SEP}system${SEP}`);
    const parts = validateParts(system['parts'], 'system_instruction', hash);
    if ('ok' in parts) return parts;
    promptTokens += parts.tokens;
  }

  const tools = body['tools'];
  let search = false;
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return invalid("Invalid value at 'tools': expected a list.");
    for (let i = 0; i < tools.length; i++) {
      const tool: unknown = tools[i];
      if (!isObject(tool)) return invalid(`Invalid value at 'tools[${i}]': expected an object.`);
      const extra = firstUnknown(tool, ['googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'functionDeclarations']);
      if (extra !== undefined) return unknownName(extra, `tools[${i}]`);
      if (field(tool, 'googleSearch') !== undefined) search = true;
    }
  }

  const cachedContent = field(body, 'cachedContent');
  if (cachedContent !== undefined) {
    if (typeof cachedContent !== 'string' || !/^cachedContents\/[A-Za-z0-9_-]+$/.test(cachedContent)) {
      return invalid(`Invalid cached content name: ${String(cachedContent)}. It must be of the form cachedContents/{cachedContent}.`);
    }
    if (system !== undefined || (Array.isArray(tools) && tools.length > 0) || field(body, 'toolConfig') !== undefined) {
      return invalid(
        'CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.',
      );
    }
    hash.update(`${SEP}c${cachedContent}`);
  }

  const config = field(body, 'generationConfig') ?? {};
  if (!isObject(config)) return invalid("Invalid value at 'generation_config': expected an object.");
  const extraConfig = firstUnknown(config, CONFIG_FIELDS);
  if (extraConfig !== undefined) return unknownName(extraConfig, 'generation_config');
  for (const [name, min, max] of [
    ['temperature', 0, 2],
    ['topP', 0, 1],
  ] as const) {
    const v = field(config, name);
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) return invalid(`Invalid value at 'generation_config.${name}' (TYPE_FLOAT)`);
    if (v < min || v > max) return invalid(`* GenerateContentRequest.generation_config.${name}: must be in the range [${min}, ${max}]\n`);
  }
  const maxTokens = field(config, 'maxOutputTokens');
  if (maxTokens !== undefined && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)) {
    return invalid('* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive.\n');
  }
  const mimeType = field(config, 'responseMimeType');
  if (mimeType !== undefined && (typeof mimeType !== 'string' || !MIME_TYPES.has(mimeType))) {
    return invalid(
      `* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are \`text/plain\`, \`application/json\`, \`text/x.enum\`. ${String(mimeType)} is not supported.\n`,
    );
  }
  const jsonSchema = field(config, 'responseJsonSchema');
  const openApiSchema = field(config, 'responseSchema');
  if (jsonSchema !== undefined && openApiSchema !== undefined) {
    return invalid('* GenerateContentRequest.generation_config.response_schema: response_schema and response_json_schema cannot both be set.\n');
  }
  const schema = jsonSchema ?? openApiSchema;
  if (schema !== undefined) {
    if (!isObject(schema)) return invalid("Invalid value at 'generation_config.response_json_schema': expected an object.");
    if (mimeType !== 'application/json') {
      return invalid('* GenerateContentRequest.generation_config.response_mime_type: response_mime_type must be application/json when a response schema is set.\n');
    }
    hash.update(`${SEP}s${JSON.stringify(schema)}`);
  }

  const traits = thinkingTraits(model);
  const thinking = field(config, 'thinkingConfig');
  let thoughts = traits.thinksByDefault ? (traits.levels ? LEVEL_THOUGHTS.MEDIUM : 256) : 0;
  let includeThoughts = false;
  if (thinking !== undefined) {
    if (!isObject(thinking)) return invalid("Invalid value at 'generation_config.thinking_config': expected an object.");
    const extra = firstUnknown(thinking, THINKING_FIELDS);
    if (extra !== undefined) return unknownName(extra, 'generation_config.thinking_config');
    const budget = field(thinking, 'thinkingBudget');
    const level = field(thinking, 'thinkingLevel');
    includeThoughts = field(thinking, 'includeThoughts') === true;
    if (budget !== undefined && level !== undefined) {
      return invalid('You can only set only one of thinking budget and thinking level.');
    }
    if (level !== undefined) {
      const upper = typeof level === 'string' ? level.toUpperCase() : '';
      if (!(LEVELS as readonly string[]).includes(upper)) {
        return invalid(
          `Invalid value at 'generation_config.thinking_config.thinking_level' (type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel), "${String(level)}"`,
        );
      }
      if (!traits.levels) return invalid('Thinking level is not supported for this model.');
      if (!traits.levels.includes(upper as Level)) {
        return invalid(`Thinking level ${upper} is not supported for this model. Please retry with other thinking level.`);
      }
      thoughts = LEVEL_THOUGHTS[upper as Level];
    }
    if (budget !== undefined) {
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < -1) {
        return invalid("Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32)");
      }
      if (budget === 0 && !traits.canDisable) return invalid('Budget 0 is invalid. This model only works in thinking mode.');
      thoughts = budget === -1 ? 256 : Math.min(budget, 256);
    }
  }

  const digest = hash.digest();
  const call: GeminiCall = {
    model,
    seed: digest.readUInt32BE(0),
    responseId: digest.toString('base64url').slice(0, 23),
    promptTokens,
    maxTokens: typeof maxTokens === 'number' ? maxTokens : undefined,
    json: mimeType === 'application/json',
    schema,
    thoughts,
    includeThoughts,
    cached: cachedContent !== undefined,
    search,
  };
  return { ok: true, model, answer: (opts) => answer(call, opts.usage, opts.structured) };
}

function answer(call: GeminiCall, usage: boolean, structured?: Json): Reply {
  let text: string;
  if (call.json) {
    text = JSON.stringify(call.schema !== undefined ? (structured ?? generateFromSchema(call.schema, call.seed)) : { answer: generateParagraph(call.model, call.seed) });
  } else {
    text = generateParagraph(call.model, call.seed);
  }
  // Thinking counts against maxOutputTokens; what is left goes to the answer.
  const thoughts = call.maxTokens === undefined ? call.thoughts : Math.min(call.thoughts, call.maxTokens);
  let finishReason = 'STOP';
  if (call.maxTokens !== undefined && thoughts + countTokens(text) > call.maxTokens) {
    text = truncateToTokens(text, call.maxTokens - thoughts);
    finishReason = 'MAX_TOKENS';
  }
  const parts: Json[] = [];
  if (call.includeThoughts && thoughts > 0) parts.push({ text: '**Weighing the request**\n\nConsidering what the answer needs.', thought: true });
  if (text !== '') parts.push({ text });
  const candidatesTokens = countTokens(text);
  const toolUseTokens = call.search ? 32 + (call.seed % 64) : 0;

  const candidate: Json = {
    content: parts.length > 0 ? { parts, role: 'model' } : { role: 'model' },
    finishReason,
    index: 0,
  };
  if (call.search) candidate['groundingMetadata'] = grounding(text, call.seed);
  const body: Json = { candidates: [candidate] };
  if (usage) {
    const metadata: Json = {
      promptTokenCount: call.promptTokens,
      candidatesTokenCount: candidatesTokens,
      totalTokenCount: call.promptTokens + candidatesTokens + thoughts + toolUseTokens,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: call.promptTokens }],
    };
    if (call.cached) metadata['cachedContentTokenCount'] = Math.floor(call.promptTokens * 0.8);
    if (toolUseTokens > 0) metadata['toolUsePromptTokenCount'] = toolUseTokens;
    if (thoughts > 0) metadata['thoughtsTokenCount'] = thoughts;
    body['usageMetadata'] = metadata;
  }
  body['modelVersion'] = call.model;
  body['responseId'] = call.responseId;
  return { status: 200, headers: headers(), body: JSON.stringify(body) };
}

function grounding(text: string, seed: number): Json {
  const query = `simulated search ${seed % 1000}`;
  return {
    searchEntryPoint: { renderedContent: `<div class="container">${query}</div>` },
    groundingChunks: [{ web: { uri: `https://example.com/search/${seed % 1000}`, title: 'example.com' } }],
    groundingSupports: text === '' ? [] : [{ segment: { startIndex: 0, endIndex: Math.min(text.length, 40), text: text.slice(0, 40) }, groundingChunkIndices: [0] }],
    webSearchQueries: [query],
  };
}

/** The model named in `/v1beta/models/{model}:generateContent`, '' when the path has none. */
function modelFromPath(rest: string): string {
  const match = PATH.exec(rest);
  if (!match) return '';
  try {
    return decodeURIComponent(match[2] as string);
  } catch {
    return match[2] as string;
  }
}

/** The protocol module registered by the simulator server. */
export const geminiGenerateContent: ProtocolHandler = {
  protocol: 'gemini-generate-content',

  streams: (_body, rest) => PATH.exec(rest)?.[3] === 'streamGenerateContent',
  toStream: generateContentStream,
  route(method: string, rest: string): boolean {
    return method === 'POST' && PATH.test(rest);
  },

  modelOf(_body: unknown, rest: string): string {
    return modelFromPath(rest);
  },

  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    const key = headers['x-goog-api-key'];
    if (key === undefined || (typeof key === 'string' && key.trim() !== '')) return undefined;
    return googleError(400, 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ]);
  },

  prepare(body: unknown, rest: string): Prepared {
    return prepareGenerateContent(body, modelFromPath(rest));
  },

  invalidJson(): Reply {
    return googleError(400, 'Invalid JSON payload received. Unexpected token.');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    if (body !== undefined) {
      return { status, headers: headers(), body: typeof body === 'string' ? body : JSON.stringify(body) };
    }
    // Google sends its retry delay as a RetryInfo detail, not as a Retry-After header.
    const seconds = retryAfter !== undefined && /^\d+(\.\d+)?$/.test(retryAfter) ? retryAfter : undefined;
    const details = seconds !== undefined ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }] : undefined;
    const reply = googleError(status, DEFAULT_MESSAGES[status] ?? `Simulated upstream error ${status}`, details);
    if (retryAfter !== undefined && seconds === undefined) reply.headers['retry-after'] = retryAfter;
    return reply;
  },
};
