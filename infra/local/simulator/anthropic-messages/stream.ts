/**
 * Messages streamed (`stream: true`), made from the whole answer, as Anthropic sends it:
 * `message_start` (the message without content, its usage with the input and cache classes
 * and output_tokens 1), per block `content_block_start`, deltas (`thinking_delta` then one
 * `signature_delta` for a thinking block, `text_delta` for text), `content_block_stop`, a
 * `ping`, `message_delta` (stop_reason and the cumulative usage), `message_stop`. Each event
 * named in its `event:` line and its data's `type`.
 */
import type { Json } from '../json.js';
import type { Reply } from '../types.js';
import { pieces, sseFrame, SSE_HEADERS, type StreamReply } from '../streaming.js';

export function simulatedMessagesStream(reply: Reply): StreamReply {
  const whole = JSON.parse(reply.body) as Json;
  const frames: string[] = [];
  const emit = (type: string, fields: Json): void => {
    frames.push(sseFrame({ type, ...fields }, type));
  };
  const usage = whole['usage'] as Json | undefined;
  const startUsage = usage === undefined ? undefined : { ...usage, output_tokens: 1 };
  emit('message_start', { message: { ...whole, content: [], stop_reason: null, stop_sequence: null, ...(startUsage ? { usage: startUsage } : {}) } });
  const blocks = (whole['content'] as Json[] | undefined) ?? [];
  blocks.forEach((block, index) => {
    if (block['type'] === 'thinking') {
      emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of pieces(String(block['thinking'] ?? ''))) emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: block['signature'] } });
    } else {
      emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const piece of pieces(String(block['text'] ?? ''))) emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    emit('content_block_stop', { index });
    if (index === 0) emit('ping', {});
  });
  emit('message_delta', { delta: { stop_reason: whole['stop_reason'], stop_sequence: whole['stop_sequence'] ?? null }, ...(usage ? { usage } : {}) });
  emit('message_stop', {});
  return { headers: { ...SSE_HEADERS }, frames };
}
