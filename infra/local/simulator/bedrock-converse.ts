/**
 * Amazon Bedrock Converse protocol for the provider simulator:
 * `POST /{provider}/v1/model/{modelId}/converse` (the modelId URL-encoded, as the AWS SDK
 * sends it: `amazon.nova-pro-v1%3A0`).
 *
 * Validates the Converse request shape (Nova's limits), answers in the exact Converse
 * response shape (text, or a `toolUse` block when the request forces a tool), simulates
 * Nova's explicit prompt cache (a prefix up to a `cachePoint` is written once, then read),
 * and shapes errors as restJson1 does (`x-amzn-errortype` header, `{"message"}` body) so
 * the SDK raises its own exception classes.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Prepared, ProtocolHandler, Reply } from './types.js';
import { countTokens, generateFromSchema, generateParagraph, truncateToTokens } from './text.js';
import { isObject, type Json } from './json.js';
import { PrefixCache } from './prefix-cache.js';
import { converseStream } from './bedrock-stream.js';

const CONVERSE_PATH = /^\/v1\/model\/([^/]+)\/(converse|converse-stream)$/;
const ROLES: ReadonlySet<string> = new Set(['user', 'assistant']);
const IMAGE_FORMATS: ReadonlySet<string> = new Set(['png', 'jpeg', 'gif', 'webp']);
const DOCUMENT_FORMATS: ReadonlySet<string> = new Set(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md']);
/** DocumentBlock.name: letters, digits, single whitespace, hyphens, parentheses, square brackets; 1-200 characters. */
const DOCUMENT_NAME = /^(?!.*\s\s)[A-Za-z0-9\s\-()[\]]{1,200}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_TOKENS = 1_300;
const DOCUMENT_TOKENS = 800;
/** Nova: at least 1,000 tokens before a checkpoint, at most 4 checkpoints a request. */
const CACHE_MIN_TOKENS = 1_000;
const MAX_CACHE_POINTS = 4;
const MAX_CACHED_PREFIXES = 10_000;
const SEP = '\u0000';

/** Error types the SDK knows, by status. */
function errorTypeFor(status: number): string {
  switch (status) {
    case 400:
      return 'ValidationException';
    case 401:
    case 403:
      return 'AccessDeniedException';
    case 404:
      return 'ResourceNotFoundException';
    case 408:
      return 'ModelTimeoutException';
    case 409:
      return 'ConflictException';
    case 424:
      return 'ModelErrorException';
    case 429:
      return 'ThrottlingException';
    case 500:
      return 'InternalServerException';
    default:
      return status >= 500 ? 'ServiceUnavailableException' : 'ValidationException';
  }
}

const DEFAULT_MESSAGES: Record<string, string> = {
  ValidationException: 'Malformed input request, please reformat your input and try again.',
  AccessDeniedException: "You don't have access to the model with the specified model ID.",
  ResourceNotFoundException: 'Could not resolve the foundation model from the provided model identifier.',
  ModelTimeoutException: 'Model has timed out in processing the request. Try your request again.',
  ConflictException: 'The request could not be completed because of a conflict.',
  ModelErrorException: 'The model encountered an error while processing the request.',
  ThrottlingException: 'Too many requests, please wait before trying again.',
  InternalServerException: 'The system encountered an unexpected error during processing. Try your request again.',
  ServiceUnavailableException: 'Bedrock is unable to process your request.',
};

function headers(): Record<string, string> {
  return { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), date: new Date().toUTCString() };
}

