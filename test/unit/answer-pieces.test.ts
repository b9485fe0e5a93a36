import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerBytes, FREE_ANSWER_CHUNKS, MIN_AVERAGE_CHUNK_BYTES, post } from '../../shared/http/post.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import { jsonRequest, postJson } from '../../shared/providers/http.js';
import { postSse } from '../../shared/providers/stream-http.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** What the fake vendor wrote: its HTTP chunks, and whether it got to the end. */
interface Written {
  chunks: number;
  ended: boolean;
}

/**
 * A fake vendor answering `status` with `text` cut into HTTP chunks of `size` bytes (one
 * `write` each, so one chunk each on the wire), a thousand to a socket write.
 */
async function vendor(text: string, size: number, type = 'application/json', status = 200): Promise<{ url: URL; written: Written }> {
  const written: Written = { chunks: 0, ended: false };
  const body = Buffer.from(text);
  server = createServer((req, res: ServerResponse) => {
    req.resume();
    res.writeHead(status, { 'content-type': type });
    let at = 0;
    const pump = () => {
      while (at < body.length && !res.destroyed) {
        res.cork();
        for (let n = 0; n < 1000 && at < body.length; n++, at += size) {
          res.write(body.subarray(at, at + size));
          written.chunks += 1;
        }
        const more = res.write('') && true;
        process.nextTick(() => res.uncork());
        if (!more) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end(() => (written.ended = true));
    };
    res.on('error', () => undefined);
    pump();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`), written };
}

const refused = { code: 'EANSWERFRAGMENTED', chunks: FREE_ANSWER_CHUNKS + 1, bytes: FREE_ANSWER_CHUNKS + 1 };

describe('An answer in absurdly many tiny pieces fails (MIN_AVERAGE_CHUNK_BYTES)', () => {
  it('post: 1-byte HTTP chunks fail with EANSWERFRAGMENTED at the first piece past FREE_ANSWER_CHUNKS, the rest unread', async () => {
    const { url, written } = await vendor(JSON.stringify({ text: 'x'.repeat(200_000) }), 1);
    await expect(post(url, '{}', {})).rejects.toMatchObject(refused);
    expect(written.ended).toBe(false);
  });

  it('postJson: the same answer is upstream_malformed_response, not retried', async () => {
    const { url } = await vendor(JSON.stringify({ text: 'x'.repeat(200_000) }), 1);
    const error = await postJson(jsonRequest(url.href, {}, {}), new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream_malformed_response', details: { cause: refused } });
    expect((error as UpstreamError).retryable).toBe(false);
  });

  it('post: many pieces of twice MIN_AVERAGE_CHUNK_BYTES are read whole (a socket read may split one in two)', async () => {
    const text = JSON.stringify({ text: 'y'.repeat(8 * FREE_ANSWER_CHUNKS * MIN_AVERAGE_CHUNK_BYTES) });
    const { url, written } = await vendor(text, 2 * MIN_AVERAGE_CHUNK_BYTES);
    expect((await post(url, '{}', {})).text).toBe(text);
    expect(written.chunks).toBeGreaterThan(4 * FREE_ANSWER_CHUNKS);
  });

  it('postSse: a line sent as 1-byte chunks fails as upstream_malformed_response, carrying what the stream delivered', async () => {
    const { url, written } = await vendor(`data: {"a":1}\n\ndata: ${'y'.repeat(200_000)}`, 1, 'text/event-stream');
    const events: string[] = [];
    const error = await postSse(jsonRequest(url.href, {}, {}, { accept: 'text/event-stream' }), new AbortController().signal, {
      onEvent: (event) => events.push(event.data),
      partial: () => ({ output: events.join('') }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream_malformed_response', details: { cause: refused, partial: { output: '{"a":1}' } } });
    expect(written.ended).toBe(false);
  });

  it('postSse: a stream of small events, one chunk each, is read whole', async () => {
    const event = 'data: {"delta":"ok"}\n\n';
    const { url } = await vendor(event.repeat(3 * FREE_ANSWER_CHUNKS), event.length, 'text/event-stream');
    const events: string[] = [];
    await postSse(jsonRequest(url.href, {}, {}, { accept: 'text/event-stream' }), new AbortController().signal, {
      onEvent: (e) => events.push(e.data),
      partial: () => ({ output: '' }),
    });
    expect(events).toHaveLength(3 * FREE_ANSWER_CHUNKS);
  });

  it('postSse: an error answer in 1-byte chunks is read no further than the cap and still mapped', async () => {
    const { url } = await vendor(JSON.stringify({ error: { message: 'x'.repeat(100_000) } }), 1, 'application/json', 500);
    const error = await postSse(jsonRequest(url.href, {}, {}, { accept: 'text/event-stream' }), new AbortController().signal, {
      onEvent: () => undefined,
      partial: () => ({ output: '' }),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'upstream_error', details: { upstreamStatus: 500 } });
  });
});

describe('AnswerBytes', () => {
  it('copies pieces into one buffer that grows by doubling, never past its limit', () => {
    const answer = new AnswerBytes(10_000);
    const pieces = Array.from({ length: 100 }, (_, i) => Buffer.alloc(100, i));
    for (const piece of pieces) answer.add(piece);
    expect(answer.bytes().equals(Buffer.concat(pieces))).toBe(true);
    expect(answer.bytes().buffer.byteLength).toBeLessThanOrEqual(10_000 + 8192);
    expect(answer.chunks).toBe(100);
  });
});
