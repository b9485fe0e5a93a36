import { MAX_FIELDS, TOO_MANY_FIELDS } from './json-fields.js';
import type { ErrorObject } from 'ajv';
import { requiresUserFirst } from '../catalog/conversation.js';
import { closestModelIds, resolveModel } from '../catalog/index.js';
import type { AttachmentType } from '../catalog/types.js';
import { ValidationError, type FieldError } from '../errors.js';
import validatePromptRequestBody from './generated/prompt-request-validator.js';
import { LIMITS } from './limits.js';
import { closest } from '../text/closest.js';
import { knownFieldsAt } from './field-names.js';
import { escapePointer, unescapePointer } from './pointer.js';
import { promptRequestSchema } from './request-schema.js';
import { checkResponseSchema } from './response-schema.js';
import { compileRequestSchema } from './schema-checker.js';
import type { JudgeWeights, ModelTuning, PromptRequest, PromptRequestBody, RequestedModel, SystemBlock } from './types.js';
import { exceeds } from './json-shape.js';
import { cutWhole, isBlank } from '../text/characters.js';

/** Compiled ahead of time (`npm run contract`): compiling at start cost a cold start about 60 ms. */
const validateBody = validatePromptRequestBody;

export const DEFAULT_JUDGE_WEIGHTS: JudgeWeights = { accuracy: 1, speed: 0, cost: 0 };

/**
 * The contract check: the JSON Schema first, then the rules a schema cannot say (catalog
 * lookups, per-model tuning, attachments against capabilities). Throws a ValidationError
 * listing every failing field, in the contract's field order; returns the resolved request
 * otherwise. A body the schema refuses still gets the later rules for the fields it
 * accepted: an unknown model ID is named beside a bad temperature, not in a second round.
 * Synchronous and cheap: a `response_schema` is checked against the compile budget here,
 * and compiled by `checkPromptRequest` on the schema thread. `catalogAt` is the instant the
 * catalog is read at (which model answers a retired ID: shared/catalog); a judged request's
 * workflow tasks validate its body again with the instant the `api` function read it at.
 */
export function validatePromptRequest(body: unknown, catalogAt = Date.now()): PromptRequest {
  // Suggestions cost an edit distance per known name: a body of thousands of unknown names gets them for the first few only.
  const suggest = suggestions(SUGGESTED_NAMES);
  // Every field of the body costs the schema check and its error; a body of many thousands is refused before either runs.
  if (exceeds(body, { fields: MAX_FIELDS })) throw new ValidationError([{ field: '', message: TOO_MANY_FIELDS }]);
  const valid = validateBody(body);
  const schemaErrors = valid ? [] : (validateBody.errors ?? []).filter((error) => error.instancePath.length <= MAX_ERROR_PATH && !belowLongKey(error.instancePath));
  const errors = toFieldErrors(schemaErrors, suggest);
  const refused = refusedFields(schemaErrors);
  if (refused === EVERY_FIELD) throw new ValidationError(errors);
  // The fields the schema accepted, each as the contract types it; a refused one as if it were not sent.
  const accepted = acceptedFields(body as Record<string, unknown>, refused);
  // The rules below read `accepted` alone: a refused field's value may be of any type, and any size.
  const models = accepted.models ? resolveIds(accepted.models, '/models', errors, suggest, catalogAt) : [];
  const judges = resolveIds(accepted.judges ?? [], '/judges', errors, suggest, catalogAt);
  // Whether a tuned model was requested is unknown while `models` is refused.
  if (accepted.models) applyTuning(accepted, models, errors, suggest, catalogAt);
  // A refused list resolves no model: no judge call counted of it.
  checkJudgeCalls(models.length, judges.length, errors);
  checkCacheBreakpoints(accepted, errors);
  checkBlankText(accepted, errors);
  checkConversation(accepted, models, errors);
  checkAttachments(accepted, models, errors);
  if (accepted.response_schema !== undefined) {
    errors.push(
      ...(exceeds(accepted.response_schema, { depth: MAX_SCHEMA_JSON_DEPTH })
        ? [{ field: '/response_schema', message: `nests deeper than ${MAX_SCHEMA_JSON_DEPTH} levels of JSON` }]
        : checkResponseSchema(accepted.response_schema, '/response_schema')),
    );
  }
  if (!valid || errors.length > 0) throw new ValidationError(inFieldOrder(errors));
  return checked(body as PromptRequestBody, models, judges, catalogAt);
}

