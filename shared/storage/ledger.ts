import { ConditionalCheckFailed, type DocumentClient } from './dynamodb.js';

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
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  /** Idempotent: an entry's key is its identity, so posting it twice writes the same item. */
  async put(entry: LedgerEntry): Promise<void> {
    await this.client.put({ TableName: this.tableName, Item: entry });
  }

  /**
   * Writes the entry unless the ledger holds one with its key already; returns the entry
   * the ledger holds afterwards: this one, or the one written first (entries never change).
   */
  async putFirst(entry: LedgerEntry): Promise<LedgerEntry> {
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: entry,
        ConditionExpression: 'attribute_not_exists(entryId)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return entry;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailed)) throw error;
      // DynamoDB returns the entry with the refusal; a store that does not gets it read.
      const held = (error.item as LedgerEntry | undefined) ?? (await this.get(entry.accountId, entry.entryId));
      if (!held) throw error;
      return held;
    }
  }

  async get(accountId: string, entryId: string): Promise<LedgerEntry | undefined> {
    const { Item } = await this.client.get({ TableName: this.tableName, Key: { accountId, entryId }, ConsistentRead: true });
    return Item as LedgerEntry | undefined;
  }

  async list(accountId: string): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    const items = this.client.queryAll({ TableName: this.tableName, KeyConditionExpression: 'accountId = :id', ExpressionAttributeValues: { ':id': accountId }, ConsistentRead: true });
    for await (const item of items) entries.push(item as LedgerEntry);
    return entries;
  }
}
