/**
 * The checks of a simulated generateContent request, one per section of the body (unknown
 * fields, contents, systemInstruction, tools, cachedContent, generationConfig: sampling,
 * limit, response format, thinkingConfig), each refusing as Gemini does (unknown fields,
 * empty contents, role names, thinkingLevel with thinkingBudget, cachedContent with
 * systemInstruction or tools, levels a model does not support) with Google's error body.
 */
import { createHash } from 'node:crypto';
import { isObject, type Json } from '../json.js';
import { countTokens } from '../text.js';
import { isRefusal, type Prepared, type Refusal } from '../types.js';
import { answerGenerateContent, type GeminiCall } from './answer.js';
import { simulatedGoogleError } from './errors.js';

/** Tokens Gemini counts for one inline image or PDF page (258 at default media resolution). */
const MEDIA_TOKENS = 258;
const SEP = '\u0000';

type Hash = ReturnType<typeof createHash>;

function invalid(message: string): Refusal {
  return { ok: false, reply: simulatedGoogleError(400, message) };
}

function unknownName(name: string, at: string): Refusal {
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

function readParts(parts: unknown, at: string, hash: Hash): { tokens: number } | Refusal {
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

/** The contents, in order, into the hash: their prompt tokens. */
function readContents(body: Json, hash: Hash): number | Refusal {
  const contents = body['contents'];
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) {
    return invalid('* GenerateContentRequest.contents: contents is not specified\n');
  }
  if (!Array.isArray(contents)) return invalid("Invalid value at 'contents': expected a list.");
  let tokens = 0;
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
    const parts = readParts(content['parts'], at, hash);
    if (isRefusal(parts)) return parts;
    tokens += parts.tokens;
  }
  return tokens;
}

/** The systemInstruction into the hash: its tokens (0 without one). */
function readSystemInstruction(system: unknown, hash: Hash): number | Refusal {
  if (system === undefined) return 0;
  if (!isObject(system)) return invalid("Invalid value at 'system_instruction': expected an object.");
  const extra = firstUnknown(system, ['role', 'parts']);
  if (extra !== undefined) return unknownName(extra, 'system_instruction');
  hash.update(`${SEP}system${SEP}`);
  const parts = readParts(system['parts'], 'system_instruction', hash);
  return isRefusal(parts) ? parts : parts.tokens;
}

/** The tools: whether Google Search is among them. */
function readTools(tools: unknown): boolean | Refusal {
  if (tools === undefined) return false;
  if (!Array.isArray(tools)) return invalid("Invalid value at 'tools': expected a list.");
  let search = false;
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    if (!isObject(tool)) return invalid(`Invalid value at 'tools[${i}]': expected an object.`);
    const extra = firstUnknown(tool, ['googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'functionDeclarations']);
    if (extra !== undefined) return unknownName(extra, `tools[${i}]`);
    if (field(tool, 'googleSearch') !== undefined) search = true;
  }
  return search;
}

/** cachedContent, refused beside systemInstruction, tools or toolConfig: whether there is one. */
function readCachedContent(body: Json, hash: Hash): boolean | Refusal {
  const cachedContent = field(body, 'cachedContent');
  if (cachedContent === undefined) return false;
  if (typeof cachedContent !== 'string' || !/^cachedContents\/[A-Za-z0-9_-]+$/.test(cachedContent)) {
    return invalid(`Invalid cached content name: ${String(cachedContent)}. It must be of the form cachedContents/{cachedContent}.`);
  }
  const tools = body['tools'];
  if (field(body, 'systemInstruction') !== undefined || (Array.isArray(tools) && tools.length > 0) || field(body, 'toolConfig') !== undefined) {
    return invalid(
      'CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.',
    );
  }
  hash.update(`${SEP}c${cachedContent}`);
  return true;
}

function readGenerationConfig(body: Json): Json | Refusal {
  const config = field(body, 'generationConfig') ?? {};
  if (!isObject(config)) return invalid("Invalid value at 'generation_config': expected an object.");
  const extraConfig = firstUnknown(config, CONFIG_FIELDS);
  if (extraConfig !== undefined) return unknownName(extraConfig, 'generation_config');
  return config;
}

function checkSampling(config: Json): Refusal | undefined {
  for (const [name, min, max] of [
    ['temperature', 0, 2],
    ['topP', 0, 1],
  ] as const) {
    const v = field(config, name);
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) return invalid(`Invalid value at 'generation_config.${name}' (TYPE_FLOAT)`);
    if (v < min || v > max) return invalid(`* GenerateContentRequest.generation_config.${name}: must be in the range [${min}, ${max}]\n`);
  }
  return undefined;
}

