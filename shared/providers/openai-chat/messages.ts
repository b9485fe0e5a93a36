import { UpstreamError } from '../errors.js';
import { schemaInstruction } from '../structured-output.js';
import { appendAlternating } from '../turns.js';
import type { ModelCall } from '../types.js';
import type { ChatDialect } from './dialects.js';
import { PROVIDER_NAMES } from '../../catalog/types.js';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } | string }
  | { type: 'file'; file: { filename: string; file_data: string } }
  | { type: 'document_url'; document_url: string; document_name: string };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ContentPart[];
}

/**
 * The conversation as chat messages: one system message (the blocks joined, plus the schema
 * instruction when the schema is not enforced natively), the history, then the prompt with its
 * attachments. `cache_control` marks are not sent (these vendors take none; toChatRequest warns).
 */
export function toMessages(call: ModelCall, dialect: ChatDialect, schemaAsInstruction: boolean): ChatMessage[] {
  const systemTexts = call.system.map((block) => block.text);
  if (schemaAsInstruction && call.responseSchema) systemTexts.push(schemaInstruction(call.responseSchema));

  const messages: ChatMessage[] = [];
  if (systemTexts.length > 0) messages.push({ role: 'system', content: systemTexts.join('\n\n') });
  const append = (message: ChatMessage): void => {
    if (dialect.alternatingTurns) appendAlternating(messages, message, mergeInto);
    else messages.push(message);
  };
  for (const turn of call.history) append({ role: turn.role, content: turn.content });
  append({ role: 'user', content: userContent(call, dialect) });
  return messages;
}

/** Two turns of one role as one message: texts joined by a blank line, parts kept in order. */
function mergeInto(last: ChatMessage, next: ChatMessage): void {
  last.content = typeof last.content === 'string' && typeof next.content === 'string' ? `${last.content}\n\n${next.content}` : [...asParts(last.content), ...asParts(next.content)];
}

function asParts(content: ChatMessage['content']): ContentPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function userContent(call: ModelCall, dialect: ChatDialect): string | ContentPart[] {
  if (call.attachments.length === 0) return call.prompt;
  const parts: ContentPart[] = [{ type: 'text', text: call.prompt }];
  for (const attachment of call.attachments) {
    const dataUrl = `data:${attachment.type};base64,${attachment.base64}`;
    if (attachment.type !== 'application/pdf') {
      parts.push({ type: 'image_url', image_url: dialect.imageUrl === 'string' ? dataUrl : { url: dataUrl } });
    } else if (dialect.pdf === 'file') {
      parts.push({ type: 'file', file: { filename: attachment.name, file_data: dataUrl } });
    } else if (dialect.pdf === 'document_url') {
      parts.push({ type: 'document_url', document_url: dataUrl, document_name: attachment.name });
    } else {
      // The catalog let a PDF through to a vendor whose chat completions have no form for it.
      throw new UpstreamError('attachment_not_supported', `${PROVIDER_NAMES[dialect.id]} chat completions take no PDF attachments`);
    }
  }
  return parts;
}
