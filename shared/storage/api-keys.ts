import { GetCommand, PutCommand, UpdateCommand, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed, refusedOrRead, storeCall, storePages } from './dynamodb.js';
import { KeyNotFoundError } from './errors.js';

/** What is stored of a key: its SHA-256, never the key. */
export interface ApiKeyRecord {
  keyHash: string;
  accountId: string;
  /** First characters of the key, to recognise it in listings. */
  keyPrefix: string;
  createdAt: string;
  revokedAt?: string;
  /** `local-demo`: the random key `npm start` issued itself, revoked when it issues the next; `local-demo-pinned`: a DEMO_API_KEY it stored, revoked by a start that pins another (infra/local/host.ts). */
  issuedBy?: 'local-demo' | 'local-demo-pinned';
}

export class ApiKeysRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(record: ApiKeyRecord): Promise<void> {
    try {
      await storeCall(
        'apiKeys.put',
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: record,
            // A key hash maps to one account forever; re-registering a key is refused. Nor does it
            // replace an item of another table named API_KEYS_TABLE by mistake (an account).
            ConditionExpression: 'attribute_not_exists(keyHash) AND attribute_not_exists(accountId)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const held = await refusedOrRead(error, () => this.get(record.keyHash, { consistent: true }));
      // This very record: a write that landed but whose answer was lost, then retried (the
      // key's one copy is in the caller's hands: refusing it would lose a working key).
      if (held?.accountId === record.accountId && held.createdAt === record.createdAt) return;
      throw error;
    }
  }

  /** The record of a key; `consistent` reads it as last written (the authorizer does). */
  async get(keyHash: string, { consistent = false } = {}): Promise<ApiKeyRecord | undefined> {
    const { Item } = await storeCall(
      'apiKeys.get',
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { keyHash }, ...(consistent ? { ConsistentRead: true } : {}) })),
    );
    return Item as ApiKeyRecord | undefined;
  }

  /**
   * The keys of an account, oldest first: an operator's listing (admin CLI), so that a key the
   * operator does not hold can be revoked by its hash. A Scan: the table has no index by account.
   */
  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    const pages = paginateScan(
      { client: this.client },
      { TableName: this.tableName, FilterExpression: 'accountId = :account', ExpressionAttributeValues: { ':account': accountId }, ConsistentRead: true },
    );
    for await (const page of storePages('apiKeys.listByAccount', pages)) records.push(...((page.Items ?? []) as ApiKeyRecord[]));
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Marks a key `npm start` stored as the DEMO_API_KEY pinned now (infra/local/host.ts), whatever mark it had. */
  async markPinned(keyHash: string): Promise<void> {
    await storeCall(
      'apiKeys.markPinned',
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { keyHash },
          UpdateExpression: 'SET issuedBy = :pinned',
          ConditionExpression: 'attribute_exists(keyHash)',
          ExpressionAttributeValues: { ':pinned': 'local-demo-pinned' },
        }),
      ),
    );
  }

  async revoke(keyHash: string, at = new Date()): Promise<ApiKeyRecord> {
    try {
      const { Attributes } = await storeCall(
        'apiKeys.revoke',
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { keyHash },
            // Revoking keeps the first revocation time; revoking an unknown key is an error, not an insert.
            UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :at)',
            ConditionExpression: 'attribute_exists(keyHash)',
            ExpressionAttributeValues: { ':at': at.toISOString() },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return Attributes as ApiKeyRecord;
    } catch (error) {
      if (isConditionFailed(error)) throw new KeyNotFoundError({ cause: error });
      throw error;
    }
  }
}
