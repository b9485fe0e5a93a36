/**
 * The checks of a simulated Responses API request, one per section of the body (model and
 * what the simulator does not support, instructions and input items, sampling, limits,
 * storage, reasoning, the text format), each refusing with OpenAI's error body
 * (`invalid_request_error` naming the parameter and a code), in the order OpenAI reports them.
 */
import { createHash } from 'node:crypto';
import { isObject, type Json } from '../json.js';
import { simulatedOpenAiError } from '../openai-chat/errors.js';
import { strictProblem } from '../strict-schema.js';
import { countTokens, schemaFromInstruction } from '../text.js';
import { isRefusal, type Prepared, type Refusal } from '../types.js';
import { answerResponses, type Format, type Prefix, REASONING_TOKENS, type ResponsesCall } from './answer.js';
import { type Family, familyOf } from './family.js';

const SEP = '\u0000';
const PER_MESSAGE_TOKENS = 4;
const IMAGE_TOKENS = 85;
const FILE_TOKENS = 256;
const MIN_OUTPUT_TOKENS = 16;
const INPUT_ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'developer']);
const IMAGE_DETAILS: ReadonlySet<string> = new Set(['auto', 'low', 'high', 'original']);

function badRequest(message: string, param: string | null, code: string | null = null): Refusal {
  return { ok: false, reply: simulatedOpenAiError(400, message, 'invalid_request_error', param, code) };
}

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

type Part = { key: string; tokens: number };

/** One content part of a message: its hash key and tokens. */
function contentPart(part: unknown, at: string, role: string): Part | Refusal {
  if (!isObject(part)) return badRequest(`Invalid type for '${at}': expected an object.`, at);
  return role === 'assistant' ? assistantPart(part, at) : inputPart(part, at);
}

/** An earlier answer's part: its text or its refusal. */
function assistantPart(part: Json, at: string): Part | Refusal {
  const type = part['type'];
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

/** A user, system or developer part: text, an image or a file. */
function inputPart(part: Json, at: string): Part | Refusal {
  const type = part['type'];
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

/**
 * Adds every input message to the digest, and the text of each system or developer message to
 * `systemTexts`; an error reply when an item is not a valid message.
 */
function digestInput(input: unknown, digest: InputDigest, systemTexts: string[]): Refusal | undefined {
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
    const system = role === 'system' || role === 'developer';
    let key = role + SEP;
    let tokens = PER_MESSAGE_TOKENS;
    if (typeof content === 'string') {
      key += content;
      tokens += countTokens(content);
      if (system) systemTexts.push(content);
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const part = contentPart(content[j], `${at}.content[${j}]`, role);
        if (isRefusal(part)) return part;
        key += SEP + part.key;
        tokens += part.tokens;
        const text = (content[j] as Json)['text'];
        if (system && typeof text === 'string') systemTexts.push(text);
      }
    } else {
      return badRequest(`Invalid type for '${at}.content': expected a string or an array of content parts.`, `${at}.content`);
    }
    digest.add(key, tokens);
  }
  return undefined;
}

function readFormat(text: unknown): Format | Refusal {
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

function readModel(body: Json): string | Refusal {
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
  return model;
}

/**
 * The instructions, then the input items, into the digest: the instructions as sent (a
 * response repeats them), and every system text, theirs and the system and developer
 * messages' (where a schema given as an instruction is found).
 */
function readInput(body: Json, digest: InputDigest): { instructions: string | null; systemTexts: string[] } | Refusal {
  const instructions = body['instructions'];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    return badRequest("Invalid type for 'instructions': expected a string.", 'instructions', 'invalid_type');
  }
  const systemTexts: string[] = [];
  if (typeof instructions === 'string' && instructions !== '') {
    digest.add(`instructions${SEP}${instructions}`, PER_MESSAGE_TOKENS + countTokens(instructions));
    systemTexts.push(instructions);
  }
  return digestInput(body['input'], digest, systemTexts) ?? { instructions: typeof instructions === 'string' ? instructions : null, systemTexts };
}

function optionalNumber(body: Json, key: string, min: number, max: number): Refusal | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return badRequest(`Invalid type for '${key}': expected a number, but got ${typeof v} instead.`, key, 'invalid_type');
  if (v < min || v > max) {
    const code = v < min ? 'decimal_below_min_value' : 'decimal_above_max_value';
    return badRequest(`Invalid '${key}': expected a value between ${min} and ${max}, but got ${v} instead.`, key, code);
  }
  return undefined;
}

function checkSampling(body: Json): Refusal | undefined {
  return optionalNumber(body, 'temperature', 0, 2) ?? optionalNumber(body, 'top_p', 0, 1);
}

function readLimits(body: Json): number | null | Refusal {
  const maxOut = body['max_output_tokens'];
  if (maxOut === undefined || maxOut === null) return null;
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
  return maxOut;
}

/** OpenAI's end-user identifier for its abuse detection: a string of at most 64 characters. */
function checkSafetyIdentifier(body: Json): Refusal | undefined {
  const id = body['safety_identifier'];
  if (id === undefined || id === null) return undefined;
  if (typeof id !== 'string') return badRequest(`Invalid type for 'safety_identifier': expected a string, but got ${typeof id} instead.`, 'safety_identifier', 'invalid_type');
  if (id.length > 64) {
    return badRequest(
      `Invalid 'safety_identifier': string too long. Expected a string with maximum length 64, but got a string with length ${id.length} instead.`,
      'safety_identifier',
      'string_above_max_length',
    );
  }
  return undefined;
}

