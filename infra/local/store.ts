import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { CreateTableCommand, DescribeTableCommand, UpdateTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HttpResponse, type HttpHandler, type HttpRequest } from '@smithy/core/protocols';
import type { HttpHandlerOptions } from '@smithy/types';
import { ConfigError, type TableNames } from '../../shared/config.js';
import { createStoreClient, type StoreClient } from '../../shared/storage/dynamodb.js';
import { TABLES, type TableDefinition } from '../../shared/storage/tables.js';

export interface EmbeddedStore {
  endpoint: string;
  port: number;
  /**
   * The SDK request handler that reaches the store's own request handler from this
   * process without HTTP: the same requests and answers (DynamoDB's JSON protocol, as
   * dynalite handles them), passed as messages to its thread. Other processes (the admin
   * CLI, any AWS tool) use `endpoint`.
   */
  requestHandler: HttpHandler;
  /**
   * The requests the store received in process (through `requestHandler`, not over HTTP)
   * since the last call (the last 10,000 at most), as its thread saw them: DynamoDB
   * operation and arrival time (ms since the epoch, to the microsecond). For the
   * benchmarks, which count store round trips from the store's side.
   */
  calls(): Promise<StoreCall[]>;
  /** How many expressions the store's parsers took from what they remembered, and how many they parsed (parse-memo.cjs), since it started. */
  parses(): Promise<ParseCounts>;
  /** How busy the store's thread has been since it started (its event loop's utilisation), for the benchmarks. */
  utilization(): EventLoopUtilization;
  /** Stops the store: `stopped` once its thread has ended by itself, `terminated` when it had to be ended after CLOSE_WAIT_MS. */
  close(): Promise<'stopped' | 'terminated'>;
}

/** How long the store keeps an idle keep-alive connection open (STORE_THREAD). */
export const STORE_KEEP_ALIVE_MS = 10 * 60_000;

/**
 * dynalite in a thread of its own: its own event loop and heap, so the store's work runs
 * beside the gateway's on a second core, as DynamoDB's would, instead of between its
 * requests. It reports its port, and stops its server when told to close.
 */