/** The resolved request of a body every check passed. */
function checked(body: PromptRequestBody, models: RequestedModel[], judges: RequestedModel[], catalogAt: number): PromptRequest {
  return {
    body,
    models,
    judges,
    judgeWeights: { ...DEFAULT_JUDGE_WEIGHTS, ...body.judge_weights },
    system: toSystemBlocks(body.system_prompt),
    catalogAt,
    ...(body.response_schema !== undefined ? { outputSchema: JSON.stringify(body.response_schema) } : {}),
  };
}

/**
 * The longest `instancePath` of an error about a value the contract could take: below
 * `/model_tuning/<key>` (a key of at most LIMITS.modelIdChars characters, each escaped to two
 * at most), the longest tuning parameter. A longer one lies below a key that is no model ID,
 * which its own error names (`is not a valid model ID key`); each error below a key of
 * megabytes cost a copy of it (a 4 MB key over 1,000 parameters ran out of memory).
 * Compared by length, which reads none of the path.
 */
const MAX_ERROR_PATH = '/model_tuning/'.length + 2 * LIMITS.modelIdChars + '/reasoningEffort'.length;

const TUNING = '/model_tuning/';

/**
 * Whether a path lies at or below a `model_tuning` key over LIMITS.modelIdChars characters: such
 * a key is no model ID, named once by its own error (`is not a valid model ID key`), and what is
 * below it (`must be object`, an unknown parameter) is not listed. Reads at most MAX_ERROR_PATH
 * characters (the paths are filtered by length first).
 */
function belowLongKey(path: string): boolean {
  if (!path.startsWith(TUNING)) return false;
  const end = path.indexOf('/', TUNING.length);
  return unescapePointer(path.slice(TUNING.length, end === -1 ? undefined : end)).length > LIMITS.modelIdChars;
}

/**
 * A caller's member name (a `model_tuning` key, an unknown field) as a pointer segment: one over
 * LIMITS.modelIdChars characters cut to them (never inside a surrogate pair, whose half strict
 * JSON readers refuse) and `…`, so that a name of megabytes is not sent back (in the field and in
 * the message).
 */
function nameSegment(key: string): string {
  return key.length > LIMITS.modelIdChars ? `${escapePointer(cutWhole(key, LIMITS.modelIdChars))}…` : escapePointer(key);
}

/** What refusedFields answers when the body itself is refused (not an object): no field of it is read. */
const EVERY_FIELD = 'every field';

/**
 * The top-level fields the schema refused, by name: those an error is about (at or below
 * them, or `required` and missing). An unknown field's error refuses none of the known ones.
 * With ajv's allErrors, a known field no error names holds what its schema says.
 */
function refusedFields(errors: readonly ErrorObject[]): Set<string> | typeof EVERY_FIELD {
  const refused = new Set<string>();
  for (const error of errors) {
    const path = error.instancePath;
    if (path !== '') {
      const end = path.indexOf('/', 1);
      refused.add(unescapePointer(path.slice(1, end === -1 ? undefined : end)));
    } else if (error.keyword === 'required') {
      refused.add(String((error.params as { missingProperty: unknown }).missingProperty));
    } else if (error.keyword !== 'additionalProperties') {
      return EVERY_FIELD;
    }
  }
  return refused;
}

/** The body without the fields the schema refused: what the rules after the schema may read. */
function acceptedFields(body: Record<string, unknown>, refused: ReadonlySet<string>): Partial<PromptRequestBody> {
  if (refused.size === 0) return body as Partial<PromptRequestBody>;
  return Object.fromEntries(Object.entries(body).filter(([name]) => !refused.has(name))) as Partial<PromptRequestBody>;
}

/** Each top-level field's place in the contract (the schema's order); an unknown field's is first, where ajv lists it. */
const FIELD_ORDER = new Map(Object.keys(promptRequestSchema.properties).map((name, i) => [name, i]));

function fieldRank(field: string): number {
  const end = field.indexOf('/', 1);
  return FIELD_ORDER.get(unescapePointer(field.slice(1, end === -1 ? undefined : end))) ?? -1;
}

