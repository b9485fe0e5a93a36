/**
 * `streamGenerateContent?alt=sse`, made from the whole answer: `data:` lines, each a
 * GenerateContentResponse — thought parts in their own chunk, the text in several chunks,
 * the last chunk with the finishReason, the grounding metadata and the usageMetadata (the
 * earlier chunks carry only the prompt count, as Gemini's do).
 */
import type { Json } from '../json.js';
import type { Reply } from '../types.js';
import { pieces, sseFrame, SSE_HEADERS, type StreamReply } from '../streaming.js';

export function simulatedGenerateContentStream(reply: Reply): StreamReply {
  const whole = JSON.parse(reply.body) as Json;
  const candidate = ((whole['candidates'] as Json[] | undefined)?.[0] ?? {}) as Json;
  const content = (candidate['content'] ?? {}) as Json;
  const parts = (content['parts'] as Json[] | undefined) ?? [];
  const metadata = whole['usageMetadata'] as Json | undefined;
  const tail = { modelVersion: whole['modelVersion'], responseId: whole['responseId'] };
  const early = metadata === undefined ? {} : { usageMetadata: { promptTokenCount: metadata['promptTokenCount'], totalTokenCount: metadata['promptTokenCount'] } };
  const chunks: Json[][] = [];
  for (const part of parts) {
    if (part['thought'] === true || typeof part['text'] !== 'string') chunks.push([part]);
    else for (const piece of pieces(part['text'])) chunks.push([{ text: piece }]);
  }
  const frames = chunks.map((chunkParts, i) => {
    const last = i === chunks.length - 1;
    const chunkCandidate: Json = { content: { parts: chunkParts, role: 'model' }, index: 0 };
    if (last) Object.assign(chunkCandidate, withoutContent(candidate));
    return sseFrame({ candidates: [chunkCandidate], ...(last ? (metadata ? { usageMetadata: metadata } : {}) : early), ...tail });
  });
  if (chunks.length === 0) frames.push(sseFrame({ candidates: [{ ...candidate, content: { role: 'model' } }], ...(metadata ? { usageMetadata: metadata } : {}), ...tail }));
  return { headers: { ...SSE_HEADERS }, frames };
}

function withoutContent(candidate: Json): Json {
  const { content: _content, ...rest } = candidate;
  return rest;
}
