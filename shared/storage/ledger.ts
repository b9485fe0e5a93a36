import { GetItemCommand, PutItemCommand, paginateQuery, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { fromAttributes, isConditionFailed, refusedOrRead, storeCall, storePages, toAttributes } from './dynamodb.js';
import { ConditionFailedError } from './errors.js';

/** `reserve`: read only, from ledgers of gateways that posted a request's hold as its own entry (see `balanceChangeAtClose`). */
export type LedgerKind = 'topup' | 'reserve' | 'settle' | 'release';

/**
 * One balance change. `amountMicro` is signed: top-up +; a request's settlement, its one
 * entry: settle − (what it cost), release 0 (it ran nothing or crashed). The sum of an
 * account's entries is its balance once no reservation is open and no top-up unposted.
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
  /** The promptLogId of the request, for settle and release. */
  requestId?: string;
  /** Settle and release: the hold the entry closed, given back as it applies. */
  reservedMicro?: number;
  /** Settle only: what the request was charged (never more than its reservation). */
  chargedMicro?: number;
  /** Settle only: cost above the reservation, not charged (the balance never goes below zero). */
  uncollectedMicro?: number;
  /** Settle only: the part of the charge estimated from text, for calls whose vendor usage was missing or inconsistent. */
  estimatedMicro?: number;
}

/**
 * What closing a reservation adds to the balance: the hold back plus the settlement's
 * amount. A settlement without `reservedMicro` was written after a `reserve` entry of −hold
 * (as gateways did that posted a request's hold as its own entry): its amount already
 * includes the hold.
 */
export function balanceChangeAtClose(settlement: LedgerEntry): number {
  return (settlement.reservedMicro ?? 0) + settlement.amountMicro;
}

/** A request's settlement (settle or release): the entry that closes its reservation. */
export type SettlementEntry = LedgerEntry & { requestId: string };

/** Over the store's `items` client (StoreClient): its items marshalled here. */
export class LedgerRepository {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /**
   * Posts an entry, never over another: a second post of the same entry (a retry, or the
   * reconciler after a post whose answer was lost) is a no-op; another entry under its key,
   * which nothing writes, throws. IAM cannot make PutItem append-only; this does. Whether
   * this post wrote it (false: the ledger held it already).
   */
  async put(entry: LedgerEntry): Promise<boolean> {
    const held = await this.putFirst(entry);
    if (held.kind !== entry.kind || held.amountMicro !== entry.amountMicro || held.at !== entry.at) {
      throw new ConditionFailedError(`The ledger holds another entry ${entry.entryId} of ${entry.accountId}`);
    }
    return held === entry;
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
          new PutItemCommand({
            TableName: this.tableName,
            Item: toAttributes(entry),
            // An entry, once written, never changes: the first settlement of a request wins. No
            // item at its key at all (every entry has its accountId): in another table, named
            // LEDGER_TABLE by mistake, it would not replace that table's item (an account).
            ConditionExpression: 'attribute_not_exists(accountId)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return entry;
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const held = await refusedOrRead(error, () => this.get(entry.accountId, entry.entryId));
      if (!held) throw error;
      return held;
    }
  }

  async get(accountId: string, entryId: string): Promise<LedgerEntry | undefined> {
    const { Item } = await storeCall(
      'ledger.get',
      this.client.send(new GetItemCommand({ TableName: this.tableName, Key: toAttributes({ accountId, entryId }), ConsistentRead: true })),
    );
    return fromAttributes<LedgerEntry>(Item);
  }

  async list(accountId: string): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    const pages = paginateQuery(
      { client: this.client },
      { TableName: this.tableName, KeyConditionExpression: 'accountId = :id', ExpressionAttributeValues: toAttributes({ ':id': accountId }), ConsistentRead: true },
    );
    for await (const page of storePages('ledger.list', pages)) for (const item of page.Items ?? []) entries.push(fromAttributes<LedgerEntry>(item)!);
    return entries;
  }
}
