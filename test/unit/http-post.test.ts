import { Agent as HttpAgent, createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/contract/limits.js';
import { PassThrough } from 'node:stream';
import { createServer as createTcpServer } from 'node:net';
import { Agent as HttpsAgent, createServer as createTlsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { keepAliveAgent, LARGE_ANSWER_BYTES, largeAnswerTurn, MAX_WAITING_ANSWER_BYTES, post, readBody, requestSent } from '../../shared/http/post.js';
import { postJson, unreachable } from '../../shared/providers/http.js';
import { UpstreamError } from '../../shared/providers/errors.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server that answers after `delayMs` and reports each connection it accepts. */
async function serve(delayMs: number, onConnection: (socket: Socket) => void = () => undefined): Promise<URL> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.end('{"ok":true}'), delayMs));
  });
  server.on('connection', onConnection);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
}

describe('Function: post', () => {
  it('closes a pooled connection once it has been idle for the agent idle time', async () => {
    const url = await serve(0);
    const agent = keepAliveAgent(url, 50);
    expect((await post(url, '{}', {}, { agent })).text).toBe('{"ok":true}');
    const pooled = Object.values(agent.freeSockets).flat();
    expect(pooled).toHaveLength(1);
    await new Promise((resolve) => pooled[0]!.once('close', resolve));
    expect(Object.values(agent.freeSockets).flat()).toEqual([]);
    agent.destroy();
  });

  it('lets a reused connection wait longer than the idle time for its answer', async () => {
    const sockets: Socket[] = [];
    const url = await serve(200, (socket) => sockets.push(socket));
    const agent = keepAliveAgent(url, 50);
    await post(url, '{}', {}, { agent });
    // The second call goes out on the pooled connection (before its idle time ends) and is answered after 200 ms.
    const second = await post(url, '{}', {}, { agent });
    expect(second.status).toBe(200);
    expect(sockets).toHaveLength(1);
    agent.destroy();
  });

  it('fails with ETIMEDOUT when no answer comes within the timeout, and with an AbortError when aborted', async () => {
    const url = await serve(500);
    const agent = keepAliveAgent(url);
    await expect(post(url, '{}', {}, { agent, timeoutMs: 50 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    const controller = new AbortController();
    const call = post(url, '{}', {}, { agent, signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    agent.destroy();
  });

  it('fails with EANSWERTOOLARGE once an answer passes its byte limit, without reading the rest', async () => {
    let written = 0;
    server = createServer((req, res) => {
      req.resume();
      // An answer that never ends: only the limit stops the read.
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const agent = keepAliveAgent(url);

    await expect(post(url, '{}', {}, { agent, maxBytes: 1_000_000 })).rejects.toMatchObject({ code: 'EANSWERTOOLARGE' });
    expect(written).toBeLessThan(50_000_000);
    agent.destroy();
  });

  it("lets one client hold more connections to a host than a request can make judge calls, so a judge's calls never queue", () => {
    const agent = keepAliveAgent(new URL('https://bedrock-runtime.eu-west-1.amazonaws.com'));
    expect(agent.maxSockets).toBeGreaterThanOrEqual(LIMITS.judgeCalls);
    agent.destroy();
  });

  it('lets one client hold as many connections to a host as there are calls: no cap shared by every request of the process', async () => {
    // More calls at once than the 128 connections a client had been capped at: every one reaches the server before any is answered.
    const calls = 2 * LIMITS.judgeCalls;
    const held: (() => void)[] = [];
    let allArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (allArrived = resolve));
    server = createServer((req, res) => {
      req.resume();
      held.push(() => res.end('{"ok":true}'));
      if (held.length === calls) allArrived();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const agent = keepAliveAgent(url);
    const answers = Array.from({ length: calls }, () => post(url, '{}', {}, { agent }));
    await arrived;
    for (const answer of held) answer();
    expect((await Promise.all(answers)).every((answer) => answer.status === 200)).toBe(true);
    agent.destroy();
  });
});

describe('Function: requestSent (whether an aborted POST had reached its peer)', () => {
  /** Aborts `call` once `ready` says the peer has seen what it will see of it; the error it failed with. */
  async function abortedOnce(call: (signal: AbortSignal) => Promise<unknown>, ready: Promise<unknown>): Promise<unknown> {
    const controller = new AbortController();
    const failed = call(controller.signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    await ready;
    controller.abort();
    return failed;
  }

  it('says not sent for an HTTPS call whose TLS handshake never ended (a peer that only takes the connection), and sent for a body the peer read', async () => {
    // A TCP peer that accepts and never answers the TLS ClientHello: the request never left.
    const sockets: Socket[] = [];
    let accepted!: () => void;
    const connectionMade = new Promise<void>((resolve) => (accepted = resolve));
    const blackHole = createTcpServer((socket) => {
      sockets.push(socket);
      socket.once('data', () => accepted());
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const tls = new URL(`https://127.0.0.1:${(blackHole.address() as AddressInfo).port}/`);
    try {
      const error = await abortedOnce((signal) => post(tls, '{"prompt":"x"}', {}, { signal }), connectionMade);
      expect((error as Error).name).toBe('AbortError');
      expect(requestSent(error)).toBe(false);
      // As the provider layer reports it: a timeout whose request never reached the vendor.
      const upstream = await abortedOnce((signal) => postJson({ url: tls, payload: Buffer.from('{}'), headers: {} }, signal), connectionMade);
      expect(upstream).toBeInstanceOf(UpstreamError);
      expect((upstream as UpstreamError).details).toMatchObject({ unbilled: true });
    } finally {
      for (const socket of sockets) socket.destroy();
      blackHole.close();
    }

    // A TLS peer that ends the handshake and reads the whole body, never answering: sent.
    const key = readFileSync(new URL('../fixtures/tls/localhost-test-only.key.pem', import.meta.url));
    const cert = readFileSync(new URL('../fixtures/tls/localhost-test-only.cert.pem', import.meta.url));
    const tlsReads: (() => void)[] = [];
    const tlsPeer = createTlsServer({ key, cert }, (req) => {
      req.resume();
      req.on('end', () => tlsReads.shift()?.());
    });
    await new Promise<void>((resolve) => tlsPeer.listen(0, '127.0.0.1', resolve));
    const agent = new HttpsAgent({ ca: cert, keepAlive: true });
    try {
      const secure = new URL(`https://127.0.0.1:${(tlsPeer.address() as AddressInfo).port}/`);
      const read = new Promise<void>((resolve) => tlsReads.push(resolve));
      const error = await abortedOnce((signal) => post(secure, '{"prompt":"x"}', {}, { signal, agent }), read);
      expect(requestSent(error)).toBe(true);
    } finally {
      agent.destroy();
      tlsPeer.closeAllConnections();
      tlsPeer.close();
    }

    // A plain HTTP peer that reads the whole body and never answers: the request was sent.
    const reads: (() => void)[] = [];
    const bodyRead = () => new Promise<void>((resolve) => reads.push(resolve));
    server = createServer((req) => {
      req.resume();
      req.on('end', () => reads.shift()?.());
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const http = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const error = await abortedOnce((signal) => post(http, '{"prompt":"x"}', {}, { signal }), bodyRead());
    expect(requestSent(error)).toBe(true);
    const upstream = await abortedOnce((signal) => postJson({ url: http, payload: Buffer.from('{}'), headers: {} }, signal), bodyRead());
    expect((upstream as UpstreamError).code).toBe('timeout');
    expect((upstream as UpstreamError).details.unbilled).toBeUndefined();
  });
});

describe('Function: unreachable, for a call stopped while its answer came', () => {
  it('marks an error answer cut off unbilled, with its status, and a good answer cut off billed', async () => {
    // A peer that sends its head and part of a body, then nothing.
    let status = 503;
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"error":{"message":"over');
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    /** Stops the call once the answer's first bytes have reached it (its head read on that turn). */
    const cut = async () => {
      const controller = new AbortController();
      const agent = new HttpAgent();
      const connect = agent.createConnection.bind(agent);
      agent.createConnection = ((...args: Parameters<typeof connect>) => {
        const socket = connect(...args) as Socket;
        socket.once('data', () => setImmediate(() => controller.abort()));
        return socket;
      }) as typeof agent.createConnection;
      const error = await post(url, '{}', {}, { signal: controller.signal, agent }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      agent.destroy();
      return unreachable(controller.signal, error);
    };
    const refused = await cut();
    expect(refused.code).toBe('timeout');
    expect(refused.details).toMatchObject({ upstreamStatus: 503, unbilled: true });
    status = 200;
    const answering = await cut();
    expect(answering.code).toBe('timeout');
    expect(answering.details.unbilled).toBeUndefined();
    expect(answering.details.upstreamStatus).toBeUndefined();
  });
});

describe('Large answers, one per turn of the event loop', () => {
  /** An answer body of `bytes` bytes that has ended. */
  const ended = (bytes: number) => {
    const stream = new PassThrough();
    stream.end(Buffer.alloc(bytes, 'a'));
    return stream;
  };

  it('gives each large answer a turn of its own, with other work between two', async () => {
    const order: string[] = [];
    const first = largeAnswerTurn().then(() => {
      order.push('first answer');
      setImmediate(() => order.push('other work'));
    });
    const second = largeAnswerTurn().then(() => order.push('second answer'));
    await Promise.all([first, second]);
    expect(order).toEqual(['first answer', 'other work', 'second answer']);
  });

  it('hands on a body over LARGE_ANSWER_BYTES in a later turn than one that ended with it, a small one at once', async () => {
    const order: string[] = [];
    const large = [ended(LARGE_ANSWER_BYTES + 1), ended(LARGE_ANSWER_BYTES + 1)];
    const reads = large.map((stream, index) =>
      readBody(stream).then((bytes) => {
        order.push(`large ${index} (${bytes.length})`);
        setImmediate(() => order.push(`after large ${index}`));
      }),
    );
    const small = readBody(ended(10)).then(() => order.push('small'));
    await Promise.all([...reads, small]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['small', `large 0 (${LARGE_ANSWER_BYTES + 1})`, 'after large 0', `large 1 (${LARGE_ANSWER_BYTES + 1})`, 'after large 1']);
  });

  it('hands on a large answer in a buffer of its own size: the one it was read into grew by doubling, and what waits is counted by its bytes', async () => {
    const stream = new PassThrough();
    stream.write(Buffer.alloc(LARGE_ANSWER_BYTES, 'a'));
    stream.end(Buffer.alloc(1, 'a'));
    const bytes = await readBody(stream);
    expect(bytes.length).toBe(LARGE_ANSWER_BYTES + 1);
    expect(bytes.buffer.byteLength).toBe(LARGE_ANSWER_BYTES + 1);
  });

  it('hands large answers on at once while those waiting for their turns hold MAX_WAITING_ANSWER_BYTES', async () => {
    const order: string[] = [];
    const size = LARGE_ANSWER_BYTES + 1;
    const fit = Math.floor(MAX_WAITING_ANSWER_BYTES / size);
    // As many as fit wait for their turns; the next one is handed on at once, before them.
    const reads = Array.from({ length: fit + 1 }, (_, index) => readBody(ended(size)).then(() => order.push(String(index))));
    await Promise.all(reads);
    expect(order[0]).toBe(String(fit));
    expect(order.slice(1)).toEqual(Array.from({ length: fit }, (_, index) => String(index)));
  });
});
