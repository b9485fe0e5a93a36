import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface StoreOptions {
  region: string;
  /** A local DynamoDB-compatible endpoint (the embedded store); unset in AWS. */
  endpoint?: string;
}

type HttpRequestLike = { headers: Record<string, string> };

/** A well-formed but unchecked Authorization header: what a local DynamoDB-compatible store parses. */
function signLocally<T extends HttpRequestLike>(request: T): T {
  request.headers['x-amz-date'] = '20000101T000000Z';
  request.headers.authorization =
    'AWS4-HMAC-SHA256 Credential=local/20000101/local/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=local';
  return request;
}

export function createDocumentClient({ region, endpoint }: StoreOptions): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region,
    ...(endpoint
      ? {
          endpoint,
          // The embedded store checks no signature, but the SDK insists on credentials.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          // ...and SigV4 hashing is a tenth of the local host's CPU per store call, for nothing.
          signer: { sign: async (request: HttpRequestLike) => signLocally(request) } as unknown as DynamoDBClientConfig['signer'],
        }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
