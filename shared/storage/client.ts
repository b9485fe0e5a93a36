import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface StoreOptions {
  region: string;
  /** A local DynamoDB-compatible endpoint (the embedded store); unset in AWS. */
  endpoint?: string;
}

export function createDocumentClient({ region, endpoint }: StoreOptions): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region,
    ...(endpoint
      ? {
          endpoint,
          // The embedded store checks no signature, but the SDK insists on credentials.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