/** Errors ordered by their top-level field's place in the contract; those of one field stay in the order they were found. */
function inFieldOrder(errors: FieldError[]): FieldError[] {
  return errors
    .map((error, at) => ({ error, at, rank: fieldRank(error.field) }))
    .sort((a, b) => a.rank - b.rank || a.at - b.at)
    .map(({ error }) => error);
}

/**
 * JSON nesting allowed in `response_schema`, the one open object of the body: its 10 schema
 * levels take about two each, `enum`/`const` values the rest. Checked without recursion
 * before anything that recurses (JSON.stringify, ajv) walks it: a deeper value (a 2 MB body
 * can nest a million levels) would overflow the stack, a 500 instead of a 400.
 */
const MAX_SCHEMA_JSON_DEPTH = 64;

/** A string system prompt that is blank (empty or whitespace only) means no system prompt: nothing to send. */
function toSystemBlocks(systemPrompt: PromptRequestBody['system_prompt']): SystemBlock[] {
  if (systemPrompt === undefined) return [];
  if (typeof systemPrompt === 'string') return isBlank(systemPrompt) ? [] : [{ type: 'text', text: systemPrompt }];
  return systemPrompt;
}

/** How many unknown names of one request get a suggestion. */
const SUGGESTED_NAMES = 5;

/** Runs `find` for the first `budget` names only, and finds nothing for the rest. */
type Suggest = (find: () => string[]) => string[];

function suggestions(budget: number): Suggest {
  let left = budget;
  return (find) => (left-- > 0 ? find() : []);
}

/** An unknown model ID's message, naming the closest known IDs when some are close. */
function unknownModelId(id: string, suggest: Suggest): string {
  const near = suggest(() => closestModelIds(id));
  return `unknown model ID "${id}"${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`;
}

function resolveIds(ids: readonly string[], path: string, errors: FieldError[], suggest: Suggest, catalogAt: number): RequestedModel[] {
  const resolved: RequestedModel[] = [];
  const seen = new Map<string, number>();
  ids.forEach((id, index) => {
    const entry = resolveModel(id, catalogAt);
    if (!entry) {
      errors.push({ field: `${path}/${index}`, message: unknownModelId(id, suggest) });
      return;
    }
    const first = seen.get(entry.id);
    if (first !== undefined) {
      errors.push({ field: `${path}/${index}`, message: `"${id}" names the same model as ${path}/${first}` });
      return;
    }
    seen.set(entry.id, index);
    resolved.push({ requestedId: id, entry, tuning: {} });
  });
  return resolved;
}

function applyTuning(body: Partial<PromptRequestBody>, models: RequestedModel[], errors: FieldError[], suggest: Suggest, catalogAt: number): void {
  const tuned = new Set<string>();
  for (const [key, params] of Object.entries(body.model_tuning ?? {})) {
    const field = `/model_tuning/${escapePointer(key)}`;
    const entry = resolveModel(key, catalogAt);
    const model = entry && models.find((m) => m.entry === entry);
    if (!entry || !model) {
      errors.push({ field, message: entry ? `"${key}" is not one of the requested models` : unknownModelId(key, suggest) });
      continue;
    }
    if (tuned.has(entry.id)) {
      errors.push({ field, message: `"${key}" is tuned twice (under two spellings of the same model)` });
      continue;
    }
    tuned.add(entry.id);
    const rules = entry.capabilities.tuning;
    const accepted = Object.keys(rules);
    if (accepted.length === 0) {
      errors.push({ field, message: `${entry.id} takes no tuning parameters` });
      continue;
    }
    const before = errors.length;
    for (const [param, value] of Object.entries(params) as [keyof ModelTuning, unknown][]) {
      const paramField = `${field}/${param}`;
      if (!(param in rules)) {
        errors.push({ field: paramField, message: `${entry.id} does not accept ${param}; it accepts ${accepted.join(', ')}` });
      } else if (param === 'thinkingBudget' && rules.thinkingBudget) {
        const { min, max } = rules.thinkingBudget;
        const budget = value as number;
        if (budget !== 0 && (budget < min || budget > max)) {
          errors.push({ field: paramField, message: min === 0 ? `must be 0 to ${max} for ${entry.id}` : `must be 0 (disabled) or ${min} to ${max} for ${entry.id}` });
        }
      } else if (param === 'reasoningEffort' && rules.reasoningEffort && !rules.reasoningEffort.includes(value as string)) {
        errors.push({ field: paramField, message: `must be one of ${rules.reasoningEffort.join(', ')} for ${entry.id}` });
      }
    }
    if (errors.length === before) model.tuning = params;
  }
}

