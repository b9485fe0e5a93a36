import type { CacheControl, SystemBlock } from '../../contract/types.js';
import type { ModelCall } from '../types.js';

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}
export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
}
export interface DocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: 'application/pdf'; data: string };
}
export type ContentBlock = TextBlock | ImageBlock | DocumentBlock;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

/** System blocks as written: each `cache_control` is passed through untouched. */
export function toSystemBlocks(system: readonly SystemBlock[]): TextBlock[] {
  return system.map((block) => (block.cache_control ? { type: 'text', text: block.text, cache_control: block.cache_control } : { type: 'text', text: block.text }));
}

/**
 * History turns, then the prompt as the last user turn. A turn with a cache breakpoint
 * needs the block form (the breakpoint sits on its text block). Turns are kept one for
 * one, consecutive same-role turns included: the Messages API combines those itself.
 */
export function toMessages(call: Pick<ModelCall, 'history' | 'prompt' | 'attachments'>): MessageParam[] {
  const messages: MessageParam[] = call.history.map((turn) => ({
    role: turn.role,
    content: turn.cache_control ? [{ type: 'text', text: turn.content, cache_control: turn.cache_control }] : turn.content,
  }));
  messages.push({ role: 'user', content: promptContent(call) });
  return messages;
}

/** Attachments before the question, the order Anthropic recommends for images and documents. */
function promptContent(call: Pick<ModelCall, 'prompt' | 'attachments'>): string | ContentBlock[] {
  if (call.attachments.length === 0) return call.prompt;
  const blocks: ContentBlock[] = call.attachments.map((attachment) =>
    attachment.type === 'application/pdf'
      ? { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: attachment.base64 } }
      : { type: 'image', source: { type: 'base64', media_type: attachment.type, data: attachment.base64 } },
  );
  blocks.push({ type: 'text', text: call.prompt });
  return blocks;
}
