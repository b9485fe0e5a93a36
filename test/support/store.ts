import { connectStore, startEmbeddedStore, type EmbeddedStore } from '../../infra/local/store.js';
import { loadConfig, type TableNames } from '../../shared/config.js';
import type { StoreClient } from '../../shared/storage/dynamodb.js';

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
