import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, Grant, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { AttributeType, BillingMode, ProjectionType, Table, type Attribute } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { CLAIM_CHECK_EXPIRY_MS } from '../../shared/claim-check/memory.js';
import type { TableNames } from '../../shared/config.js';
import { TABLES, type KeyAttribute } from '../../shared/storage/tables.js';

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

/**
 * The DynamoDB item operations the gateway's code calls (shared/storage), as IAM actions.
 * A grant names exactly those a function's code calls on a table; nothing grants an index,
 * a batch or a transaction, which no code uses.
 */
export type ItemAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'Scan';

/** What any function may do to the ledger: add entries and read them, never rewrite or remove one. */
const LEDGER_ACTIONS: ReadonlySet<ItemAction> = new Set(['PutItem', 'GetItem', 'Query']);

/**
 * The ledger's own policy: no principal of any account, this stack's roles and the account's
 * administrators included, may update or delete an entry in place, where the stack's grants
 * bind only its own roles. Not denied, as the gateway needs PutItem: a PutItem over an entry
 * by a principal allowed it (the gateway's own are conditional on the entry not being there),
 * and an administrator's removal of this policy (DeleteResourcePolicy) outside the stack.
 */
const LEDGER_POLICY = new PolicyDocument({
  statements: [
    new PolicyStatement({
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLDelete'],
      resources: ['*'],
    }),
  ],
});

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
        ...(definition.key === 'ledger' ? { resourcePolicy: LEDGER_POLICY } : {}),
      });
      for (const index of definition.globalIndexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: attribute(index.sortKey),
          projectionType: ProjectionType.KEYS_ONLY,
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
      lifecycleRules: [{ id: 'expire-claim-checks', expiration: Duration.millis(CLAIM_CHECK_EXPIRY_MS), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Kept with the bucket it guards: a bucket left behind by `cdk destroy` still refuses plain HTTP.
    this.claimCheckBucket.policy?.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(this.claimCheckBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Claim-check objects are transient request payloads (deleted at the end of the request, expired after one day) ' +
        "read and written only by this stack's own function roles; an access-log bucket would add a second bucket to " +
        'protect. Reads and writes of the objects are audited only where the account has a CloudTrail trail with S3 data events for this bucket (docs/deployment.md).',
    });
  }

  /**
   * Exactly `actions` on the one table `key` (its ARN, none of its indexes). The ledger is
   * append-only: a grant of UpdateItem or DeleteItem on it is refused here, so no function
   * can rewrite the history that the balance is checked against.
   */
  grantItems(key: keyof TableNames, fn: IFunction, actions: readonly ItemAction[]): void {
    if (key === 'ledger') {
      const rewriting = actions.filter((action) => !LEDGER_ACTIONS.has(action));
      if (rewriting.length > 0) throw new Error(`The ledger is append-only: ${rewriting.join(', ')} may not be granted on it`);
    }
    Grant.addToPrincipal({ grantee: fn, actions: actions.map((action) => `dynamodb:${action}`), resourceArns: [this.tables[key].tableArn] });
  }
}
