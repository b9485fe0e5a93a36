/**
 * ConverseStream (`POST /model/{modelId}/converse-stream`), made from the whole answer, in
 * the binary `application/vnd.amazon.eventstream` encoding (encoded by the AWS SDK's own
 * codec): `messageStart`, per content block `contentBlockStart` (for a tool use),
 * `contentBlockDelta` events (text, or the tool input's JSON in pieces), `contentBlockStop`,
 * then `messageStop` with the stopReason and `metadata` with usage and metrics. Each message
 * has the headers `:event-type`, `:content-type` application/json and `:message-type` event.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import type { Json } from '../json.js';
import type { Reply } from '../types.js';
import { pieces, type StreamReply } from '../streaming.js';

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

function message(type: string, payload: Json): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: new Uint8Array(Buffer.from(JSON.stringify(payload), 'utf8')),
  });
}

export function simulatedConverseStream(reply: Reply): StreamReply {
  const whole = JSON.parse(reply.body) as Json;
  const output = (whole['output'] ?? {}) as Json;
  const msg = (output['message'] ?? {}) as Json;
  const frames: Uint8Array[] = [message('messageStart', { role: 'assistant' })];
  const blocks = (msg['content'] as Json[] | undefined) ?? [];
  blocks.forEach((block, contentBlockIndex) => {
    const toolUse = block['toolUse'] as Json | undefined;
    if (toolUse) {
      frames.push(message('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId: toolUse['toolUseId'], name: toolUse['name'] } } }));
      const input = JSON.stringify(toolUse['input'] ?? {});
      for (const piece of splitJson(input)) frames.push(message('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input: piece } } }));
    } else {
      for (const piece of pieces(String(block['text'] ?? ''))) frames.push(message('contentBlockDelta', { contentBlockIndex, delta: { text: piece } }));
    }
    frames.push(message('contentBlockStop', { contentBlockIndex }));
  });
  frames.push(message('messageStop', { stopReason: whole['stopReason'] }));
  const metadata: Json = { metrics: whole['metrics'] ?? { latencyMs: 0 } };
  if (whole['usage'] !== undefined) metadata['usage'] = whole['usage'];
  frames.push(message('metadata', metadata));
  return { headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': String(reply.headers['x-amzn-requestid'] ?? 'simulated') }, frames };
}

/** JSON text in up to four pieces (any cut will do: the pieces are joined before parsing). */
function splitJson(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 4));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
