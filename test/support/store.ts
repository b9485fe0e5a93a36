import { connectStore, startEmbeddedStore, type EmbeddedStore } from '../../infra/local/store.js';
import { loadConfig, type TableNames } from '../../shared/config.js';
import { createStoreClient, type StoreClient } from '../../shared/storage/dynamodb.js';

/**
 * An embedded store on a free port with the gateway's tables, for integration tests. Its
 * client calls it over HTTP, as the Lambda functions call DynamoDB (the local host's
 * own calls go in process: the e2e tests cover that path).
 */
export async function startTestStore(): Promise<{ store: EmbeddedStore; tables: TableNames; client: StoreClient; close(): Promise<void> }> {
  const store = await startEmbeddedStore({ port: 0 });
  const { tables } = loadConfig({});
  const client = await connectStore({ endpoint: store.endpoint }, tables);
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
