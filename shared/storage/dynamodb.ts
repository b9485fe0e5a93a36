import { AwsJsonClient, AwsServiceError, type CredentialSource, type Transport } from '../aws/json-client.js';
import { fromAttributes, toAttributes, type AttributeValue, type Item } from './marshall.js';

export type { Item } from './marshall.js';

interface Expressions {
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

interface Conditional extends Expressions {
  ConditionExpression?: string;
  /** With `ALL_OLD`, a refused write's error carries the item (`conditionFailedItem`). */
  ReturnValuesOnConditionCheckFailure?: 'ALL_OLD' | 'NONE';
}

export interface GetInput extends Pick<Expressions, 'ExpressionAttributeNames'> {
  TableName: string;
  Key: Item;
  ConsistentRead?: boolean;
  ProjectionExpression?: string;
}
export interface PutInput extends Conditional {
  TableName: string;
  Item: Item;
}
export interface UpdateInput extends Conditional {
  TableName: string;
  Key: Item;
  UpdateExpression: string;
  ReturnValues?: 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW';
}
export interface DeleteInput extends Conditional {
  TableName: string;
  Key: Item;
}
export interface ScanInput extends Expressions {
  TableName: string;
  FilterExpression?: string;
  ConsistentRead?: boolean;
  ExclusiveStartKey?: Item;
  Limit?: number;
}
export interface QueryInput extends ScanInput {
  KeyConditionExpression: string;
  ScanIndexForward?: boolean;
}
export interface Page {
  Items: Item[];
  LastEvaluatedKey?: Item;
}

/** Wraps each store call, e.g. in a trace subsegment named after the operation. */
export type CallHook = <T>(operation: string, call: () => Promise<T>) => Promise<T>;

const ITEM_FIELDS = ['Key', 'Item', 'ExpressionAttributeValues', 'ExclusiveStartKey'] as const;

/**
 * DynamoDB's item operations with plain JavaScript values in and out (what the SDK's
 * document client did), over the small JSON-protocol client.
 */
export class DocumentClient {
  private hook?: CallHook;

  constructor(readonly client: AwsJsonClient) {}

  /** Sets the hook every later call goes through (tracing in AWS). */
  instrument(hook: CallHook): void {
    this.hook = hook;
  }

  async get(input: GetInput): Promise<{ Item?: Item }> {
    const { Item } = await this.call<{ Item?: Record<string, AttributeValue> }>('GetItem', input);
    return Item ? { Item: fromAttributes(Item) } : {};
  }

  async put(input: PutInput): Promise<void> {
    await this.call('PutItem', input);
  }

  async update(input: UpdateInput): Promise<{ Attributes?: Item }> {
    const { Attributes } = await this.call<{ Attributes?: Record<string, AttributeValue> }>('UpdateItem', input);
    return Attributes ? { Attributes: fromAttributes(Attributes) } : {};
  }

  async delete(input: DeleteInput): Promise<void> {
    await this.call('DeleteItem', input);
  }

  /** Every item the query matches, page after page. */
  queryAll(input: Omit<QueryInput, 'ExclusiveStartKey'>): AsyncGenerator<Item> {
    return this.all('Query', input);
  }

  /** One page of a scan. */
  scan(input: ScanInput): Promise<Page> {
    return this.page('Scan', input);
  }

  /** Every item the scan matches, page after page. */
  scanAll(input: Omit<ScanInput, 'ExclusiveStartKey'>): AsyncGenerator<Item> {
    return this.all('Scan', input);
  }

  /** Any other operation (CreateTable, DescribeTable, ...), with the wire's own JSON. */
  raw<T = Record<string, unknown>>(operation: string, input: Record<string, unknown>): Promise<T> {
    return this.run(operation, () => this.client.call<T>(operation, input));
  }

  destroy(): void {
    this.client.destroy();
  }

  private async *all(operation: string, input: ScanInput): AsyncGenerator<Item> {
    let startKey: Item | undefined;
    do {
      const page = await this.page(operation, { ...input, ExclusiveStartKey: startKey });
      yield* page.Items;
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  private async page(operation: string, input: ScanInput): Promise<Page> {
    const { Items, LastEvaluatedKey } = await this.call<{ Items?: Record<string, AttributeValue>[]; LastEvaluatedKey?: Record<string, AttributeValue> }>(operation, input);
    return { Items: (Items ?? []).map(fromAttributes), ...(LastEvaluatedKey ? { LastEvaluatedKey: fromAttributes(LastEvaluatedKey) } : {}) };
  }

  private call<T>(operation: string, input: object): Promise<T> {
    const wire: Record<string, unknown> = { ...input };
    for (const field of ITEM_FIELDS) {
      const value = wire[field] as Item | undefined;
      if (value === undefined) delete wire[field];
      else wire[field] = toAttributes(value, field);
    }
    return this.run(operation, async () => {
      try {
        return await this.client.call<T>(operation, wire);
      } catch (error) {
        if (error instanceof AwsServiceError && error.name === 'ConditionalCheckFailedException') throw new ConditionalCheckFailed(error);
        throw error;
      }
    });
  }

  private run<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return this.hook ? this.hook(`DynamoDB.${operation}`, call) : call();
  }
}

/** A write whose condition did not hold; `item` is the item as it was, when the write asked for it. */
export class ConditionalCheckFailed extends AwsServiceError {
  readonly item?: Item;
  constructor(error: AwsServiceError) {
    super(error.name, error.message, error.statusCode, error.body);
    const item = error.body.Item as Record<string, AttributeValue> | undefined;
    if (item) this.item = fromAttributes(item);
  }
}

export interface StoreOptions {
  region: string;
  /** A local DynamoDB-compatible endpoint (the embedded store): calls are not signed. Unset in AWS. */
  endpoint?: string;
  /** Required without an endpoint: the function's credentials, or a provider chain (the admin CLI). */
  credentials?: Exclude<CredentialSource, 'unsigned'>;
  /** How calls reach the endpoint; HTTP by default. */
  transport?: Transport;
}

export function createDocumentClient({ region, endpoint, credentials, transport }: StoreOptions): DocumentClient {
  if (!endpoint && !credentials) throw new Error('DynamoDB needs credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) or a local endpoint (DYNAMODB_ENDPOINT)');
  return new DocumentClient(
    new AwsJsonClient({
      service: 'dynamodb',
      region,
      targetPrefix: 'DynamoDB_20120810',
      jsonVersion: '1.0',
      endpoint,
      credentials: endpoint ? 'unsigned' : credentials!,
      ...(transport ? { transport } : {}),
    }),
  );
}
