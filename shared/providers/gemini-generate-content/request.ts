import { appendAlternating } from '../turns.js';
import { marksCacheBreakpoints } from '../cache-breakpoints.js';
import type { ModelCall } from '../types.js';
import { schemaInstruction } from '../structured-output.js';
import { undocumentedUses, unenforcedKeywords } from './schema.js';
import { thinkingLevelsOf, toThinkingConfig, type ThinkingConfig } from './thinking.js';

export type Part = { text: string } | { inlineData: { mimeType: string; data: string } };

export interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

export interface GenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens: number;
  responseMimeType?: 'application/json';
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: ThinkingConfig;
}

export interface GenerateContentRequest {
  contents: Content[];
  systemInstruction?: { parts: { text: string }[] };
  generationConfig: GenerationConfig;
  tools?: { google_search: Record<string, never> }[];
  cachedContent?: string;
}

/** The body, plus what could not be sent as asked. */
export interface MappedRequest {
  body: GenerateContentRequest;
  warnings: string[];
}

/** Image types Gemini reads inline (PNG, JPEG, WEBP, HEIC, HEIF) plus PDF; GIF is not among them. */
const INLINE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif', 'application/pdf']);

/**
 * The gateway's call as a `generateContent` body. Decisions where Gemini forbids a
 * combination (each one a warning on the result):
 * - cachedContent: the system instruction and tools must live in the cache, so they are not
 *   sent (Gemini answers 400 otherwise); an instruction-mode schema goes into the prompt turn.
 * - webSearch with a response schema: combined on Gemini 3 models; older models reject the
 *   pair, so they get the schema as an instruction instead.
 * - cache_control breakpoints have no Gemini equivalent (caching is the cachedContent resource).
 */
export function toGenerateContentRequest(call: ModelCall): MappedRequest {
  const { entry, tuning } = call;
  const warnings: string[] = [];
  const model = entry.upstreamModel;
  const cached = tuning.cachedContent;
  const search = tuning.webSearch === true;
  const gemini3 = thinkingLevelsOf(model) !== undefined;

  let native = entry.capabilities.structuredOutput === 'native' && call.responseSchema !== undefined;
  if (native && search && !gemini3) {
    native = false;
    warnings.push(`${model} cannot combine Google Search with a response schema; the schema was sent as an instruction`);
  }
  const instruction = call.responseSchema && !native ? schemaInstruction(call.responseSchema) : undefined;

  const systemTexts = call.system.map((block) => block.text);
  if (instruction && !cached) systemTexts.push(instruction);
  if (marksCacheBreakpoints(call)) {
    warnings.push('Gemini has no cache_control breakpoints; they were ignored (use model_tuning.cachedContent)');
  }

  // Consecutive turns of one role become one content of several parts: Gemini's multi-turn
  // examples alternate user and model, and a request that does not has been answered 400
  // ("Please ensure that multiturn requests alternate between user and model").
  const contents: Content[] = [];
  const append = (content: Content): void => appendAlternating(contents, content, (last, next) => last.parts.push(...next.parts));
  for (const turn of call.history) append({ role: turn.role === 'assistant' ? 'model' : 'user', parts: [{ text: turn.content }] });
  append({ role: 'user', parts: promptParts(call, cached ? instruction : undefined, warnings) });

  const generationConfig: GenerationConfig = { maxOutputTokens: call.maxTokens };
  if (call.temperature !== undefined) generationConfig.temperature = call.temperature;
  if (call.topP !== undefined) generationConfig.topP = call.topP;
  if (native && call.responseSchema) {
    generationConfig.responseMimeType = 'application/json';
    generationConfig.responseJsonSchema = call.responseSchema;
    const ignored = unenforcedKeywords(call.responseSchema);
    if (ignored.length > 0) {
      warnings.push(`Gemini does not enforce the schema keywords ${ignored.join(', ')}; the output is validated against them afterwards`);
    }
    const undocumented = undocumentedUses(call.responseSchema);
    if (undocumented.length > 0) {
      warnings.push(
        `Gemini documents no support for ${undocumented.join(' or ')} in a response schema: it may refuse the schema or not enforce it; the output is validated against it afterwards`,
      );
    }
  }
  const thinking = toThinkingConfig(model, tuning.thinkingBudget);
  if (thinking.config) generationConfig.thinkingConfig = thinking.config;
  if (thinking.warning) warnings.push(thinking.warning);

  const body: GenerateContentRequest = { contents, generationConfig };
  if (cached) {
    body.cachedContent = cached;
    if (systemTexts.length > 0) {
      warnings.push('The system prompt was not sent: with cachedContent, Gemini takes the system instruction stored in the cache');
    }
    if (search) warnings.push('webSearch was not enabled: with cachedContent, Gemini takes the tools stored in the cache');
  } else {
    if (systemTexts.length > 0) body.systemInstruction = { parts: systemTexts.map((text) => ({ text })) };
    if (search) body.tools = [{ google_search: {} }];
  }
  return { body, warnings };
}

/** Attachments first, then the prompt text (Gemini's advice for media prompts). */
function promptParts(call: ModelCall, instruction: string | undefined, warnings: string[]): Part[] {
  const parts: Part[] = [];
  for (const attachment of call.attachments) {
    if (INLINE_TYPES.has(attachment.type)) {
      parts.push({ inlineData: { mimeType: attachment.type, data: attachment.base64 } });
    } else {
      warnings.push(`The attachment ${attachment.name} was not sent: Gemini does not accept ${attachment.type}`);
    }
  }
  parts.push({ text: instruction ? `${call.prompt}\n\n${instruction}` : call.prompt });
  return parts;
}
