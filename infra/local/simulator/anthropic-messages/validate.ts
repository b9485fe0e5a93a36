/**
 * The checks of a simulated Messages API request, one per section of the body (model and
 * limit, system and messages with their cache breakpoints, thinking, sampling, the output
 * format), each refusing with Anthropic's `invalid_request_error` in the wording it uses.
 * Structured output: `output_config.format` json_schema, or a system block that ends with
 * a JSON Schema line (the gateway's strengthened instruction), yields a conforming value.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { isObject, type Json } from '../json.js';
import { countTokens, schemaFromInstruction } from '../text.js';
import { isRefusal, type Prepared, type Refusal } from '../types.js';
import { answerMessages, type Breakpoint, type MessagesCall, type Thinking } from './answer.js';
import { simulatedAnthropicError } from './errors.js';
import { pdfPageCounts } from '../../../../shared/pricing/pdf-pages.js';

const SEP = '\u0000';
/** Tokens Anthropic adds around each message (role markers). */
const PER_MESSAGE_TOKENS = 3;
/** About what Anthropic counts for a ~1.15 megapixel image ((w*h)/750). */
const IMAGE_TOKENS = 1600;
/** About what Anthropic counts for one PDF page (text plus page image): a document counts this a page. */
const PAGE_TOKENS = 1500;
const MAX_BREAKPOINTS = 4;
const MIN_THINKING_BUDGET = 1024;
const WHITESPACE_ONLY = 'messages: text content blocks must contain non-whitespace text';
const DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';
const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Models that take only adaptive thinking and reject sampling parameters (Opus 4.7). */
const ADAPTIVE_ONLY: ReadonlySet<string> = new Set(['claude-opus-4-7']);
/** Models that accept `thinking: {type: 'adaptive'}`. */
const ADAPTIVE_CAPABLE: ReadonlySet<string> = new Set(['claude-opus-4-7', 'claude-opus-4-6', 'claude-sonnet-4-6']);
/** The levels of `output_config.effort` each model takes (Anthropic's effort page: `max` from Opus 4.6, `xhigh` from Opus 4.7); the others take none. */
const EFFORTS: ReadonlyMap<string, readonly string[]> = new Map([
  ['claude-opus-4-7', ['low', 'medium', 'high', 'xhigh', 'max']],
  ['claude-opus-4-6', ['low', 'medium', 'high', 'max']],
  ['claude-sonnet-4-6', ['low', 'medium', 'high']],
]);

function badRequest(message: string): Refusal {
  return { ok: false, reply: simulatedAnthropicError(400, 'invalid_request_error', message) };
}

/** Walks the input in Anthropic's cache order, counting tokens and hashing each prefix. */
class InputWalker {
  tokens = 0;
  readonly breakpoints: Breakpoint[] = [];
  private readonly hash: Hash;

  constructor(model: string) {
    this.hash = createHash('sha256');
    this.hash.update(model);
  }

  add(key: string, tokens: number): void {
    this.hash.update(SEP + key);
    this.tokens += tokens;
  }

  breakpoint(): void {
    this.breakpoints.push({ hash: this.hash.copy().digest('hex'), tokens: this.tokens });
  }

  digest(): Buffer {
    return this.hash.copy().digest();
  }
}

/** `cache_control` must be `{type:'ephemeral', ttl?: '5m'|'1h'}`; returns an error message or undefined. */
function checkCacheControl(value: unknown, at: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value) || value['type'] !== 'ephemeral') return `${at}.cache_control.type: Input should be 'ephemeral'`;
  const ttl = value['ttl'];
  if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') return `${at}.cache_control.ttl: Input should be '5m' or '1h'`;
  return undefined;
}

