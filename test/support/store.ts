import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTables, startEmbeddedStore, type EmbeddedStore } from '../../infra/local/store.js';
import { loadConfig, type TableNames } from '../../shared/config.js';
import { createDocumentClient } from '../../shared/storage/client.js';

/** An embedded store on a free port with the gateway's tables, for integration tests. */
export async function startTestStore(): Promise<{ store: EmbeddedStore; tables: TableNames; client: ReturnType<typeof createDocumentClient>; raw: DynamoDBClient; close(): Promise<void> }> {
  const store = await startEmbeddedStore({ port: 0 });
  const { tables } = loadConfig({});
  const raw = new DynamoDBClient({ region: 'us-east-1', endpoint: store.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await createTables(raw, tables);
  const client = createDocumentClient({ region: 'us-east-1', endpoint: store.endpoint });
  return {
    store,
    tables,
    client,
    raw,
    close: async () => {
      client.destroy();
      raw.destroy();
      await store.close();
    },
  };
}
