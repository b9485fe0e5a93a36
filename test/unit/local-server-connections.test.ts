import { once } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionCap, createLocalServer, MAX_CONNECTIONS, PROMPT_PATH, type LocalHandlers, type LocalServerOptions } from '../../infra/local/server.js';
import type { Log } from '../../shared/log.js';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A log that keeps what it is given. */
function capturingLog() {
  const lines: { level: string; message: string }[] = [];
  const log: Log = {
    info: (message) => void lines.push({ level: 'info', message }),
    warn: (message) => void lines.push({ level: 'warn', message }),
    error: (message) => void lines.push({ level: 'error', message }),
  };
  return { log, lines };
}

const handlers: LocalHandlers = {
  authorizer: async () => ({ principalId: 'acct', policyDocument: { Version: '2012-10-17', Statement: [] }, context: { accountId: 'acct' } }),
  api: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' }),
  catalog: async () => ({ statusCode: 200, body: '{}' }),
};

async function start(options: LocalServerOptions = {}, log: Log = capturingLog().log): Promise<number> {
  server = createLocalServer(handlers, log, options);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw connection to the host, and everything it hears until it closes. */
async function open(port: number): Promise<{ socket: Socket; heard: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const heard = once(socket, 'close').then(() => text);
  await once(socket, 'connect');
  return { socket, heard };
}

const HEAD = `POST ${PROMPT_PATH} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer key\r\nContent-Type: application/json\r\n`;

describe('The local host bounds its connections', () => {
  it('answers 408 with the error body, and closes, a request whose headers never end', async () => {
    const port = await start({ headersTimeoutMs: 100, requestTimeoutMs: 200 });
    const { socket, heard } = await open(port);
    socket.write(HEAD);
    const answer = await heard;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('answers 408, and closes, an authenticated request whose body comes too slowly, and logs no error', async () => {
    const { log, lines } = capturingLog();
    const port = await start({ headersTimeoutMs: 100, requestTimeoutMs: 200 }, log);
    const { socket, heard } = await open(port);
    socket.write(`${HEAD}Content-Length: 100\r\n\r\n{`);
    const answer = await heard;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('closes at once a connection past maxConnections', async () => {
    const port = await start({ maxConnections: 2 });
    const dropped = once(server!, 'drop');
    await open(port);
    await open(port);
    const third = await open(port);
    expect(await third.heard).toBe('');
    await dropped;
  });

  it('holds at most MAX_CONNECTIONS, and a quarter of the file descriptor limit when that is lower', () => {
    expect(connectionCap(1_048_576)).toBe(MAX_CONNECTIONS);
    expect(connectionCap(1_024)).toBe(256);
    expect(connectionCap(undefined)).toBe(MAX_CONNECTIONS);
    expect(connectionCap()).toBeLessThanOrEqual(MAX_CONNECTIONS);
  });
});

describe('A request with two Host headers', () => {
  it('is answered 400 with the error body, as RFC 9112 3.2 says (the routing read the first, the event the last)', async () => {
    const port = await start();
    const { socket, heard } = await open(port);
    socket.write(`POST ${PROMPT_PATH} HTTP/1.1\r\nHost: a\r\nHost: b\r\nAuthorization: Bearer key\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    const answer = await heard;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"bad_request"');
  });
});

describe('A CONNECT', () => {
  it.each([
    [PROMPT_PATH, /^HTTP\/1\.1 405 [\s\S]*Allow: POST[\s\S]*x-request-id: [\s\S]*"code":"method_not_allowed"/],
    ['/nowhere', /^HTTP\/1\.1 404 [\s\S]*"code":"not_found"/],
    ['example.com:443', /^HTTP\/1\.1 400 [\s\S]*"code":"bad_request"/],
  ])('to %s is answered with the error body, as any method a route does not take (Node had closed the connection without a word)', async (target, answered) => {
    const port = await start();
    const { socket, heard } = await open(port);
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(await heard).toMatch(answered);
  });
});

describe('A client that disconnects mid-body', () => {
  it('is let go: its connection closed, nothing answered, no error logged', async () => {
    const { log, lines } = capturingLog();
    const port = await start({}, log);
    const request = once(server!, 'request') as Promise<[IncomingMessage]>;
    const { socket } = await open(port);
    socket.write(`${HEAD}Content-Length: 100\r\n\r\n{"prompt":`);
    const [req] = await request;
    // The body's first bytes have reached the host (so its reader is waiting for the rest) before the client goes.
    await once(req, 'data');
    socket.destroy();
    await new Promise((resolve) => req.once('close', resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([]);
  });
});

describe("The api handler's time", () => {
  it('is the one the host gives (its request deadline and the margin the function has in AWS), not a fixed 29 s: a longer deadline had the handler answer 504 while the run went on', async () => {
    let remaining: number | undefined;
    server = createLocalServer(
      {
        ...handlers,
        api: async (_event, context) => {
          remaining = context.getRemainingTimeInMillis();
          return { statusCode: 200, body: '{}' };
        },
      },
      capturingLog().log,
      { apiTimeoutMs: 64_000 },
    );
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}${PROMPT_PATH}`, {
      method: 'POST',
      headers: { authorization: 'Bearer key', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(200);
    expect(remaining).toBeGreaterThan(60_000);
    expect(remaining).toBeLessThanOrEqual(64_000);
  });
});

describe('Requests pipelined on one connection', () => {
  /** A host whose api answers each request once `release` is called, counting the requests it was given. */
  async function holding(options: LocalServerOptions = {}) {
    const calls: (() => void)[] = [];
    const called = new EventTarget();
    server = createLocalServer(
      {
        ...handlers,
        api: async () => {
          await new Promise<void>((resolve) => {
            calls.push(resolve);
            called.dispatchEvent(new Event('call'));
          });
          return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"answered":true}' };
        },
      },
      capturingLog().log,
      options,
    );
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const nextCall = async () => {
      if (calls.length === 0) await once(called, 'call');
      return calls.shift()!;
    };
    return { port: (server.address() as AddressInfo).port, calls, nextCall };
  }
  const prompt = `${HEAD}Content-Length: 2\r\n\r\n{}`;

  it.each([
    ['not valid HTTP', 'XYZ\r\n\r\n'],
    ['two Content-Lengths', `${HEAD}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`],
    ['too slow to send its headers', 'GET /api/v1/models HTTP/1.1\r\nHost: x\r\n'],
    ['too slow to send its body', `${HEAD}Content-Length: 100\r\n\r\n{"prompt":`],
    ['a broken chunked body', `${HEAD}Transfer-Encoding: chunked\r\n\r\nZZ\r\n`],
  ])(
    "answers a running request, then closes, where the one pipelined behind it is %s (the later request's 4xx had been sent in its place, and the running one charged unanswered)",
    async (_what, after) => {
      const { port, nextCall } = await holding({ headersTimeoutMs: 100, requestTimeoutMs: 200 });
      const { socket, heard } = await open(port);
      const refused = once(server!, 'clientError');
      socket.write(prompt + after);
      const release = await nextCall();
      await refused;
      release();
      const answer = await heard;
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(answer).toContain('{"answered":true}');
      expect(answer).not.toContain('bad_request');
    },
  );

  it.each([
    ['two Host headers', 'GET /nope HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400],
    ['an Expect other than 100-continue', 'GET /nope HTTP/1.1\r\nHost: a\r\nExpect: foo\r\n\r\n', 417],
  ])('does not run a request pipelined behind a refusal that closes the connection (%s): it had run, charged, its answer never sent', async (_what, first, status) => {
    const { port, calls } = await holding();
    const { socket, heard } = await open(port);
    socket.write(first + prompt);
    const answer = await heard;
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(calls).toHaveLength(0);
    // Nothing is left counted as being written (a queued answer had been, for ever).
    expect((server as ReturnType<typeof createLocalServer>).answering()).toBe(0);
  });

  it('counts no answer queued behind another as being written once the connection has gone (a host stopping had waited a minute on it)', async () => {
    const { port, nextCall } = await holding();
    const connected = once(server!, 'connection') as Promise<[Socket]>;
    const { socket } = await open(port);
    const [hostSide] = await connected;
    socket.write(prompt + prompt);
    const first = await nextCall();
    const second = await nextCall();
    const local = server as ReturnType<typeof createLocalServer>;
    expect(local.answering()).toBe(2);
    socket.destroy();
    await once(hostSide, 'close');
    // The second answer, queued behind the first, hears its connection's close only.
    expect(local.answering()).toBe(0);
    first();
    second();
  });
});
