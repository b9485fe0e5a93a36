/**
 * The checks of a simulated Converse request, one per section of the body (system,
 * messages and their turn order, cache points, inferenceConfig, toolConfig) with Nova's
 * limits, each refusing with a ValidationException.
 */
import { createHash } from 'node:crypto';
import { isObject, type Json } from '../json.js';
import { countTokens } from '../text.js';
import { isRefusal, type Prepared, type Refusal } from '../types.js';
import { answerConverse, type CachePoint, type ConverseCall, type ForcedTool } from './answer.js';
import { simulatedBedrockError } from './errors.js';

const ROLES: ReadonlySet<string> = new Set(['user', 'assistant']);
const IMAGE_FORMATS: ReadonlySet<string> = new Set(['png', 'jpeg', 'gif', 'webp']);
const DOCUMENT_FORMATS: ReadonlySet<string> = new Set(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md']);
/** DocumentBlock.name: letters, digits, single whitespace, hyphens, parentheses, square brackets; 1-200 characters. */
const DOCUMENT_NAME = /^(?!.*\s\s)[A-Za-z0-9\s\-()[\]]{1,200}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_TOKENS = 1_300;
const DOCUMENT_TOKENS = 800;
/** Converse's Message.content: "You can include up to five documents." (the refusal's wording is ours). */
const MAX_DOCUMENTS = 5;
/** Nova: at most 4 checkpoints a request. */
const MAX_CACHE_POINTS = 4;
const SEP = '\u0000';
const FIRST_TURN = 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';

function invalid(message: string): Refusal {
  return { ok: false, reply: simulatedBedrockError(400, message) };
}

/** Reads the request's content in order, counting tokens and hashing, and noting each cache checkpoint. */
class PromptReader {
  readonly hash = createHash('sha1');
  tokens = 0;
  documents = 0;
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
      if (++reader.documents > MAX_DOCUMENTS) return `The ${at} field is a document past the ${MAX_DOCUMENTS} a request can include.`;
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

function readSystem(system: unknown, reader: PromptReader): Refusal | undefined {
  if (system === undefined || system === null) return undefined;
  if (!Array.isArray(system)) return invalid('The system field must be a list of system content blocks.');
  for (let i = 0; i < system.length; i++) {
    const error = readBlock(system[i], `system.${i}`, reader, true);
    if (error) return invalid(error);
  }
  return undefined;
}

/** The messages: user first, then alternating, each with a non-empty content list. */
function readMessages(messages: unknown, reader: PromptReader): Refusal | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return invalid(FIRST_TURN);
  let previous: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isObject(m) || typeof m['role'] !== 'string' || !ROLES.has(m['role'])) {
      return invalid(`The messages.${i}.role field must be user or assistant.`);
    }
    const role = m['role'];
    if (i === 0 && role !== 'user') return invalid(FIRST_TURN);
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
  return undefined;
}

/** inferenceConfig: the limit and the sampling ranges; the limit when set. */
function readInferenceConfig(config: unknown): number | undefined | Refusal {
  if (config === undefined || config === null) return undefined;
  if (!isObject(config)) return invalid('The inferenceConfig field must be an object.');
  const error = optionalNumber(config, 'maxTokens', 1, 10_000, true) ?? optionalNumber(config, 'temperature', 0, 1) ?? optionalNumber(config, 'topP', 0, 1);
  if (error) return invalid(error);
  return typeof config['maxTokens'] === 'number' ? config['maxTokens'] : undefined;
}

/** Validates a Converse request body (the model is the path's); on success returns a ready-to-answer call. */
export function validateConverse(input: unknown, model: string): Prepared {
  if (model === '') return invalid('The provided model identifier is invalid.');
  if (!isObject(input)) return invalid('Malformed input request, please reformat your input and try again.');
  const reader = new PromptReader(model);
  const inputError = readSystem(input['system'], reader) ?? readMessages(input['messages'], reader);
  if (inputError) return inputError;
  const maxTokens = readInferenceConfig(input['inferenceConfig']);
  if (isRefusal(maxTokens)) return maxTokens;
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
  return { ok: true, model, answer: (opts) => answerConverse(call, opts.usage, opts.structured) };
}
