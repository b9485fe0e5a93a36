/**
 * The zero-latency OpenAI-compatible upstream: a minimal node:http server on loopback that
 * reads the request body and answers every POST .../chat/completions with one fixed
 * chat.completion body at once. It does as little as possible, so that what a path adds
 * on top of a direct call is the gateway's own overhead. Run as a child process
 * (children.ts), which it tells its port over IPC.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const UPSTREAM_MODEL = 'openai/gpt-oss-20b';

const BODY = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_760_000_000,
  model: UPSTREAM_MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the benchmark upstream.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 },
});
const BODY_BYTES = Buffer.byteLength(BODY);
const NOT_FOUND = JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } });

const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    if (req.method === 'POST' && req.url?.endsWith('/chat/completions')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY_BYTES });
      res.end(BODY);
    } else {
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(NOT_FOUND) });
      res.end(NOT_FOUND);
    }
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => {
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.on('message', (message: { type?: string }) => {
  if (message.type === 'close') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
