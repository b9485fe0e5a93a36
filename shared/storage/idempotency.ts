import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed, refusedOrRead, storeCall } from './dynamodb.js';

/**
 * One record per (account, Idempotency-Key). `running` while the first request runs
 * (with a lease, so that a crashed request does not block its key for a day); then
 * `completed`, its response kept in an item of its own (`responseStored`), or not kept
 * (zero data retention, too large).
 *
 * The record stays small: every retry's claim is a conditional write that DynamoDB refuses
 * and still bills by the size of the item it refused, so a record holding a 350 KB answer
 * made each replay cost about 340 write units, a tenant's replays a cost without a charge.
 * The response item is read only by a replay (4 KB a read unit, not 1 KB a write unit).
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
  /** Completed with its response in an item of its own (responseKey). */
  responseStored?: boolean;
  /** The stored response (JSON, gzipped) of a record written before responses had an item of their own. */
  response?: Uint8Array;
  notRetained?: 'zero_data_retention' | 'too_large';
}

/**
 * The item that holds a run's response: the record's key, `#response#` and the run's
 * promptLogId (a record key holds no `#response`: it is the account ID, `#` and a hex
 * digest). Each run writes its own: a run that outlived its lease, whose completion the
 * record then refuses, leaves the answer of the run that took the key over as it was.
 */
function responseKey(recordKey: string, promptLogId: string): string {
  return `${recordKey}#response#${promptLogId}`;
}

interface StoredResponse {
  idempotencyKey: string;
  /** The run that wrote it: a replay takes it only for the run its record names. */
  promptLogId: string;
  response: Uint8Array;
  expiresAt: number;
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

  /**
   * Completes the record: with `response`, written to the run's response item first, so that
   * a completed record that says so always has it (a run whose record could not be completed
   * leaves at most a response item no record names, until its expiry).
   */
  async complete(
    key: string,
    promptLogId: string,
    stored: { response: Uint8Array; expiresAt: number } | { notRetained: NonNullable<IdempotencyRecord['notRetained']> },
  ): Promise<void> {
    if ('response' in stored) {
      const item: StoredResponse = { idempotencyKey: responseKey(key, promptLogId), promptLogId, response: stored.response, expiresAt: stored.expiresAt };
      await storeCall('idempotency.complete', this.client.send(new PutCommand({ TableName: this.tableName, Item: item })));
    }
    await storeCall(
      'idempotency.complete',
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { idempotencyKey: key },
          UpdateExpression: 'response' in stored ? 'SET #status = :completed, responseStored = :stored' : 'SET #status = :completed, notRetained = :reason',
          // Only the run that holds the key completes it.
          ConditionExpression: 'promptLogId = :promptLogId',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':completed': 'completed',
            ':promptLogId': promptLogId,
            ...('response' in stored ? { ':stored': true } : { ':reason': stored.notRetained }),
          },
        }),
      ),
    );
  }

  /** A completed record's stored response (gzipped JSON); undefined should its item be gone (expired) or another run's. */
  async response(record: IdempotencyRecord): Promise<Uint8Array | undefined> {
    if (record.response) return record.response;
    const { Item } = await storeCall(
      'idempotency.replay',
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { idempotencyKey: responseKey(record.idempotencyKey, record.promptLogId) }, ConsistentRead: true })),
    );
    const stored = Item as StoredResponse | undefined;
    return stored?.promptLogId === record.promptLogId ? stored.response : undefined;
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
