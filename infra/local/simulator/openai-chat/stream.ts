/**
 * Chat completions streamed (`stream: true`), made from the whole answer: `chat.completion.chunk`
 * objects as `data:` lines, the reasoning field (`reasoning_content`, `reasoning`) first in
 * its own deltas, the content in several, then the chunk with `finish_reason`; the usage
 * chunk (`choices: []`) when `stream_options.include_usage` asked for it or the vendor always
 * sends it (Mistral; Groq in `x_groq.usage`); then `data: [DONE]`.
 */
import type { Json } from '../json.js';
import { isObject } from '../json.js';
import type { Reply } from '../types.js';
import { pieces, sseFrame, SSE_HEADERS, type StreamReply } from '../streaming.js';

/** Vendors whose streamed answer carries usage without being asked (Groq in `x_groq.usage` only). */
const USAGE_ALWAYS: ReadonlySet<string> = new Set(['mistral', 'groq']);

export function simulatedChatStream(reply: Reply, request: unknown, provider: string): StreamReply {
  const whole = JSON.parse(reply.body) as Json;
  const choice = ((whole['choices'] as Json[] | undefined)?.[0] ?? {}) as Json;
  const message = (choice['message'] ?? {}) as Json;
  const head = { id: whole['id'], object: 'chat.completion.chunk', created: whole['created'], model: whole['model'], system_fingerprint: whole['system_fingerprint'] };
  const chunk = (delta: Json, finishReason: unknown = null): string => sseFrame({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
  const frames: string[] = [chunk({ role: 'assistant', content: '' })];
  for (const field of ['reasoning_content', 'reasoning']) {
    if (typeof message[field] === 'string') for (const piece of pieces(message[field] as string)) frames.push(chunk({ [field]: piece }));
  }
  if (typeof message['content'] === 'string') for (const piece of pieces(message['content'])) frames.push(chunk({ content: piece }));
  frames.push(chunk({}, choice['finish_reason'] ?? 'stop'));
  const options = isObject(request) ? request['stream_options'] : undefined;
  const asked = isObject(options) && options['include_usage'] === true;
  if (whole['usage'] !== undefined && (asked || USAGE_ALWAYS.has(provider))) {
    const usageChunk: Json = { ...head, choices: [] };
    if (asked || provider !== 'groq') usageChunk['usage'] = whole['usage'];
    if (isObject(whole['x_groq'])) usageChunk['x_groq'] = { ...whole['x_groq'], usage: whole['usage'] };
    frames.push(sseFrame(usageChunk));
  }
  frames.push(sseFrame('[DONE]'));
  return { headers: { ...SSE_HEADERS }, frames };
}