/** Reads one content block into the walker; returns an error message or undefined. */
function readBlock(block: unknown, at: string, walker: InputWalker, counts: { breakpoints: number }): string | undefined {
  if (!isObject(block)) return `${at}: Input should be a valid dictionary or object to extract fields from`;
  const cacheError = checkCacheControl(block['cache_control'], at);
  if (cacheError) return cacheError;
  switch (block['type']) {
    case 'text': {
      const text = block['text'];
      if (typeof text !== 'string') return `${at}.text: Field required`;
      if (text.length === 0) return 'messages: text content blocks must be non-empty';
      if (text.trim() === '') return WHITESPACE_ONLY;
      walker.add(`t${text}`, countTokens(text));
      break;
    }
    case 'image':
    case 'document': {
      const source = block['source'];
      if (!isObject(source)) return `${at}.source: Field required`;
      if (source['type'] !== 'base64') return `${at}.source.type: the simulator accepts only base64 sources`;
      const mediaType = source['media_type'];
      const data = source['data'];
      if (typeof data !== 'string' || data.length === 0) return `${at}.source.data: Field required`;
      if (block['type'] === 'image' && (typeof mediaType !== 'string' || !IMAGE_MEDIA_TYPES.has(mediaType))) {
        return `${at}.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
      }
      if (block['type'] === 'document' && mediaType !== 'application/pdf') {
        return `${at}.source.media_type: Input should be 'application/pdf'`;
      }
      const digest = createHash('sha1').update(data).digest('hex');
      // The pages a reader walks (its leaves, not a /Count the file declares).
      const tokens = block['type'] === 'image' ? IMAGE_TOKENS : PAGE_TOKENS * (pdfPageCounts(Buffer.from(String(data), 'base64'))?.read ?? 1);
      walker.add(`${block['type']}:${String(mediaType)}:${digest}`, tokens);
      break;
    }
    case 'thinking':
    case 'redacted_thinking':
      // Earlier turns' thinking is stripped from the context and not counted.
      break;
    default:
      return `${at}: Input tag '${String(block['type'])}' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'thinking', 'redacted_thinking'`;
  }
  if (isObject(block['cache_control'])) {
    counts.breakpoints += 1;
    walker.breakpoint();
  }
  return undefined;
}

function readSystem(system: unknown, walker: InputWalker, counts: { breakpoints: number }): string | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') {
    walker.add(`t${system}`, countTokens(system));
    return undefined;
  }
  if (!Array.isArray(system)) return 'system: Input should be a valid string or list';
  for (let i = 0; i < system.length; i++) {
    const block: unknown = system[i];
    if (isObject(block) && block['type'] !== 'text') return `system.${i}.type: Input should be 'text'`;
    const error = readBlock(block, `system.${i}`, walker, counts);
    if (error) return error.startsWith('messages: text content blocks') ? error.replace('messages:', 'system:') : error;
  }
  return undefined;
}

function readMessages(messages: unknown[], walker: InputWalker, counts: { breakpoints: number }): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    const at = `messages.${i}`;
    if (!isObject(m)) return `${at}: Input should be a valid dictionary or object to extract fields from`;
    const role = m['role'];
    if (role !== 'user' && role !== 'assistant') return `${at}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && role !== 'user') return 'messages: first message must use the "user" role';
    walker.add(`r${role}`, PER_MESSAGE_TOKENS);
    const content = m['content'];
    if (typeof content === 'string') {
      if (content.length === 0 && !(role === 'assistant' && i === messages.length - 1)) {
        return `${at}: all messages must have non-empty content except for the optional final assistant message`;
      }
      if (content.length > 0 && content.trim() === '') return WHITESPACE_ONLY;
      walker.add(`t${content}`, countTokens(content));
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const error = readBlock(content[j], `${at}.content.${j}`, walker, counts);
        if (error) return error;
      }
    } else {
      return `${at}.content: Input should be a valid string or list`;
    }
  }
  return undefined;
}

function optionalNumber(body: Json, key: string, min: number, max: number): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return `${key}: Input should be a valid number`;
  if (v < min) return `${key}: Input should be greater than or equal to ${min}`;
  if (v > max) return `${key}: Input should be less than or equal to ${max}`;
  return undefined;
}

function readThinking(value: unknown, model: string, maxTokens: number): Thinking | string {
  if (value === undefined || value === null) return { type: 'disabled' };
  if (!isObject(value)) return 'thinking: Input should be a valid dictionary or object to extract fields from';
  switch (value['type']) {
    case 'disabled':
      return { type: 'disabled' };
    case 'adaptive':
      if (!ADAPTIVE_CAPABLE.has(model)) return '"thinking.type.adaptive" is not supported for this model.';
      return { type: 'adaptive' };
    case 'enabled': {
      if (ADAPTIVE_ONLY.has(model)) {
        return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
      }
      const budget = value['budget_tokens'];
      if (typeof budget !== 'number' || !Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Field required';
      if (budget < MIN_THINKING_BUDGET) return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`;
      if (budget >= maxTokens) {
        return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${DOCS}#max-tokens-and-context-window-size`;
      }
      return { type: 'enabled', budget };
    }
    default:
      return "thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'";
  }
}

/** The sampling rules: per model, with thinking, and temperature xor top_p. */
function checkSampling(body: Json, model: string, thinking: Thinking): string | undefined {
  const has = (key: string): boolean => body[key] !== undefined && body[key] !== null;
  const error = optionalNumber(body, 'temperature', 0, 1) ?? optionalNumber(body, 'top_p', 0, 1);
  if (error) return error;
  if (ADAPTIVE_ONLY.has(model)) {
    for (const key of ['temperature', 'top_p', 'top_k']) if (has(key)) return `\`${key}\` is deprecated for this model.`;
  }
  if (thinking.type !== 'disabled') {
    if (has('temperature') && body['temperature'] !== 1) {
      return `\`temperature\` may only be set to 1 when thinking is enabled. Please consult our documentation at ${DOCS}#feature-compatibility`;
    }
    if (has('top_p') && (body['top_p'] as number) < 0.95) {
      return `\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. Please consult our documentation at ${DOCS}#feature-compatibility`;
    }
  }
  if (has('temperature') && has('top_p')) return '`temperature` and `top_p` cannot both be specified for this model. Please use only one.';
  return undefined;
}

