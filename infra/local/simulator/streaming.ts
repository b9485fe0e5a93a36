/**
 * Streamed answers of the provider simulator: each protocol turns the whole answer it would
 * have given into its vendor's stream of frames (its folder's `stream.ts`);
 * this module writes them, `gapMs` apart (the `slow-stream` fault).
 */
import type { ServerResponse } from 'node:http';

/** A streamed answer: its headers and its frames, each written as one chunk. */
export interface StreamReply {
  headers: Record<string, string>;
  frames: (string | Uint8Array)[];
}

export const SSE_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** One server-sent event: `event:` line when named, one `data:` line of JSON (or the raw text given). */
export function sseFrame(data: unknown, event?: string): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${text}\n\n`;
}

/** `text` cut into up to `count` pieces at word boundaries (never inside a character); '' gives no piece. */
export function pieces(text: string, count = 4): string[] {
  if (text === '') return [];
  const words = text.split(/(?<=\s)/);
  const size = Math.max(1, Math.ceil(words.length / count));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}

/** Writes the frames, waiting `gapMs` between two; stops when the client goes away. */
export async function writeStream(res: ServerResponse, reply: StreamReply, gapMs: number, wait: (ms: number) => Promise<boolean>): Promise<void> {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(200, reply.headers);
  for (let i = 0; i < reply.frames.length; i++) {
    if (i > 0 && gapMs > 0 && !(await wait(gapMs))) return;
    if (res.destroyed) return;
    res.write(reply.frames[i] as string | Uint8Array);
  }
  res.end();
}

/** The frames cut in the middle (the `malformed` fault of a stream): the first half of the bytes, then the end. */
export function cutInHalf(reply: StreamReply): StreamReply {
  const bytes = Buffer.concat(reply.frames.map((frame) => (typeof frame === 'string' ? Buffer.from(frame) : frame)));
  return { headers: reply.headers, frames: [bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2)))] };
}
