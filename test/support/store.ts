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
