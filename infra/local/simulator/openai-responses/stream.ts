/**
 * Responses API streamed (`stream: true`), made from the whole answer: `response.created`
 * and `response.in_progress` (the response without output or usage), per output item
 * `response.output_item.added` / `done`, for a message's text `response.content_part.added`,
 * several `response.output_text.delta`, `response.output_text.done`,
 * `response.content_part.done`, for a reasoning item its summary as
 * `response.reasoning_summary_text.delta` events; last `response.completed` (or
 * `response.incomplete`) carrying the whole response with its usage. Every event has its
 * `type` and a growing `sequence_number`, named in its `event:` line as OpenAI sends them.
 */
import type { Json } from '../json.js';
import type { Reply } from '../types.js';
import { pieces, sseFrame, SSE_HEADERS, type StreamReply } from '../streaming.js';

export function simulatedResponsesStream(reply: Reply): StreamReply {
  const whole = JSON.parse(reply.body) as Json;
  const frames: string[] = [];
  let sequence = 0;
  const emit = (type: string, fields: Json): void => {
    frames.push(sseFrame({ type, sequence_number: sequence++, ...fields }, type));
  };
  const pending = { ...whole, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  const output = (whole['output'] as Json[] | undefined) ?? [];
  output.forEach((item, outputIndex) => {
    const itemId = item['id'];
    if (item['type'] === 'message') {
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
      const parts = (item['content'] as Json[] | undefined) ?? [];
      parts.forEach((part, contentIndex) => {
        const where = { item_id: itemId, output_index: outputIndex, content_index: contentIndex };
        emit('response.content_part.added', { ...where, part: { ...part, text: '' } });
        const text = typeof part['text'] === 'string' ? part['text'] : '';
        for (const piece of pieces(text)) emit('response.output_text.delta', { ...where, delta: piece, logprobs: [] });
        emit('response.output_text.done', { ...where, text, logprobs: [] });
        emit('response.content_part.done', { ...where, part });
      });
    } else {
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, summary: [] } });
      const summary = (item['summary'] as Json[] | undefined) ?? [];
      summary.forEach((part, summaryIndex) => {
        const where = { item_id: itemId, output_index: outputIndex, summary_index: summaryIndex };
        const text = typeof part['text'] === 'string' ? part['text'] : '';
        for (const piece of pieces(text)) emit('response.reasoning_summary_text.delta', { ...where, delta: piece });
        emit('response.reasoning_summary_text.done', { ...where, text });
      });
    }
    emit('response.output_item.done', { output_index: outputIndex, item });
  });
  emit(whole['status'] === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: whole });
  return { headers: { ...SSE_HEADERS }, frames };
}