const STORE_THREAD = `
const { EventEmitter } = require('node:events');
const { parentPort, workerData } = require('node:worker_threads');
let server;
// dynalite's own request listeners, which the server's is put in front of (below).
let dynaliteHandlers = [];
// Requests from this process: handed to dynalite's HTTP request handler as the request
// and response objects it reads and writes (headers, method, url; the body as one chunk).
// The last CALLS_KEPT requests' operations and arrival times (ms since the epoch, to the
// microsecond), for the benchmarks to count store round trips from the store's side.
const { performance } = require('node:perf_hooks');
const calls = [];
const CALLS_KEPT = 10000;
// dynalite's parsers of expressions, remembered (parse-memo.cjs): the same module objects its checks call.
const { rememberParses } = require(workerData.parseMemo);
const { dirname, join } = require('node:path');
const parsers = ['conditionParser', 'updateParser', 'projectionParser'].map((name) => rememberParses(require(join(dirname(workerData.dynalite), 'db', name))));
workerData.requests.on('message', ({ id, headers, body }) => {
  if (id === 'calls') return workerData.requests.postMessage({ id, answer: calls.splice(0) });
  if (id === 'parses') {
    const answer = { remembered: 0, parsed: 0 };
    for (const counts of parsers) for (const name in answer) answer[name] += counts[name];
    return workerData.requests.postMessage({ id, answer });
  }
  if (calls.length >= CALLS_KEPT) calls.shift();
  calls.push({ operation: String(headers['x-amz-target'] || '').replace(/^DynamoDB_\\d+\\./, ''), at: performance.timeOrigin + performance.now() });
  const request = new EventEmitter();
  request.method = 'POST';
  request.url = '/';
  request.headers = headers;
  const answer = { statusCode: 200, headers: {} };
  const response = {
    get statusCode() { return answer.statusCode; },
    set statusCode(status) { answer.statusCode = status; },
    setHeader(name, value) { answer.headers[name.toLowerCase()] = String(value); },
    end(text) { workerData.requests.postMessage({ id, status: answer.statusCode, headers: answer.headers, text: text === undefined ? '' : String(text) }); },
  };
  // Straight to dynalite: a message of this process needs none of the checks an HTTP request does (below).
  for (const handler of dynaliteHandlers) handler.call(server, request, response);
  request.emit('data', Buffer.from(body));
  request.emit('end');
});
// A data directory another process holds (its LevelDB lock): said before the server starts,
// as dynalite opens its database in the background and would fail at the first request.
async function dataDirectoryFree(path) {
  const { Level } = require(workerData.level);
  const probe = new Level(path);
  try {
    await probe.open();
  } catch (error) {
    const locked = error.code === 'LEVEL_LOCKED' || (error.cause && error.cause.code === 'LEVEL_LOCKED');
    // LevelDB's reason (a permission refused, say) is the cause of its "Database failed to open".
    const reason = error.cause && error.cause.message ? error.message + ' (' + error.cause.message + ')' : error.message;
    parentPort.postMessage({ type: 'error', message: locked ? 'in use by another process' : reason, code: locked ? 'EDATALOCKED' : error.code, dataDir: true });
    return false;
  }
  await probe.close();
  return true;
}
(async () => {
  if (workerData.options.path && !(await dataDirectoryFree(workerData.options.path))) return;
  server = require(workerData.dynalite)(workerData.options);
  // An idle keep-alive connection is kept 10 minutes, not Node's 5 s: a client's pool (Node 20's
  // agent keeps idle sockets with no timeout of its own) that sent a burst on sockets closed a
  // moment before its busy process saw them close had it reset (ECONNRESET), and the resets
  // spent the SDK's retry quota, so that calls failed unretried.
  server.keepAliveTimeout = ${STORE_KEEP_ALIVE_MS};
  // The store checks no credentials, so no web page may reach it: requests named for this
  // machine only (127.0.0.1, localhost, [::1], a name under .localhost, 0.0.0.0, which connects to
  // this machine and which an operator may write for it, and host.docker.internal,
  // Docker Desktop's name for it, which sam-local's containers call it by, and which no page's DNS
  // can claim; a page whose own name its DNS turned to 127.0.0.1 sends that name), and none a
  // page sends (an Origin, a CORS preflight, which dynalite would answer with
  // Access-Control-Allow-Origin: *). The SDK and the admin CLI send neither; a request without a
  // Host (HTTP/1.0) is no browser's.
  const LOCAL_HOSTS = new Set(['', '127.0.0.1', 'localhost', '[::1]', '0.0.0.0', 'host.docker.internal']);
  dynaliteHandlers = server.listeners('request');
  server.removeAllListeners('request');
  server.on('request', (req, res) => {
    const host = String(req.headers.host || '').toLowerCase().replace(/:\\d+$/, '');
    const local = LOCAL_HOSTS.has(host) || host.endsWith('.localhost');
    if (local && req.headers.origin === undefined && req.method !== 'OPTIONS') {
      for (const handler of dynaliteHandlers) handler.call(server, req, res);
      return;
    }
    res.statusCode = 403;
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', message: 'The embedded store answers requests for 127.0.0.1 or localhost, from no web page, only' }));
  });
  server.once('error', (error) => parentPort.postMessage({ type: 'error', message: error.message, code: error.code }));
  server.listen(workerData.port, '127.0.0.1', () => {
    // From here on a server error ends the thread with it, for the host to hear.
    server.on('error', (error) => { throw error; });
    parentPort.postMessage({ type: 'ready', port: server.address().port });
  });
})();
parentPort.on('message', (message) => {
  if (message !== 'close' || !server) return;
  server.closeAllConnections();
  // Every port closed, the thread has nothing left to wait for and ends.
  server.close(() => {
    workerData.requests.close();
    parentPort.close();
  });
});
`;

/** LevelDB's files of a store: its table and log files, and its manifests. */
const STORE_FILE = /^(?:\d+\.(?:ldb|sst|log)|MANIFEST-\d+)$/;

/**
 * Refuses a data directory that holds a store's files but not its CURRENT file, which names the
 * manifest that makes them a store (a copy or restore cut short: CURRENT sorts after them).
 * Opened, LevelDB would make a new, empty store there and delete the files as obsolete: every
 * key, ledger entry and log gone without a word. Changes nothing.
 */
function refuseIncompleteStore(dataDir: string): void {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch {
    // Not there, or not readable: the store's own open says what is wrong.
    return;
  }
  if (names.includes('CURRENT')) return;
  const stored = names.filter((name) => STORE_FILE.test(name)).sort();
  if (stored.length === 0) return;
  throw new ConfigError(
    `GATEWAY_DATA_DIR ${dataDir} holds the store's files (${stored.slice(0, 3).join(', ')}${stored.length > 3 ? ', …' : ''}) but not its CURRENT file, as a copy or restore cut short leaves it: opened, the store would start empty and delete them. Restore the directory whole, or choose an empty one`,
  );
}

