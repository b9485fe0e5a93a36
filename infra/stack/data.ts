import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, type Attribute, type CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { TableNames } from '../../shared/config.js';
import { TABLES, type KeyAttribute, type TableDefinition } from '../../shared/storage/tables.js';

/**
 * The environment variable that carries each table's name to the functions. These are
 * the names shared/config.ts reads; the Record type makes a new table in TableNames a
 * compile error here until it has one.
 */
export const TABLE_ENV: Record<keyof TableNames, string> = {
  accounts: 'ACCOUNTS_TABLE',
  apiKeys: 'API_KEYS_TABLE',
  ledger: 'LEDGER_TABLE',
  idempotency: 'IDEMPOTENCY_TABLE',
  promptLogs: 'PROMPT_LOGS_TABLE',
};

/** CfnOutput ID of a table's name: `accounts` -> `AccountsTableName` (the admin CLI reads these). */
export function tableNameOutputId(key: keyof TableNames): string {
  return `${key.charAt(0).toUpperCase()}${key.slice(1)}TableName`;
}

const APPEND_ONLY_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:DescribeTable',
] as const;

const ATTRIBUTE_TYPE: Record<KeyAttribute['type'], AttributeType> = { S: AttributeType.STRING, N: AttributeType.NUMBER };

function attribute(key: KeyAttribute): Attribute;
function attribute(key: KeyAttribute | undefined): Attribute | undefined;
function attribute(key: KeyAttribute | undefined): Attribute | undefined {
  return key ? { name: key.name, type: ATTRIBUTE_TYPE[key.type] } : undefined;
}

/**
 * The stateful part: one DynamoDB table per entry of TABLES (the same definition the
 * local bootstrap builds from) and the claim-check bucket. Everything here outlives a
 * `cdk destroy` and refuses replacement; construct IDs are the table keys and must not
 * change (a new logical ID would mean a new, empty table).
 */
export class GatewayData extends Construct {
  readonly tables: Readonly<Record<keyof TableNames, Table>>;
  /** Workflow payloads too large for a 256 KiB state travel through here (claim check). */
  readonly claimCheckBucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    const tables = {} as Record<keyof TableNames, Table>;
    for (const definition of TABLES) {
      const table = new Table(this, definition.key, {
        partitionKey: attribute(definition.partitionKey),
        sortKey: attribute(definition.sortKey),
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        // Balances, keys and the ledger: a stack update may never delete or replace them.
        deletionProtection: true,
        removalPolicy: RemovalPolicy.RETAIN,
        timeToLiveAttribute: definition.ttlAttribute,
      });
      for (const index of definition.globalIndexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: attribute(index.sortKey),
        });
      }
      tables[definition.key] = table;
    }
    this.tables = tables;

    this.claimCheckBucket = new Bucket(this, 'ClaimCheck', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // A claim check lives as long as one request; the rule is the backstop for requests
      // that crash before they delete their objects.
      lifecycleRules: [{ id: 'expire-claim-checks', expiration: Duration.days(1), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.claimCheckBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Claim-check objects are transient request payloads (deleted at the end of the request, expired after one day) ' +
        'read and written only by this stack\'s own function roles; an access-log bucket would add a second bucket to ' +
        'protect without adding an audit trail that CloudTrail and X-Ray do not already give.',
    });
  }

  /** `table.grantReadData(fn)`: item reads on that table and its indexes only. */
  grantReadData(key: keyof TableNames, fn: IFunction): void {
    this.tables[key].grantReadData(fn);
    this.acknowledgeIndexWildcard(key, fn);
  }

  /**
   * `table.grant(fn, 'dynamodb:GetItem')`: single-item reads by key on that table, nothing
   * else (no Query, no Scan, no writes).
   */
  grantGetItem(key: keyof TableNames, fn: IFunction): void {
    this.tables[key].grant(fn, 'dynamodb:GetItem');
    this.acknowledgeIndexWildcard(key, fn);
  }

  /** `table.grantReadWriteData(fn)`: item reads and writes on that table and its indexes only. */
  grantReadWriteData(key: keyof TableNames, fn: IFunction): void {
    this.tables[key].grantReadWriteData(fn);
    this.acknowledgeIndexWildcard(key, fn);
  }

  /**
   * Append-only access for the ledger: new entries (PutItem, also inside a transaction)
   * and reads, never UpdateItem, DeleteItem or BatchWriteItem, so no function can rewrite
   * the history that the balance is checked against.
   */
  grantAppendData(key: keyof TableNames, fn: IFunction): void {
    this.tables[key].grant(fn, ...APPEND_ONLY_ACTIONS);
    this.acknowledgeIndexWildcard(key, fn);
  }

  /** A grant on a table with indexes also names `<table ARN>/index/*`: that one table's indexes, nothing else. */
  private acknowledgeIndexWildcard(key: keyof TableNames, fn: IFunction): void {
    const definition = TABLES.find((t): t is TableDefinition => t.key === key);
    if (!definition || definition.globalIndexes.length === 0 || !fn.role) return;
    const logicalId = Stack.of(this).resolve((this.tables[key].node.defaultChild as CfnTable).logicalId) as string;
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/index/*]`,
      reason:
        `Queries on the ${definition.globalIndexes.map((i) => i.name).join(', ')} index of the ${key} table: ` +
        'the wildcard covers the indexes of that one table only.',
    });
  }
}