/** A restJson1 error: the type in `x-amzn-errortype` (with Coral's namespace suffix), the message in the body. */
export function bedrockError(status: number, message: string, type = errorTypeFor(status)): Reply {
  return {
    status,
    headers: { ...headers(), 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    body: JSON.stringify({ message }),
  };
}

function invalid(message: string): Prepared {
  return { ok: false, reply: bedrockError(400, message) };
}

/** Prefix hashes already written to the simulated cache. */
const cachedPrefixes = new PrefixCache(MAX_CACHED_PREFIXES);

interface CachePoint {
  /** Hash of everything before the checkpoint. */
  digest: string;
  /** Tokens before the checkpoint. */
  tokens: number;
}

/** Reads the request's content in order, counting tokens and hashing, and noting each cache checkpoint. */
class PromptReader {
  readonly hash = createHash('sha1');
  tokens = 0;
  cachePoints: CachePoint[] = [];

  constructor(model: string) {
    this.hash.update(model);
  }

  add(kind: string, value: string, tokens: number): void {
    this.hash.update(SEP + kind + value);
    this.tokens += tokens;
  }

  checkpoint(): void {
    this.cachePoints.push({ digest: this.hash.copy().digest('hex'), tokens: this.tokens });
  }
}

/** Validates one content block (system or message) and feeds it to the reader; an error message when invalid. */
function readBlock(block: unknown, at: string, reader: PromptReader, system: boolean): string | undefined {
  if (!isObject(block)) return `The ${at} field must be an object.`;
  const keys = Object.keys(block);
  if (keys.length !== 1) return `The ${at} field must set exactly one member of the content block union.`;
  const key = keys[0] as string;
  const value = block[key];
  switch (key) {
    case 'text':
      if (typeof value !== 'string') return `The ${at}.text field must be a string.`;
      if (value.trim() === '') return `The text field in the ContentBlock object at ${at} is blank. Add text to the text field, and try again.`;
      reader.add('t', value, countTokens(value));
      return undefined;
    case 'cachePoint':
      if (!isObject(value) || value['type'] !== 'default') return `The ${at}.cachePoint.type field must be "default".`;
      reader.checkpoint();
      return undefined;
    case 'image': {
      if (system) break;
      if (!isObject(value) || typeof value['format'] !== 'string' || !IMAGE_FORMATS.has(value['format'])) {
        return `The ${at}.image.format field must be one of png, jpeg, gif, webp.`;
      }
      const source = value['source'];
      if (!isObject(source) || typeof source['bytes'] !== 'string' || source['bytes'] === '') return `The ${at}.image.source.bytes field is required.`;
      reader.add('i', source['bytes'], IMAGE_TOKENS);
      return undefined;
    }
    case 'document': {
      if (system) break;
      if (!isObject(value) || typeof value['format'] !== 'string' || !DOCUMENT_FORMATS.has(value['format'])) {
        return `The ${at}.document.format field must be one of ${[...DOCUMENT_FORMATS].join(', ')}.`;
      }
      const name = value['name'];
      if (typeof name !== 'string' || !DOCUMENT_NAME.test(name)) {
        return `The ${at}.document.name field can only contain alphanumeric characters, whitespace characters (no more than one in a row), hyphens, parentheses and square brackets.`;
      }
      const source = value['source'];
      if (!isObject(source) || typeof source['bytes'] !== 'string' || source['bytes'] === '') return `The ${at}.document.source.bytes field is required.`;
      reader.add('d', name + SEP + source['bytes'], DOCUMENT_TOKENS);
      return undefined;
    }
  }
  return `The ${at} field has a content block type this simulator does not support: ${key}.`;
}

function optionalNumber(config: Json, key: string, min: number, max: number, integer = false): string | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) return `The inferenceConfig.${key} field must be a ${integer ? 'integer' : 'number'}.`;
  if (v < min || v > max) return `The inferenceConfig.${key} field must be between ${min} and ${max}; got ${v}.`;
  return undefined;
}

interface ForcedTool {
  name: string;
  schema: unknown;
}