function checkJudgeCalls(models: number, judges: number, errors: FieldError[]): void {
  const calls = judges * models * (models - 1);
  if (calls > LIMITS.judgeCalls) {
    errors.push({
      field: '/judges',
      message: `${judges} judges x ${models} models make ${calls} judge calls; the limit is ${LIMITS.judgeCalls}`,
    });
  }
}

function checkCacheBreakpoints(body: Partial<PromptRequestBody>, errors: FieldError[]): void {
  const marked: string[] = [];
  if (Array.isArray(body.system_prompt)) {
    body.system_prompt.forEach((block, i) => {
      if (block.cache_control) marked.push(`/system_prompt/${i}/cache_control`);
    });
  }
  body.history?.forEach((turn, i) => {
    if (turn.cache_control) marked.push(`/history/${i}/cache_control`);
  });
  if (marked.length > LIMITS.cacheBreakpoints) {
    errors.push({
      field: marked[LIMITS.cacheBreakpoints] as string,
      message: `at most ${LIMITS.cacheBreakpoints} cache_control breakpoints are allowed; this request has ${marked.length}`,
    });
  }
}

/**
 * Text that is blank (empty or whitespace only) is refused by Anthropic, Bedrock and Gemini
 * (docs/providers.md), and carries nothing a model could answer: a 400 for every model.
 */
function checkBlankText(body: Partial<PromptRequestBody>, errors: FieldError[]): void {
  const blank = 'must contain non-whitespace text';
  if (body.prompt !== undefined && isBlank(body.prompt)) errors.push({ field: '/prompt', message: blank });
  // The judges' grading instructions: blank, they are no instructions (the default ones apply only when none is sent).
  if (body.judge_prompt !== undefined && isBlank(body.judge_prompt)) errors.push({ field: '/judge_prompt', message: blank });
  if (Array.isArray(body.system_prompt)) {
    body.system_prompt.forEach((block, i) => {
      if (isBlank(block.text)) errors.push({ field: `/system_prompt/${i}/text`, message: blank });
    });
  }
  body.history?.forEach((turn, i) => {
    if (isBlank(turn.content)) errors.push({ field: `/history/${i}/content`, message: blank });
  });
}

/**
 * The conversation as every vendor takes it (docs/providers.md): a history that starts with
 * an assistant turn is refused by some vendors only, a 400 when one of their models is
 * requested, naming them.
 */
