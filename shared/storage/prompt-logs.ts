import { PutItemCommand, paginateQuery, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { fromAttributes, storeCall, storePages, toAttributes } from './dynamodb.js';
import { jsonText } from '../text/json-text.js';

/** Metadata kept for every request, with or without zero data retention. */
export interface PromptLogModelEntry {
  modelId: string;
  status: string;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  providerCost: number | null;
  /** Where providerCost is null: what the call was charged instead, estimated from its text. */
  estimatedCost?: number;
  errorCode?: string;
}

export interface PromptLogMeta {
  promptLogId: string;
  accountId: string;
  createdAt: string;
  zeroDataRetention: boolean;
  models: PromptLogModelEntry[];
  judges: string[];
  creditsUsedMicro: number;
}

/** Kept only when zero data retention is off. */
export interface PromptLogContent {
  prompt: string;
  systemPrompt?: unknown;
  history?: unknown;
  judgePrompt?: string;
  /** Attachments are described, not stored. */
  attachments?: { name: string; type: string; bytes: number }[];
  outputs: { modelId: string; output: string }[];
}

export interface PromptLog extends PromptLogMeta {
  content?: PromptLogContent;
  /** The content was written in pieces and some never landed: the record stands, its content is lost. */
  contentIncomplete?: true;
  /** The content's size, when it was over the most its writer would keep (`put`'s `maxContentBytes`): not kept. */
  contentLeftOutBytes?: number;
}

/** Below DynamoDB's 400 KB item limit with room for the keys. */
const CHUNK_BYTES = 350_000;

/** Over the store's `items` client (StoreClient): its items marshalled here. */
export class PromptLogsRepository {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Writes the record, and its content where it has some: left out, its size noted, when over `maxContentBytes`. */
  async put(meta: PromptLogMeta, content?: PromptLogContent, maxContentBytes = Number.POSITIVE_INFINITY): Promise<void> {
    const bytes = content ? Buffer.from(jsonText(content), 'utf8') : undefined;
    if (bytes && bytes.length > maxContentBytes) {
      await this.putItem({ ...meta, part: 'meta', contentParts: 0, contentLeftOutBytes: bytes.length });
      return;
    }
    if (!bytes || bytes.length <= CHUNK_BYTES) {
      // The usual case: one item, content inline.
      await this.putItem({ ...meta, part: 'meta', contentParts: 0, ...(bytes ? { data: bytes } : {}) });
      return;
    }
    const chunks: Uint8Array[] = [];
    for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) chunks.push(bytes.subarray(offset, offset + CHUNK_BYTES));
    // The record first, then its content: should a piece fail (one partition takes about 1,000
    // write units a second, a piece 342), the request's record stands, and names the pieces
    // that did land, which get() reports as incomplete content.
    await this.putItem({ ...meta, part: 'meta', contentParts: chunks.length });
    // One piece after another, each awaited: the SDK serialises a piece (350 KB, marshalled and
    // signed) in the turn that sends it, and the event loop runs between two of them, where all
    // at once held it for up to 650 ms beside a 16 MiB output. The first refused piece ends the
    // content, already lost: no more writes to a throttled partition.
    for (const [index, data] of chunks.entries()) {
      await this.putItem({ promptLogId: meta.promptLogId, part: `content#${String(index).padStart(3, '0')}`, data }, 'promptLogs.putContent');
    }
  }

  private async putItem(item: Record<string, unknown>, operation = 'promptLogs.put'): Promise<void> {
    await storeCall(operation, this.client.send(new PutItemCommand({ TableName: this.tableName, Item: toAttributes(item) })));
  }

  async get(promptLogId: string): Promise<PromptLog | undefined> {
    // Query, not Get: large content lives in items beside the meta item.
    const items: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client: this.client },
      { TableName: this.tableName, KeyConditionExpression: 'promptLogId = :id', ExpressionAttributeValues: toAttributes({ ':id': promptLogId }), ConsistentRead: true },
    );
    for await (const page of storePages('promptLogs.get', pages)) for (const item of page.Items ?? []) items.push(fromAttributes(item)!);
    const metaItem = items.find((item) => item.part === 'meta');
    if (!metaItem) return undefined;
    const { part: _part, contentParts, data, ...meta } = metaItem as unknown as PromptLogMeta & { part: string; contentParts: number; data?: Uint8Array };
    if (data) return { ...meta, content: JSON.parse(Buffer.from(data).toString('utf8')) as PromptLogContent };
    if (!contentParts) return meta;
    const chunks = items
      .filter((item) => typeof item.part === 'string' && item.part.startsWith('content#'))
      .sort((a, b) => String(a.part).localeCompare(String(b.part)))
      .map((item) => item.data as Uint8Array);
    if (chunks.length !== contentParts) return { ...meta, contentIncomplete: true };
    return { ...meta, content: JSON.parse(Buffer.concat(chunks).toString('utf8')) as PromptLogContent };
  }
}