/** The tool the request forces (`tool`, or `any` with its first tool); undefined for `auto` or no tools. */
function readToolConfig(config: unknown): { error?: string; forced?: ForcedTool } {
  if (config === undefined || config === null) return {};
  if (!isObject(config)) return { error: 'The toolConfig field must be an object.' };
  const tools = config['tools'];
  if (!Array.isArray(tools) || tools.length === 0) return { error: 'The toolConfig.tools field must be a non-empty list.' };
  const specs = new Map<string, unknown>();
  for (let i = 0; i < tools.length; i++) {
    const spec: unknown = isObject(tools[i]) ? (tools[i] as Json)['toolSpec'] : undefined;
    if (!isObject(spec) || typeof spec['name'] !== 'string' || !TOOL_NAME.test(spec['name'])) {
      return { error: `The toolConfig.tools.${i}.toolSpec.name field must match [a-zA-Z0-9_-]{1,64}.` };
    }
    const schema = isObject(spec['inputSchema']) ? spec['inputSchema']['json'] : undefined;
    if (!isObject(schema)) return { error: `The toolConfig.tools.${i}.toolSpec.inputSchema.json field must be a JSON object.` };
    // Bedrock API reference, ToolInputSchema: "The top level schema type must be object."
    if (schema['type'] !== 'object') return { error: `The toolConfig.tools.${i}.toolSpec.inputSchema.json field must have a top-level type of object.` };
    specs.set(spec['name'], schema);
  }
  const choice = config['toolChoice'];
  if (choice === undefined || choice === null || (isObject(choice) && 'auto' in choice)) return {};
  if (isObject(choice) && 'any' in choice) {
    const [name, schema] = specs.entries().next().value as [string, unknown];
    return { forced: { name, schema } };
  }
  if (isObject(choice) && isObject(choice['tool']) && typeof choice['tool']['name'] === 'string') {
    const name = choice['tool']['name'];
    if (!specs.has(name)) return { error: `The toolConfig.toolChoice.tool.name field names a tool that is not in toolConfig.tools: ${name}.` };
    return { forced: { name, schema: specs.get(name) } };
  }
  return { error: 'The toolConfig.toolChoice field must set one of auto, any or tool.' };
}

interface ConverseCall {
  model: string;
  seed: number;
  digest: string;
  inputTokens: number;
  cachePoints: readonly CachePoint[];
  maxTokens: number | undefined;
  forced: ForcedTool | undefined;
}

/**
 * Splits the input into read and written tokens, and remembers the written prefixes. Runs
 * when an answer is sent, so a call failed by a fault caches nothing.
 */
function applyCache(cachePoints: readonly CachePoint[]): { read: number; write: number } {
  const eligible = cachePoints.filter((point) => point.tokens >= CACHE_MIN_TOKENS);
  const last = eligible.at(-1);
  if (!last) return { read: 0, write: 0 };
  let read = 0;
  for (const point of eligible) if (cachedPrefixes.has(point.digest)) read = point.tokens;
  for (const point of eligible) cachedPrefixes.remember(point.digest);
  return { read, write: last.tokens - read };
}

function answer(call: ConverseCall, usage: boolean, structured?: Json): Reply {
  let content: Json[];
  let stopReason: 'end_turn' | 'max_tokens' | 'tool_use';
  let outputTokens: number;
  if (call.forced) {
    const input = structured ?? generateFromSchema(call.forced.schema, call.seed);
    content = [{ toolUse: { toolUseId: `tooluse_${call.digest.slice(0, 22)}`, name: call.forced.name, input } }];
    stopReason = 'tool_use';
    outputTokens = countTokens(JSON.stringify(input));
  } else {
    let text = generateParagraph(call.model, call.seed);
    stopReason = 'end_turn';
    if (call.maxTokens !== undefined && countTokens(text) > call.maxTokens) {
      text = truncateToTokens(text, call.maxTokens);
      stopReason = 'max_tokens';
    }
    content = [{ text }];
    outputTokens = countTokens(text);
  }
  const body: Json = { output: { message: { role: 'assistant', content } }, stopReason };
  const cache = applyCache(call.cachePoints);
  if (usage) {
    // inputTokens counts only what was neither read from nor written to the cache.
    const tokens: Json = { inputTokens: call.inputTokens - cache.read - cache.write, outputTokens, totalTokens: call.inputTokens + outputTokens };
    if (call.cachePoints.length > 0) {
      tokens['cacheReadInputTokens'] = cache.read;
      tokens['cacheWriteInputTokens'] = cache.write;
    }
    body['usage'] = tokens;
  }
  body['metrics'] = { latencyMs: 120 + outputTokens };
  return { status: 200, headers: headers(), body: JSON.stringify(body) };
}

