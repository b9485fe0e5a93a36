/**
 * Closing the local host (Ctrl-C) with an event stream still being written to its reader: the
 * answer goes out whole before the connections close.
 */
import { createServer, request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestHost } from '../support/local.js';
import type { LocalHost } from '../../infra/local/host.js';

/** 8 MB of text in 1,000-character deltas, as a chat-completions vendor streams it. */
const PIECES = 8_000;
const vendor = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (fields: object) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'm', ...fields })}\n\n`;
  const piece = chunk({ choices: [{ index: 0, delta: { content: 'q'.repeat(1_000) } }] });
  for (let i = 0; i < PIECES; i++) res.write(piece);
  res.end(`${chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}data: [DONE]\n\n`);
});
await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise<void>((resolve) => vendor.close(() => resolve())));

/**
 * A prompt request whose headers the host has read and whose body it is waiting for (its
 * go-ahead to `Expect: 100-continue` came): the body is the caller's to send.
 */
async function promptBeingRead(host: LocalHost, body: string): Promise<ClientRequest> {
  const req = request({
    host: '127.0.0.1',
    port: new URL(host.url).port,
    path: '/api/v1/prompt',
    method: 'POST',
    headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' },
  });
  req.flushHeaders();
  await once(req, 'continue');
  return req;
}

describe('Closing the local host', () => {
  it('answers 503 to a request whose body ends after the host began closing: nothing reserved, no model called', async () => {
    const host = await startTestHost();
    // A model slower than the close waits for a writer: run, the request would be cut unanswered.
    host.simulator.setFault({ kind: 'slow', delayMs: 3_000 });
    const body = JSON.stringify({ prompt: 'Say hello', models: ['fam_c-5.4'] });
    const req = await promptBeingRead(host, body);
    const closing = host.close();
    req.end(body);
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(res, 'end');
    await closing;
    // It had been run after the close stopped waiting (reserved, its model called) and then cut unanswered, its hold left to the reconciler.
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(host.simulator.calls()).toHaveLength(0);
  });

  it('waits for a body still arriving steadily past the stalled-writer time, then answers it 503 unrun', async () => {
    const host = await startTestHost();
    const body = JSON.stringify({ prompt: 'x'.repeat(200_000), models: ['fam_c-5.4'] });
    const req = await promptBeingRead(host, body);
    const closing = host.close();
    const answered = once(req, 'response');
    // A caller on a slow link: 10 KB every 150 ms, 3 s in all (the close had counted only bytes written, and cut it at 2 s).
    for (let at = 0; at < body.length; at += 10_000) {
      req.write(body.slice(at, at + 10_000));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    req.end();
    const [res] = (await answered) as [IncomingMessage];
    res.resume();
    await once(res, 'end');
    await closing;
    // Its bytes read did not count as the connection moving: it had been cut mid-body, no answer.
    expect(res.statusCode).toBe(503);
    expect(host.simulator.calls()).toHaveLength(0);
  });

  it('writes an event stream still queued for its reader whole, done event and all, before it closes the connection', async () => {
    const host = await startTestHost({
      SIMULATE_PROVIDERS: '0',
      MISTRAL_API_KEY: 'mistral-test-key-0123456789',
      MISTRAL_BASE_URL: `http://127.0.0.1:${(vendor.address() as AddressInfo).port}/v1`,
    });
    const { port } = new URL(host.url);
    // A reader that takes nothing until the host is closing: the stream waits in the gateway's queue and the sockets.
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/api/v1/prompt',
      method: 'POST',
      headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    req.end(JSON.stringify({ prompt: 'Write.', models: ['fam_g-large'], generation_settings: { maxTokens: 200_000 } }));
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    expect(res.statusCode).toBe(200);
    // The run has ended and is settled: what is left is writing its events.
    await host.settled();
    expect(host.inFlight()).toBe(0);

    const closing = host.close();
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(res, 'end');
    await closing;

    const text = Buffer.concat(chunks).toString('utf8');
    expect(text).toMatch(/\nevent: done\ndata: \{.*\}\n\n$/);
    const done = JSON.parse(/\nevent: done\ndata: (.*)\n\n$/.exec(text)![1]!) as { results: { status: string; output: string }[] };
    expect(done.results[0]).toMatchObject({ status: 'completed' });
    expect(done.results[0]!.output.length).toBe(PIECES * 1_000);
  });
});
