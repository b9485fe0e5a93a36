import { GetCommand, PutCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed, refusedItem, storeCall, storePages } from './dynamodb.js';

export type LedgerKind = 'topup' | 'reserve' | 'settle' | 'release';

/**
 * One balance change. `amountMicro` is signed: top-up +, reserve − (the estimate),
 * settle + (the estimate back, minus what the request cost), release + (the estimate back).
 * The sum of an account's entries is its balance once no reservation is open and no top-up unposted.
 */
export interface LedgerEntry {
  accountId: string;
  /**
   * `<ULID>#<kind>`: time-ordered; a request's entries share its promptLogId's ULID. A
   * request's settle or release entry is `<ULID>#settlement`: it has one, whichever it is.
   */
  entryId: string;
  kind: LedgerKind;
  amountMicro: number;
  /** Epoch ms. */
  at: number;
  /** The promptLogId of the request, for reserve, settle and release. */
  requestId?: string;
  /** Settle only: what the request was charged (never more than its reservation). */
  chargedMicro?: number;
  /** Settle only: cost above the reservation, not charged (the balance never goes below zero). */
  uncollectedMicro?: number;
  /** Settle only: the part of the charge estimated from text, for calls whose vendor usage was missing or inconsistent. */
  estimatedMicro?: number;
}

export class LedgerRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Idempotent: an entry's key is its identity, so posting it twice writes the same item. */
  async put(entry: LedgerEntry): Promise<void> {
    await storeCall('ledger.put', this.client.send(new PutCommand({ TableName: this.tableName, Item: entry })));
  }

  /**
   * Writes the entry unless the ledger holds one with its key already; returns the entry
   * the ledger holds afterwards: this one, or the one written first (entries never change).
   */
  async putFirst(entry: LedgerEntry): Promise<LedgerEntry> {
    try {
      await storeCall(
        'ledger.putFirst',
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: entry,
            // An entry, once written, never changes: the first settlement of a request wins.
            ConditionExpression: 'attribute_not_exists(entryId)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return entry;
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      // DynamoDB returns the entry with the refusal; a store that does not gets it read.
      const held = (refusedItem(error) as LedgerEntry | undefined) ?? (await this.get(entry.accountId, entry.entryId));
      if (!held) throw error;
      return held;
    }
  }

  async get(accountId: string, entryId: string): Promise<LedgerEntry | undefined> {
    const { Item } = await storeCall('ledger.get', this.client.send(new GetCommand({ TableName: this.tableName, Key: { accountId, entryId }, ConsistentRead: true })));
    return Item as LedgerEntry | undefined;
  }

  async list(accountId: string): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    const pages = paginateQuery(
      { client: this.client },
      { TableName: this.tableName, KeyConditionExpression: 'accountId = :id', ExpressionAttributeValues: { ':id': accountId }, ConsistentRead: true },
    );
    for await (const page of storePages('ledger.list', pages)) entries.push(...((page.Items ?? []) as LedgerEntry[]));
    return entries;
  }
}