/** How long close() waits for the store to stop its server before it ends the thread. */
const CLOSE_WAIT_MS = 5_000;

/**
 * The embedded DynamoDB-compatible store (dynalite) on 127.0.0.1, in a worker thread of
 * this process: in memory, or on disk under `dataDir` when given (a directory the caller made:
 * the host's, 0700). Port 0 picks a free port.
 * Should the thread fail once it is listening, the error is thrown in this process: the
 * host stops rather than answer every request with a store it cannot reach.
 */
export async function startEmbeddedStore(options: { port: number; dataDir?: string }): Promise<EmbeddedStore> {
  if (options.dataDir !== undefined) refuseIncompleteStore(options.dataDir);
  const requests = new MessageChannel();
  const worker = new Worker(STORE_THREAD, {
    eval: true,
    workerData: {
      dynalite: createRequire(import.meta.url).resolve('dynalite'),
      parseMemo: fileURLToPath(new URL('./parse-memo.cjs', import.meta.url)),
      level: createRequire(createRequire(import.meta.url).resolve('dynalite')).resolve('level'),
      port: options.port,
      options: { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.dataDir ? { path: options.dataDir } : {}) },
      requests: requests.port2,
    },
    transferList: [requests.port2],
  });
  let closing = false;
  let ended: 'stopped' | 'terminated' = 'stopped';
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const starting = new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    void exited.then(() => reject(new Error('The embedded store stopped before it listened')));
    worker.once('message', (message: { type: string; port?: number; message?: string; code?: string; dataDir?: boolean }) => {
      if (message.type === 'ready') return resolve(message.port!);
      if (message.dataDir) return reject(new ConfigError(`GATEWAY_DATA_DIR ${options.dataDir}: the embedded store cannot open it: ${message.message}`));
      // The same error a server of this thread would give, so `npm start` can say which port is taken.
      reject(Object.assign(new Error(`The embedded store could not listen on 127.0.0.1:${options.port}: ${message.message}`), { code: message.code, port: options.port }));
    });
  });
  let port: number;
  try {
    port = await starting;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.removeAllListeners('error');
  worker.once('error', (error) => {
    throw new Error(`The embedded store failed: ${error.message}`, { cause: error });
  });
  void exited.then(() => {
    if (!closing) throw new Error('The embedded store stopped');
  });
  const handler = new StoreThreadHandler(requests.port1);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    requestHandler: handler,
    calls: () => handler.ask<StoreCall[]>('calls'),
    parses: () => handler.ask<ParseCounts>('parses'),
    utilization: () => worker.performance.eventLoopUtilization(),
    close: async () => {
      if (!closing) {
        closing = true;
        worker.postMessage('close');
        const timer = setTimeout(() => {
          ended = 'terminated';
          void worker.terminate();
        }, CLOSE_WAIT_MS);
        void exited.then(() => clearTimeout(timer));
      }
      await exited;
      return ended;
    },
  };
}

/**
 * The SDK's request handler for the store's thread: each request the DynamoDB client
 * built and signed goes to dynalite's HTTP request handler as a message, and its answer
 * comes back as the HTTP response the SDK parses. Same SDK code as in AWS; no socket.
 */
class StoreThreadHandler implements HttpHandler<{ requestTimeout?: number }> {
  private readonly pending = new Map<number, { resolve: (answer: StoreAnswer) => void; reject: (error: Error) => void }>();
  private next = 0;
  private config: { requestTimeout?: number } = {};

  /** What asks of the store's thread (its calls, its parses) wait for its answers, in order, by kind. */
  private readonly asked: Record<Ask, ((answer: unknown) => void)[]> = { calls: [], parses: [] };

  constructor(private readonly port: MessagePort) {
    port.on('message', (answer: (StoreAnswer & { id: number }) | { id: Ask; answer: unknown }) => {
      if (typeof answer.id !== 'number') return this.asked[answer.id].shift()?.(answer.answer);
      const call = this.pending.get(answer.id);
      if (!call) return;
      this.pending.delete(answer.id);
      call.resolve(answer);
    });
    // Waiting calls do not keep the process alive; the store's thread does until it closes.
    port.unref();
  }

