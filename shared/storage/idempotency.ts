import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed, refusedOrRead, storeCall } from './dynamodb.js';

/**
 * One record per (account, Idempotency-Key). `running` while the first request runs
 * (with a lease, so that a crashed request does not block its key for a day); then
 * `completed` with the response, or without it under zero data retention.
 */
export interface IdempotencyRecord {
  idempotencyKey: string;
  bodyHash: string;
  status: 'running' | 'completed';
  promptLogId: string;
  /** Epoch ms after which a `running` record may be taken over. */
  leaseUntil: number;
  createdAt: number;
  /** Epoch seconds (TTL); the code checks it too, since TTL deletion is late. */
  expiresAt: number;
  /** The stored response (JSON, gzipped); absent when not retained. */
  response?: Uint8Array;
  notRetained?: 'zero_data_retention' | 'too_large';
}

export type ClaimResult = { claimed: true } | { claimed: false; existing: IdempotencyRecord };

export class IdempotencyRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Claims the key for a new run, unless a live record holds it (then returns that record). */
  async claim(record: IdempotencyRecord, now: number): Promise<ClaimResult> {
    try {
      await storeCall(
        'idempotency.claim',
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: record,
            ConditionExpression: [
              'attribute_not_exists(idempotencyKey)',
              // An expired record (TTL deletion lags) no longer holds the key.
              'expiresAt < :nowSeconds',
              // A run whose lease passed crashed: the key may be run again.
              '(#status = :running AND leaseUntil < :now)',
            ].join(' OR '),
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':nowSeconds': Math.floor(now / 1000), ':now': now, ':running': 'running' },
            // The record holding the key comes back with the refusal: no read needed.
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { claimed: true };
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const existing = await refusedOrRead(error, () => this.read(record.idempotencyKey));
      if (!existing) return this.claim(record, now); // deleted in between: try again
      // This very claim: a write that landed but whose answer was lost, then retried by the SDK.
      if (existing.status === 'running' && existing.promptLogId === record.promptLogId && existing.createdAt === record.createdAt) return { claimed: true };
      return { claimed: false, existing };
    }
  }

  /** The record as last written (for a store that returns none with a refusal). */
  private async read(idempotencyKey: string): Promise<IdempotencyRecord | undefined> {
    const { Item } = await storeCall('idempotency.claim', this.client.send(new GetCommand({ TableName: this.tableName, Key: { idempotencyKey }, ConsistentRead: true })));
    return Item as IdempotencyRecord | undefined;
  }

  async complete(key: string, promptLogId: string, stored: Pick<IdempotencyRecord, 'response' | 'notRetained'>): Promise<void> {
    await storeCall(
      'idempotency.complete',
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { idempotencyKey: key },
          UpdateExpression: stored.response ? 'SET #status = :completed, #response = :response' : 'SET #status = :completed, notRetained = :reason',
          // Only the run that holds the key completes it.
          ConditionExpression: 'promptLogId = :promptLogId',
          ExpressionAttributeNames: { '#status': 'status', ...(stored.response ? { '#response': 'response' } : {}) },
          ExpressionAttributeValues: {
            ':completed': 'completed',
            ':promptLogId': promptLogId,
            ...(stored.response ? { ':response': stored.response } : { ':reason': stored.notRetained }),
          },
        }),
      ),
    );
  }

  /** Frees the key after a run that did not complete (a refusal or a fault), so that a retry runs. */
  async release(key: string, promptLogId: string): Promise<void> {
    try {
      await storeCall(
        'idempotency.release',
        this.client.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { idempotencyKey: key },
            ConditionExpression: 'promptLogId = :promptLogId AND #status = :running',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':promptLogId': promptLogId, ':running': 'running' },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
    }
  }
}
