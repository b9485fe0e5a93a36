/**
 * The simulated chat completions answer: the `chat.completion` object with deterministic
 * content (text, a JSON object, or a value of the requested schema), the dialect's
 * reasoning (hidden, a message field, or inline `<think>`), and its usage block.
 */
import type { Json } from '../json.js';
import { countTokens, generateFromSchema, generateParagraph, schemaCharsFor, truncateToTokens } from '../text.js';
import type { Reply } from '../types.js';
import type { Reasoning, Tokens, VendorProfile } from './dialects.js';
import { openAiHeaders } from './errors.js';

export type Format = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; schema: unknown };

/** A valid request, ready to answer. */
export interface ChatCall {
  model: string;
  vendor: VendorProfile;
  seed: number;
  id: string;
  promptTokens: number;
  cachedTokens: number;
  maxTokens: number | undefined;
  format: Format;
  reasoning: Reasoning;
}

/** Deterministic thinking text of exactly `tokens` simulator tokens, recognisable by its opening. */
export const THINKING_OPENING = 'Simulated reasoning: ';

function thinkingText(model: string, seed: number, tokens: number): string {
  const length = tokens * 4;
  let text = THINKING_OPENING;
  for (let round = 0; text.length < length; round++) text += `${generateParagraph(model, (seed ^ 0x5bd1e995) + round)} `;
  return text.slice(0, length);
}

/** The non-streamed answer to a valid request, with its usage when `usage`. */
export function answerChat(call: ChatCall, usage: boolean, structured?: Json): Reply {
  let content: string;
  switch (call.format.type) {
    case 'json_schema':
      content = JSON.stringify(structured ?? generateFromSchema(call.format.schema, call.seed, schemaCharsFor(call.maxTokens)));
      break;
    case 'json_object':
      content = JSON.stringify({ answer: generateParagraph(call.model, call.seed) });
      break;
    default:
      content = generateParagraph(call.model, call.seed);
  }
  const limit = call.maxTokens ?? Infinity;
  const reasoning = call.vendor.reasoningBeyondLimit ? call.reasoning : { ...call.reasoning, tokens: Math.min(call.reasoning.tokens, limit) };
  const room = call.vendor.reasoningBeyondLimit ? limit : limit - reasoning.tokens;
  let finishReason: 'stop' | 'length' = 'stop';
  if (countTokens(content) > room) {
    content = truncateToTokens(content, room);
    finishReason = 'length';
  }
  const thinking = reasoning.tokens > 0 ? thinkingText(call.model, call.seed, reasoning.tokens) : '';
  if (reasoning.inline && thinking) content = `<think>${thinking}</think>${content}`;
  const message: Json = { role: 'assistant', content, refusal: null };
  if (reasoning.field && thinking) message[reasoning.field] = thinking;

  const tokens: Tokens = { prompt: call.promptTokens, cached: call.cachedTokens, visible: countTokens(content), reasoning };
  const usageBlock = call.vendor.usage(tokens);
  const totalTokens = typeof usageBlock['total_tokens'] === 'number' ? usageBlock['total_tokens'] : 0;
  const body: Json = {
    id: call.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
  };
  if (usage) body['usage'] = usageBlock;
  body['system_fingerprint'] = 'fp_simulator';
  if (call.vendor.extras) Object.assign(body, call.vendor.extras(tokens));
  return { status: 200, headers: openAiHeaders(totalTokens), body: JSON.stringify(body) };
}