/** `store` and `metadata`, echoed in the answer. */
function readStorage(body: Json): { store: boolean; metadata: Json } | Refusal {
  const store = body['store'];
  if (store !== undefined && store !== null && typeof store !== 'boolean') return badRequest("Invalid type for 'store': expected a boolean.", 'store', 'invalid_type');
  const metadata = body['metadata'];
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) return badRequest("Invalid type for 'metadata': expected an object.", 'metadata', 'invalid_type');
  return { store: store !== false, metadata: isObject(metadata) ? metadata : {} };
}

/** `reasoning.effort` and `reasoning.summary`, as the model's family takes them. */
function readReasoning(body: Json, model: string, family: Family): { effort: string | null; summary: string | null } | Refusal {
  const read = { effort: null as string | null, summary: null as string | null };
  const reasoning = body['reasoning'];
  if (reasoning === undefined || reasoning === null) return read;
  if (!isObject(reasoning)) return badRequest("Invalid type for 'reasoning': expected an object.", 'reasoning', 'invalid_type');
  const e = reasoning['effort'];
  if (e !== undefined && e !== null) {
    if (typeof e !== 'string' || !(e in REASONING_TOKENS)) {
      return badRequest(`Invalid value: '${String(e)}'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', and 'xhigh'.`, 'reasoning.effort', 'invalid_value');
    }
    if (family.classic) return badRequest("Unsupported parameter: 'reasoning.effort' is not supported with this model.", 'reasoning.effort', 'unsupported_parameter');
    if (family.onlyEfforts && !family.onlyEfforts.includes(e)) {
      const supported = family.onlyEfforts.map((effort) => `'${effort}'`).join(', ');
      return badRequest(
        `Unsupported value: 'reasoning.effort' does not support '${e}' with this model. Supported values are: ${supported}.`,
        'reasoning.effort',
        'unsupported_value',
      );
    }
    if (e === 'none' && family.reasoning && !family.effortNone) {
      return badRequest(`Unsupported value: 'none' is not supported with the '${model}' model.`, 'reasoning.effort', 'unsupported_value');
    }
    read.effort = e;
  }
  const s = reasoning['summary'];
  if (s !== undefined && s !== null) {
    if (typeof s !== 'string') return badRequest("Invalid type for 'reasoning.summary': expected a string.", 'reasoning.summary', 'invalid_type');
    read.summary = s;
  }
  return read;
}

/** A reasoning model takes temperature and top_p only at effort `none` (GPT-5.1 and later). */
function checkSamplingWhileReasoning(body: Json, family: Family, effort: string | null): Refusal | undefined {
  if (!family.reasoning) return undefined;
  const sampling = family.effortNone && (effort === null || effort === 'none');
  for (const key of ['temperature', 'top_p'] as const) {
    if (body[key] !== undefined && body[key] !== null && !sampling) {
      return badRequest(`Unsupported parameter: '${key}' is not supported with this model.`, key, 'unsupported_parameter');
    }
  }
  return undefined;
}

/** Validates a Responses API request body; on success returns a ready-to-answer call. */
export function validateResponses(input: unknown): Prepared {
  if (!isObject(input)) return badRequest('The request body must be a JSON object.', null);
  const body = input;
  const model = readModel(body);
  if (isRefusal(model)) return model;
  const digest = new InputDigest(model);
  const read = readInput(body, digest);
  if (isRefusal(read)) return read;
  const { instructions, systemTexts } = read;
  const sampling = checkSampling(body);
  if (sampling) return sampling;
  const maxOutputTokens = readLimits(body);
  if (isRefusal(maxOutputTokens)) return maxOutputTokens;
  const storage = readStorage(body);
  if (isRefusal(storage)) return storage;
  const safetyIdentifier = checkSafetyIdentifier(body);
  if (safetyIdentifier) return safetyIdentifier;
  const family = familyOf(model);
  const reasoning = readReasoning(body, model, family);
  if (isRefusal(reasoning)) return reasoning;
  const samplingWhileReasoning = checkSamplingWhileReasoning(body, family, reasoning.effort);
  if (samplingWhileReasoning) return samplingWhileReasoning;
  const asked = readFormat(body['text']);
  if (isRefusal(asked)) return asked;
  // A schema given as an instruction (a model without native structured output) is followed, as the chat simulator follows it.
  const instructed = asked.type === 'text' ? schemaFromInstruction(systemTexts) : undefined;
  const format: typeof asked = instructed ? { type: 'json_schema', name: 'instructed', schema: instructed as Json, strict: false } : asked;

  const digestBytes = digest.final();
  const call: ResponsesCall = {
    model,
    seed: digestBytes.readUInt32BE(0),
    id: `resp_${digestBytes.toString('hex')}`,
    itemId: digestBytes.toString('hex', 0, 16),
    inputTokens: digest.totalTokens,
    prefixes: digest.prefixes,
    instructions,
    maxOutputTokens,
    ...reasoning,
    temperature: typeof body['temperature'] === 'number' ? body['temperature'] : 1,
    topP: typeof body['top_p'] === 'number' ? body['top_p'] : 1,
    ...storage,
    format,
  };
  return { ok: true, model, answer: (opts) => answerResponses(call, opts.usage, opts.structured) };
}