function readLimit(config: Json): number | undefined | Refusal {
  const maxTokens = field(config, 'maxOutputTokens');
  if (maxTokens === undefined) return undefined;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return invalid('* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive.\n');
  }
  return maxTokens;
}

/** responseMimeType and the response schema (into the hash). */
function readResponseFormat(config: Json, hash: Hash): { json: boolean; schema: unknown } | Refusal {
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
  return { json: mimeType === 'application/json', schema };
}

/** thinkingConfig, as the model takes it: the thought tokens it spends and whether they are returned. */
function readThinking(config: Json, model: string): { thoughts: number; includeThoughts: boolean } | Refusal {
  const traits = thinkingTraits(model);
  const thinking = field(config, 'thinkingConfig');
  const read = { thoughts: traits.thinksByDefault ? (traits.levels ? LEVEL_THOUGHTS.MEDIUM : 256) : 0, includeThoughts: false };
  if (thinking === undefined) return read;
  if (!isObject(thinking)) return invalid("Invalid value at 'generation_config.thinking_config': expected an object.");
  const extra = firstUnknown(thinking, THINKING_FIELDS);
  if (extra !== undefined) return unknownName(extra, 'generation_config.thinking_config');
  const budget = field(thinking, 'thinkingBudget');
  const level = field(thinking, 'thinkingLevel');
  read.includeThoughts = field(thinking, 'includeThoughts') === true;
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
    read.thoughts = LEVEL_THOUGHTS[upper as Level];
  }
  if (budget !== undefined) {
    if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < -1) {
      return invalid("Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32)");
    }
    if (budget === 0 && !traits.canDisable) return invalid('Budget 0 is invalid. This model only works in thinking mode.');
    read.thoughts = budget === -1 ? 256 : Math.min(budget, 256);
  }
  return read;
}

/** Validates a generateContent body (the model is the path's); on success returns a ready-to-answer call. */
export function validateGenerateContent(input: unknown, model: string): Prepared {
  if (!isObject(input)) return invalid('Invalid JSON payload received. Expected an object.');
  const body = input;
  const unknown = firstUnknown(body, REQUEST_FIELDS);
  if (unknown !== undefined) return unknownName(unknown, '');
  const hash = createHash('sha1');
  hash.update(model);
  const contentTokens = readContents(body, hash);
  if (isRefusal(contentTokens)) return contentTokens;
  const systemTokens = readSystemInstruction(field(body, 'systemInstruction'), hash);
  if (isRefusal(systemTokens)) return systemTokens;
  const search = readTools(body['tools']);
  if (isRefusal(search)) return search;
  const cached = readCachedContent(body, hash);
  if (isRefusal(cached)) return cached;
  const config = readGenerationConfig(body);
  if (isRefusal(config)) return config;
  const sampling = checkSampling(config);
  if (sampling) return sampling;
  const maxTokens = readLimit(config);
  if (isRefusal(maxTokens)) return maxTokens;
  const format = readResponseFormat(config, hash);
  if (isRefusal(format)) return format;
  const thinking = readThinking(config, model);
  if (isRefusal(thinking)) return thinking;

  const digest = hash.digest();
  const call: GeminiCall = {
    model,
    seed: digest.readUInt32BE(0),
    responseId: digest.toString('base64url').slice(0, 23),
    promptTokens: contentTokens + systemTokens,
    maxTokens,
    ...format,
    ...thinking,
    cached,
    search,
  };
  return { ok: true, model, answer: (opts) => answerGenerateContent(call, opts.usage, opts.structured) };
}