/** Validates a Converse request body; on success returns a ready-to-answer call. */
export function prepareConverse(input: unknown, model: string): Prepared {
  if (model === '') return invalid('The provided model identifier is invalid.');
  if (!isObject(input)) return invalid('Malformed input request, please reformat your input and try again.');
  const reader = new PromptReader(model);

  const system = input['system'];
  if (system !== undefined && system !== null) {
    if (!Array.isArray(system)) return invalid('The system field must be a list of system content blocks.');
    for (let i = 0; i < system.length; i++) {
      const error = readBlock(system[i], `system.${i}`, reader, true);
      if (error) return invalid(error);
    }
  }

  const messages = input['messages'];
  if (!Array.isArray(messages) || messages.length === 0) {
    return invalid('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  }
  let previous: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isObject(m) || typeof m['role'] !== 'string' || !ROLES.has(m['role'])) {
      return invalid(`The messages.${i}.role field must be user or assistant.`);
    }
    const role = m['role'];
    if (i === 0 && role !== 'user') {
      return invalid('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    }
    if (role === previous) {
      return invalid('A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.');
    }
    previous = role;
    const content = m['content'];
    if (!Array.isArray(content) || content.length === 0) return invalid(`The messages.${i}.content field must be a non-empty list.`);
    reader.add('r', role, 0);
    for (let j = 0; j < content.length; j++) {
      const error = readBlock(content[j], `messages.${i}.content.${j}`, reader, false);
      if (error) return invalid(error);
    }
  }
  if (reader.cachePoints.length > MAX_CACHE_POINTS) {
    return invalid(`The number of cache points in the request exceeds the maximum of ${MAX_CACHE_POINTS}.`);
  }

  let maxTokens: number | undefined;
  const config = input['inferenceConfig'];
  if (config !== undefined && config !== null) {
    if (!isObject(config)) return invalid('The inferenceConfig field must be an object.');
    const error = optionalNumber(config, 'maxTokens', 1, 10_000, true) ?? optionalNumber(config, 'temperature', 0, 1) ?? optionalNumber(config, 'topP', 0, 1);
    if (error) return invalid(error);
    if (typeof config['maxTokens'] === 'number') maxTokens = config['maxTokens'];
  }
  const tools = readToolConfig(input['toolConfig']);
  if (tools.error) return invalid(tools.error);

  const digest = reader.hash.digest('hex');
  const call: ConverseCall = {
    model,
    seed: Number.parseInt(digest.slice(0, 8), 16),
    digest,
    inputTokens: reader.tokens,
    cachePoints: reader.cachePoints,
    maxTokens,
    forced: tools.forced,
  };
  return { ok: true, model, answer: (opts) => answer(call, opts.usage, opts.structured) };
}

function modelFromPath(rest: string): string {
  const encoded = CONVERSE_PATH.exec(rest)?.[1];
  if (encoded === undefined) return '';
  try {
    return decodeURIComponent(encoded);
  } catch {
    return '';
  }
}

/** The protocol module registered by the simulator server. */
export const bedrockConverse: ProtocolHandler = {
  /** A cold prompt cache again. */
  reset: () => cachedPrefixes.clear(),

  protocol: 'bedrock-converse',

  streams: (_body, rest) => CONVERSE_PATH.exec(rest)?.[2] === 'converse-stream',
  toStream: converseStream,
  route(method: string, rest: string): boolean {
    return method === 'POST' && CONVERSE_PATH.test(rest);
  },

  modelOf(_body: unknown, rest: string): string {
    return modelFromPath(rest);
  },

  /** Any SigV4 (or Bedrock API key bearer) signature passes; a request without one does not. */
  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    if (headers.authorization !== undefined && headers.authorization !== '') return undefined;
    return bedrockError(403, 'Missing Authentication Token', 'MissingAuthenticationTokenException');
  },

  prepare(body: unknown, rest: string): Prepared {
    return prepareConverse(body, modelFromPath(rest));
  },

  invalidJson(): Reply {
    return bedrockError(400, 'Malformed input request, please reformat your input and try again.', 'ValidationException');
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const type = errorTypeFor(status);
    const reply = bedrockError(status, DEFAULT_MESSAGES[type] ?? `Simulated upstream error ${status}`, type);
    if (type === 'ModelErrorException') reply.body = JSON.stringify({ message: DEFAULT_MESSAGES[type], originalStatusCode: 500, resourceName: '' });
    if (retryAfter !== undefined) reply.headers['retry-after'] = retryAfter;
    if (body !== undefined) reply.body = typeof body === 'string' ? body : JSON.stringify(body);
    return reply;
  },
};