function checkConversation(body: Partial<PromptRequestBody>, models: RequestedModel[], errors: FieldError[]): void {
  if (body.history?.[0]?.role !== 'assistant') return;
  const refusing = models.filter((m) => requiresUserFirst(m.entry.provider));
  if (refusing.length === 0) return;
  const vendors = [...new Set(refusing.map((m) => requiresUserFirst(m.entry.provider)))];
  errors.push({
    field: '/history/0/role',
    message: `must be user for ${refusing.map((m) => m.requestedId).join(', ')}: ${vendors.join(', ')} ${vendors.length === 1 ? 'refuses' : 'refuse'} a conversation that starts with an assistant turn`,
  });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Leading bytes of each accepted media type. */
const SIGNATURES: Record<AttachmentType, (head: Buffer) => boolean> = {
  'image/png': (h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (h) => h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff,
  'image/gif': (h) => /^GIF8[79]a/.test(h.toString('latin1', 0, 6)),
  'image/webp': (h) => h.toString('latin1', 0, 4) === 'RIFF' && h.toString('latin1', 8, 12) === 'WEBP',
  'application/pdf': (h) => h.toString('latin1', 0, 5) === '%PDF-',
};

function checkAttachments(body: Partial<PromptRequestBody>, models: RequestedModel[], errors: FieldError[]): void {
  body.attachments?.forEach((attachment, i) => {
    const { base64, type } = attachment;
    if (base64.length % 4 !== 0 || !BASE64.test(base64)) {
      const hint = base64.startsWith('data:') ? ' (send the bare base64, without a data: URL prefix)' : '';
      errors.push({ field: `/attachments/${i}/base64`, message: `is not valid base64${hint}` });
      return;
    }
    if (!SIGNATURES[type](Buffer.from(base64.slice(0, 16), 'base64'))) {
      errors.push({ field: `/attachments/${i}/base64`, message: `does not hold ${type} content` });
      return;
    }
    const unable = models.filter((m) => !m.entry.capabilities.attachments.includes(type));
    if (unable.length > 0) {
      // A retired ID answered by another model takes what that model takes: where its own model took the type, say which answers.
      const answeredBy = unable.flatMap((m) =>
        m.entry.servedBy && resolveModel(m.requestedId, 0)?.capabilities.attachments.includes(type) ? [` (${m.requestedId}: ${m.entry.servedBy})`] : [],
      );
      errors.push({ field: `/attachments/${i}/type`, message: `${type} is not supported by ${unable.map((m) => m.requestedId).join(', ')}${answeredBy.join('')}` });
    }
  });
  const pdfs = body.attachments?.filter((attachment) => attachment.type === 'application/pdf').length ?? 0;
  const fewer = models.filter((m) => (m.entry.capabilities.mostPdfs ?? Infinity) < pdfs);
  if (fewer.length > 0) {
    const limits = fewer.map((m) => `${m.requestedId} at most ${m.entry.capabilities.mostPdfs}`).join(', ');
    errors.push({ field: '/attachments', message: `holds ${pdfs} PDFs: ${fewer.length === 1 ? 'its vendor takes' : 'their vendors take'} fewer in one call (${limits})` });
  }
}

/** ajv errors as one entry per field, in the contract's words. */
export function toFieldErrors(errors: readonly ErrorObject[], suggest: Suggest = suggestions(SUGGESTED_NAMES)): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const mapped = mapAjvError(error, suggest);
    if (!mapped) continue;
    const key = `${mapped.field}\u0000${mapped.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(mapped);
  }
  return out;
}

/** Field names compared for suggestions: case and underscores aside (`max_tokens` is `maxTokens`). */
const normaliseField = (name: string) => name.toLowerCase().replace(/_/g, '');

function mapAjvError(error: ErrorObject, suggest: Suggest): FieldError | undefined {
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const near = suggest(() => closest(name, knownFieldsAt(path), normaliseField, 1));
      return { field: `${path}/${nameSegment(name)}`, message: near.length > 0 ? `is not a known field; did you mean "${near[0]}"?` : 'is not a known field' };
    }
    case 'required':
      return { field: `${path}/${escapePointer(String(params.missingProperty))}`, message: 'is required' };
    case 'propertyNames':
      // Reported twice by ajv (the name's own failure, then this one); keep the clearer one.
      return { field: `${path}/${nameSegment(String(params.propertyName))}`, message: 'is not a valid model ID key' };
    case 'enum': {
      // The values the model takes, not every model's: `none` is not one of o3's.
      const tuned = /^\/model_tuning\/([^/]+)\/reasoningEffort$/.exec(path);
      const entry = tuned ? resolveModel(unescapePointer(tuned[1]!)) : undefined;
      const efforts = entry?.capabilities.tuning.reasoningEffort;
      if (entry && efforts) return { field: path, message: `must be one of ${efforts.join(', ')} for ${entry.id}` };
      return { field: path, message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}` };
    }
    case 'const':
      return { field: path, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'type': {
      const type = params.type;
      return { field: path, message: `must be ${Array.isArray(type) ? type.join(' or ') : String(type)}` };
    }
    default:
      // maxLength & co. on a property-name check carry the path of the object; the propertyNames error names the key.
      if (error.propertyName !== undefined) return undefined;
      return { field: path, message: error.message ?? 'is invalid' };
  }
}

/**
 * The whole request check: `validatePromptRequest`, then the `response_schema` compiled on
 * the schema thread (a 400 naming the field when it does not compile, a 503 when the
 * thread cannot answer). What the api function and the workflow's tasks run before
 * anything is reserved or sent. `scope`: the account that sent it (schema-checker.ts).
 */
export async function checkPromptRequest(body: unknown, scope = ''): Promise<PromptRequest> {
  const request = validatePromptRequest(body);
  await compileRequestSchema(request, undefined, scope);
  return request;
}