/** `output_config`: its effort checked against the model's levels; the schema to conform to (or one from the system's instruction), or a refusal. */
function readOutputConfig(body: Json, model: string): Json | undefined | string {
  const config = body['output_config'];
  if (config !== undefined && config !== null) {
    if (!isObject(config)) return 'output_config: Input should be a valid dictionary or object to extract fields from';
    const effort = config['effort'];
    if (effort !== undefined && effort !== null) {
      const levels = EFFORTS.get(model);
      if (!levels) return 'output_config.effort: This model does not support the effort parameter.';
      if (typeof effort !== 'string' || !levels.includes(effort)) return `output_config.effort: Input should be ${levels.map((level) => `'${level}'`).join(', ')}`;
    }
    const format = config['format'];
    if (format !== undefined && format !== null) {
      if (!isObject(format) || format['type'] !== 'json_schema') return "output_config.format.type: Input should be 'json_schema'";
      if (!isObject(format['schema'])) return 'output_config.format.schema: Field required';
      return format['schema'];
    }
  }
  const system = body['system'];
  const texts = Array.isArray(system) ? system.flatMap((b: unknown) => (isObject(b) && typeof b['text'] === 'string' ? [b['text']] : [])) : [];
  return schemaFromInstruction(texts);
}

/** `model` and `max_tokens`, both required. */
function readModelAndLimit(body: Json): { model: string; maxTokens: number } | Refusal {
  const model = body['model'];
  if (model === undefined || model === null) return badRequest('model: Field required');
  if (typeof model !== 'string' || model === '') return badRequest('model: Input should be a valid string');
  const maxTokens = body['max_tokens'];
  if (maxTokens === undefined || maxTokens === null) return badRequest('max_tokens: Field required');
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens)) return badRequest('max_tokens: Input should be a valid integer');
  if (maxTokens < 1) return badRequest('max_tokens: Input should be greater than or equal to 1');
  return { model, maxTokens };
}

/** The system blocks, then the messages, into the walker; at most four cache breakpoints. */
function readInput(body: Json, walker: InputWalker): Refusal | undefined {
  const messages = body['messages'];
  if (messages === undefined || messages === null) return badRequest('messages: Field required');
  if (!Array.isArray(messages)) return badRequest('messages: Input should be a valid list');
  if (messages.length === 0) return badRequest('messages: at least one message is required');
  const counts = { breakpoints: 0 };
  const inputError = readSystem(body['system'], walker, counts) ?? readMessages(messages, walker, counts);
  if (inputError) return badRequest(inputError);
  if (counts.breakpoints > MAX_BREAKPOINTS) {
    return badRequest(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${counts.breakpoints}.`);
  }
  return undefined;
}

/** `metadata`: an object whose one field, `user_id`, is a string of at most 256 characters. */
function checkMetadata(metadata: unknown): string | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  if (!isObject(metadata)) return 'metadata: Input should be a valid dictionary or object to extract fields from';
  for (const key of Object.keys(metadata)) if (key !== 'user_id') return `metadata.${key}: Extra inputs are not permitted`;
  const userId = metadata['user_id'];
  if (userId === undefined || userId === null) return undefined;
  if (typeof userId !== 'string') return 'metadata.user_id: Input should be a valid string';
  if (userId.length > 256) return 'metadata.user_id: String should have at most 256 characters';
  return undefined;
}

/** Validates a Messages API request body; on success returns a ready-to-answer call. */
export function validateMessages(input: unknown): Prepared {
  if (!isObject(input)) return badRequest('The request body must be a JSON object.');
  const body = input;
  const read = readModelAndLimit(body);
  if (isRefusal(read)) return read;
  const { model, maxTokens } = read;
  const walker = new InputWalker(model);
  const inputError = readInput(body, walker);
  if (inputError) return inputError;
  const thinking = readThinking(body['thinking'], model, maxTokens);
  if (typeof thinking === 'string') return badRequest(thinking);
  const samplingError = checkSampling(body, model, thinking);
  if (samplingError) return badRequest(samplingError);
  const schema = readOutputConfig(body, model);
  if (typeof schema === 'string') return badRequest(schema);
  const metadataError = checkMetadata(body['metadata']);
  if (metadataError) return badRequest(metadataError);

  const digest = walker.digest();
  const call: MessagesCall = {
    model,
    seed: digest.readUInt32BE(0),
    id: `msg_01${digest.toString('base64url', 4, 20).replace(/[-_]/g, 'x')}`,
    inputTokens: walker.tokens,
    breakpoints: walker.breakpoints,
    minCacheTokens: minCacheTokens(model),
    maxTokens,
    thinking,
    schema,
  };
  return { ok: true, model, answer: (opts) => answerMessages(call, opts.usage, opts.structured) };
}

/**
 * The fewest tokens a prefix must count for Anthropic to cache it (its prompt-caching
 * guide): 4,096 on Opus 4.7, Opus 4.6, Opus 4.5 and Haiku 4.5, 2,048 on the earlier Haiku
 * models, 1,024 on the rest. Under it a breakpoint is accepted and nothing is cached or read.
 */
export function minCacheTokens(model: string): number {
  if (/^claude-(opus-4-[567]|haiku-4-5)/.test(model)) return 4096;
  return model.includes('haiku') ? 2048 : 1024;
}
