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
