import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTables, startEmbeddedStore, type EmbeddedStore } from '../../infra/local/store.js';
import { loadConfig, type TableNames } from '../../shared/config.js';
import { createStoreClient, type StoreClient } from '../../shared/storage/dynamodb.js';

/**
 * Per attempt, for the test store's client: the store is dynalite, one thread accepting and
 * answering in turn, and a test that sends it 200 requests at once on a machine busy with the
 * rest of the suite saw connections wait past DynamoDB's 1 s (STORE_TIMEOUTS), with the SDK's
 * retry quota spent after a burst of them: failures on a deadline the test does not test.
 * The deadlines' own tests use silent services (fake-aws.ts).
 */
const TEST_STORE_TIMEOUTS = Object.freeze({ connectMs: 10_000, answerMs: 20_000 });

/**
 * An embedded store on a free port with the gateway's tables, for integration tests. Its
 * client calls it over HTTP, as the Lambda functions call DynamoDB (the local host's
 * own calls go in process: the e2e tests cover that path).
 */
export async function startTestStore(): Promise<{ store: EmbeddedStore; tables: TableNames; client: StoreClient; close(): Promise<void> }> {
  const store = await startEmbeddedStore({ port: 0 });
  const { tables } = loadConfig({});
  const client = createStoreClient({ region: 'local', endpoint: store.endpoint, local: true, timeouts: TEST_STORE_TIMEOUTS });
  await createTables(client.items, tables);
  return {
    store,
    tables,
    client,
    close: async () => {
      client.destroy();
      await store.close();
    },
  };
}

/**
 * A client of the store at `endpoint` whose first call of `command` (its DynamoDB name, e.g.
 * `PutItem`, through either of its clients) lands, then loses its answer: a timeout, which the
 * SDK retries. `sent` holds each call of `command` as written (its update or condition expression).
 */
export function losingFirstAnswer(endpoint: string, command: 'PutItem' | 'UpdateItem'): { client: StoreClient; sent: string[] } {
  const client = createStoreClient({ region: 'local', endpoint, local: true });
  const sent: string[] = [];
  const names = new Set([`${command}Command`, `${command.replace(/Item$/, '')}Command`]);
  for (const sdk of [client.items, client.documents]) {
    sdk.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { UpdateExpression?: string; ConditionExpression?: string };
        const ours = names.has(String(context.commandName));
        if (ours) sent.push(String(input.UpdateExpression ?? input.ConditionExpression));
        const answer = await next(args);
        if (ours && sent.length === 1) throw Object.assign(new Error('injected lost answer'), { name: 'TimeoutError' });
        return answer;
      },
      { step: 'deserialize', name: 'loseFirstAnswer' },
    );
  }
  return { client, sent };
}

/** What the store answered an attempt `HeldStore` let through late. */
export interface LateAnswer {
  status: number;
  body: string;
}

/**
 * What the forwarder does with the attempt it waits for: hold it unanswered, answer its
 * headers and a piece of its body and then nothing (`stall`: a connection gone quiet
 * mid-answer), or answer it itself (the store never sees it).
 */
export type Interception = 'hold' | 'stall' | { status: number; body: unknown };

/**
 * A client of the store at `endpoint` through a forwarder on loopback that intercepts one
 * attempt: the next request of `command` (its DynamoDB name) whose body contains `marker`
 * once `interceptNext` is called. A held attempt stays unanswered: the client gives up on it
 * after `answerMs`, and the SDK sends another, which goes through; `release` then sends the
 * held attempt on to the store, as an attempt the SDK gave up on may still arrive, and
 * returns its answer.
 */
export interface HeldStore {
  client: StoreClient;
  interceptNext(command: string, marker: string, action?: Interception): void;
  release(): Promise<LateAnswer>;
  close(): Promise<void>;
}

export async function holdingStore(endpoint: string, answerMs = 1_500): Promise<HeldStore> {
  let wanted: { target: string; marker: string; action: Interception } | undefined;
  let held: { headers: Record<string, string>; body: Buffer } | undefined;
  const forward = async (headers: Record<string, string>, body: Buffer): Promise<LateAnswer & { type: string }> => {
    const answer = await fetch(endpoint, { method: 'POST', headers, body });
    return { status: answer.status, type: answer.headers.get('content-type') ?? 'application/x-amz-json-1.0', body: await answer.text() };
  };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers = {
      'content-type': String(request.headers['content-type']),
      'x-amz-target': String(request.headers['x-amz-target']),
      authorization: String(request.headers.authorization),
      'x-amz-date': String(request.headers['x-amz-date']),
    };
    if (wanted && headers['x-amz-target'] === wanted.target && body.includes(wanted.marker)) {
      const { action } = wanted;
      wanted = undefined;
      // Held: never answered, the client's deadline ends the attempt.
      if (action === 'hold') held = { headers, body };
      else if (action === 'stall')
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '200' }).write('{"Attributes":{"balanceMicro":{"N":"1');
      else response.writeHead(action.status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(action.body));
      return;
    }
    const answer = await forward(headers, body);
    response.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = createStoreClient({ region: 'local', endpoint: `http://127.0.0.1:${port}`, local: true, timeouts: { connectMs: 10_000, answerMs } });
  return {
    client,
    interceptNext: (command, marker, action = 'hold') => {
      wanted = { target: `DynamoDB_20120810.${command}`, marker, action };
    },
    release: async () => {
      if (!held) throw new Error('no attempt was held');
      const { headers, body } = held;
      held = undefined;
      const { status, body: text } = await forward(headers, body);
      return { status, body: text };
    },
    close: async () => {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
