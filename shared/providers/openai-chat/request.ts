import type { ProviderId } from '../../catalog/types.js';
import type { ModelCall } from '../types.js';
import { schemaInstruction } from '../structured-output.js';

type Part =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'file'; file: { filename: string; file_data: string } };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | Part[];
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  reasoning_effort?: string;
  response_format?: { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict: true } };
  stream: false;
}

/** Vendors that still name the output limit `max_tokens` (the others take `max_completion_tokens`). */
const MAX_TOKENS_NAME: Partial<Record<ProviderId, 'max_tokens'>> = { mistral: 'max_tokens', deepseek: 'max_tokens' };

/** The gateway's call as an OpenAI-compatible chat completions body. */
export function toChatRequest(call: ModelCall): ChatRequest {
  const { entry } = call;
  const native = entry.capabilities.structuredOutput === 'native' && call.responseSchema !== undefined;
  const systemTexts = call.system.map((block) => block.text);
  if (call.responseSchema && !native) systemTexts.push(schemaInstruction(call.responseSchema));

  const messages: ChatMessage[] = [];
  if (systemTexts.length > 0) messages.push({ role: 'system', content: systemTexts.join('\n\n') });
  for (const turn of call.history) messages.push({ role: turn.role, content: turn.content });
  messages.push({ role: 'user', content: userContent(call) });

  const request: ChatRequest = { model: entry.upstreamModel, messages, stream: false };
  if (call.temperature !== undefined) request.temperature = call.temperature;
  if (call.topP !== undefined) request.top_p = call.topP;
  request[MAX_TOKENS_NAME[entry.provider] ?? 'max_completion_tokens'] = call.maxTokens;
  if (call.tuning.reasoningEffort !== undefined) request.reasoning_effort = call.tuning.reasoningEffort;
  if (native && call.responseSchema) {
    request.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: call.responseSchema, strict: true } };
  }
  return request;
}

function userContent(call: ModelCall): string | Part[] {
  if (call.attachments.length === 0) return call.prompt;
  const parts: Part[] = [{ type: 'text', text: call.prompt }];
  for (const attachment of call.attachments) {
    const dataUrl = `data:${attachment.type};base64,${attachment.base64}`;
    parts.push(
      attachment.type === 'application/pdf'
        ? { type: 'file', file: { filename: attachment.name, file_data: dataUrl } }
        : { type: 'image_url', image_url: { url: dataUrl } },
    );
  }
  return parts;
}