  handle(request: HttpRequest, options: HttpHandlerOptions = {}): Promise<{ response: HttpResponse }> {
    const timeoutMs = options.requestTimeout ?? this.config.requestTimeout;
    return new Promise((resolve, reject) => {
      const id = this.next++;
      const fail = (error: Error) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        reject(error);
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => fail(Object.assign(new Error(`No answer from the embedded store in ${timeoutMs} ms`), { name: 'TimeoutError', code: 'ETIMEDOUT' })), timeoutMs);
      timer?.unref();
      const signal = options.abortSignal as AbortSignal | undefined;
      signal?.addEventListener?.('abort', () => fail(Object.assign(new Error('Request aborted'), { name: 'AbortError' })), { once: true });
      this.pending.set(id, {
        resolve: ({ status, headers, text }) => {
          clearTimeout(timer);
          resolve({ response: new HttpResponse({ statusCode: status, headers, body: Buffer.from(text, 'utf8') }) });
        },
        reject,
      });
      // Node's HTTP server hands its handler lower-case header names; so does this.
      const headers: Record<string, string> = {};
      for (const name in request.headers) headers[name.toLowerCase()] = request.headers[name]!;
      // The SDK's JSON codec hands over bytes (a Uint8Array view, often into a shared pool,
      // which a message would clone whole): sent as the text they are, measured the cheapest.
      const body: unknown = request.body;
      const text = body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') : String(body ?? '');
      this.port.postMessage({ id, headers, body: text });
    });
  }

  /** The store thread's record of the requests it received since the last call, or its parses' counts. */
  ask<T>(kind: Ask): Promise<T> {
    return new Promise<T>((resolve) => {
      this.asked[kind].push(resolve as (answer: unknown) => void);
      this.port.postMessage({ id: kind, headers: {}, body: '' });
    });
  }

  updateHttpClientConfig(key: 'requestTimeout', value?: number): void {
    this.config = { ...this.config, [key]: value };
  }

  httpHandlerConfigs(): { requestTimeout?: number } {
    return this.config;
  }

  destroy(): void {}
}

export interface StoreCall {
  operation: string;
  at: number;
}

/** What the store's thread is asked besides requests (StoreThreadHandler.ask). */
type Ask = 'calls' | 'parses';

export interface ParseCounts {
  remembered: number;
  parsed: number;
}

interface StoreAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** CreateTable input from the shared definition: the same keys and indexes the CDK stack declares. */
export function toCreateTableInput(definition: TableDefinition, tableName: string) {
  const attributes = new Map<string, string>();
  const keys = [definition.partitionKey, definition.sortKey, ...definition.globalIndexes.flatMap((i) => [i.partitionKey, i.sortKey])];
  for (const key of keys) if (key) attributes.set(key.name, key.type);
  const keySchema = (pk: { name: string }, sk?: { name: string }) => [
    { AttributeName: pk.name, KeyType: 'HASH' as const },
    ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : []),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType: AttributeType as 'S' | 'N' })),
    KeySchema: keySchema(definition.partitionKey, definition.sortKey),
    ...(definition.globalIndexes.length > 0
      ? {
          GlobalSecondaryIndexes: definition.globalIndexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: { ProjectionType: 'KEYS_ONLY' as const },
          })),
        }
      : {}),
  };
}

/** Creates every table that does not exist yet (a data dir keeps them between runs). */
export async function createTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  for (const definition of TABLES) {
    const tableName = names[definition.key];
    try {
      await client.send(new CreateTableCommand(toCreateTableInput(definition, tableName)));
    } catch (error) {
      if ((error as Error).name !== 'ResourceInUseException') throw error;
      continue;
    }
    if (definition.ttlAttribute) {
      await client
        .send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: definition.ttlAttribute, Enabled: true } }))
        // dynalite does not implement TTL; expiry is checked by timestamp in code anyway.
        .catch(() => undefined);
    }
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  }
}

/**
 * A store client of the embedded store with every table created: in process
 * (`store.requestHandler`), or over HTTP given only the endpoint.
 */
export async function connectStore(store: Pick<EmbeddedStore, 'endpoint'> & Partial<Pick<EmbeddedStore, 'requestHandler'>>, names: TableNames): Promise<StoreClient> {
  const client = createStoreClient({ region: 'local', endpoint: store.endpoint, local: true, ...(store.requestHandler ? { requestHandler: store.requestHandler } : {}) });
  await createTables(client.items, names);
  return client;
}
