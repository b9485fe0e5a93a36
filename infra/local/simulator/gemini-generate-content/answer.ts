/**
 * The simulated Gemini answer: a GenerateContentResponse with deterministic text (JSON of the
 * response schema when asked), thought parts when included, grounding metadata with Google
 * Search, and usageMetadata (thinking counts against maxOutputTokens).
 */
import type { Json } from '../json.js';
import { countTokens, generateFromSchema, generateParagraph, schemaCharsFor, truncateToTokens } from '../text.js';
import type { Reply } from '../types.js';
import { googleHeaders } from './errors.js';

/** A valid request, ready to answer. */
export interface GeminiCall {
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

/** The non-streamed answer to a valid request, with its usageMetadata when `usage`. */
export function answerGenerateContent(call: GeminiCall, usage: boolean, structured?: Json): Reply {
  let text: string;
  if (call.json) {
    text = JSON.stringify(
      call.schema !== undefined ? (structured ?? generateFromSchema(call.schema, call.seed, schemaCharsFor(call.maxTokens))) : { answer: generateParagraph(call.model, call.seed) },
    );
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
  return { status: 200, headers: googleHeaders(), body: JSON.stringify(body) };
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
