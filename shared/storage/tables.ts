import type { TableNames } from '../config.js';

/**
 * The one definition of every table: key schema, indexes and TTL attribute. The CDK
 * stack (infra/stack) and the local bootstrap (infra/local/store) both build from it.
 * Plain data: the domain holds no AWS construct.
 */
export type AttributeType = 'S' | 'N';
export interface KeyAttribute {
  name: string;
  type: AttributeType;
}
/**
 * A global index, which keeps only the items' keys (KEYS_ONLY): a lookup by its key, the items
 * then read from the table. Projected whole, every write of a large item (a prompt log's
 * content, up to 350 KB) would be written twice, the second time to a partition all of one
 * account's items share.
 */
export interface TableIndex {
  name: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
}
export interface TableDefinition {
  /** Key into TableNames, and the construct ID in the stack. */
  key: keyof TableNames;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  globalIndexes: readonly TableIndex[];
  /** Attribute holding an epoch-seconds expiry, when records expire. */
  ttlAttribute?: string;
}

export const TABLES: readonly TableDefinition[] = [
  {
    key: 'accounts',
    partitionKey: { name: 'accountId', type: 'S' },
    globalIndexes: [],
  },
  {
    key: 'apiKeys',
    // Only the SHA-256 of a key is stored; the key itself is shown once, at creation.
    partitionKey: { name: 'keyHash', type: 'S' },
    // None by account: the admin CLI's list-keys scans (an operator's rare listing).
    globalIndexes: [],
  },
  {
    key: 'ledger',
    // Append-only: one item per balance change, keyed so that writing it twice is harmless.
    partitionKey: { name: 'accountId', type: 'S' },
    sortKey: { name: 'entryId', type: 'S' },
    globalIndexes: [],
  },
  {
    key: 'idempotency',
    partitionKey: { name: 'idempotencyKey', type: 'S' },
    globalIndexes: [],
    ttlAttribute: 'expiresAt',
  },
  {
    key: 'promptLogs',
    // One `meta` item per request, plus `content#NNN` items holding the retained content in chunks
    // (a DynamoDB item is limited to 400 KB; prompts and outputs can be larger).
    partitionKey: { name: 'promptLogId', type: 'S' },
    sortKey: { name: 'part', type: 'S' },
    globalIndexes: [
      {
        name: 'byAccount',
        partitionKey: { name: 'accountId', type: 'S' },
        sortKey: { name: 'promptLogId', type: 'S' },
      },
    ],
  },
];
