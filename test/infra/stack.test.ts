import { METRIC } from '../../functions/observability.js';
import { readFileSync } from 'node:fs';
import { App, Duration, Validations, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { STORE_ATTEMPTS, STORE_TIMEOUTS } from '../../shared/deadlines.js';
import { toCreateTableInput } from '../../infra/local/store.js';
import { TABLE_ENV, tableNameOutputId } from '../../infra/stack/data.js';
import { novaModels } from '../../infra/stack/bedrock.js';
import { GatewayStack, RECONCILE_SCHEDULE, resolveSettings } from '../../infra/stack/gateway-stack.js';
import { CONTEXT_KEYS, settingsFromContext } from '../../infra/stack/context.js';
import { INLINE_MAP_CONCURRENCY } from '../../infra/stack/workflow.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { judgeCallCount, planJudgeItems } from '../../shared/judging/plan.js';
import { AUTHORIZATION_PATTERN } from '../../shared/auth/keys.js';
import { NOVA_GEOGRAPHIES } from '../../shared/catalog/bedrock-profiles.js';
import { MODELS } from '../../shared/catalog/models.js';
import { loadConfig } from '../../shared/config.js';
import { API_ROUTES, MethodNotAllowedError, NotFoundError } from '../../shared/errors.js';
import { TABLES } from '../../shared/storage/tables.js';
import { RELEASED_LOG_MESSAGE, UNCOLLECTED_LOG_MESSAGE } from '../../shared/credits/credits-service.js';

type Resources = Record<string, { Type: string; Properties?: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string }>;
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** The feature flags of cdk.json, so that the test synthesizes what `cdk synth` does. */
const CDK_CONTEXT = (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context;

function synthesize(props: ConstructorParameters<typeof GatewayStack>[2] = {}): { stack: GatewayStack; template: Template } {
  // Bundling skipped: the assertions are about the template, and esbuild runs in `cdk synth`.
  const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const stack = new GatewayStack(app, 'GatewayTest', props);
  return { stack, template: Template.fromStack(stack) };
}

function logicalId(stack: Stack, construct: IConstruct): string {
  return stack.resolve((construct.node.defaultChild as CfnResource).logicalId) as string;
}

function actions(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

function resources(statement: Statement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** Every policy statement of the template, with the logical IDs of the roles it is attached to. */
function policyStatements(template: Template): { roles: string[]; statement: Statement }[] {
  return Object.values(template.findResources('AWS::IAM::Policy') as Resources).flatMap((policy) =>
    (policy.Properties!.PolicyDocument.Statement as Statement[]).map((statement) => ({
      roles: (policy.Properties!.Roles as { Ref: string }[]).map((role) => role.Ref),
      statement,
    })),
  );
}

/**
 * A state machine's definition as JSON, its intrinsic functions rendered: the partition
 * as `aws`, `Fn::GetAtt` as `<LogicalId.Attribute>`. Any other intrinsic fails the test.
 */
function definitionOf(machine: { Properties?: Record<string, any> }): Record<string, any> {
  const render = (part: unknown): string => {
    if (typeof part === 'string') return part;
    const intrinsic = part as Record<string, any>;
    if (intrinsic.Ref === 'AWS::Partition') return 'aws';
    if (Array.isArray(intrinsic['Fn::GetAtt'])) return `<${intrinsic['Fn::GetAtt'].join('.')}>`;
    throw new Error(`an unexpected intrinsic in the definition: ${JSON.stringify(part)}`);
  };
  const definition = machine.Properties!.DefinitionString as string | { 'Fn::Join': [string, unknown[]] };
  return JSON.parse(typeof definition === 'string' ? definition : definition['Fn::Join'][1].map(render).join('')) as Record<string, any>;
}

/** Every state of a definition, those inside Map item processors included. */
function allStates(states: Record<string, any>): [string, Record<string, any>][] {
  return Object.entries(states).flatMap(([name, state]): [string, Record<string, any>][] => [
    [name, state],
    ...(state.ItemProcessor ? allStates(state.ItemProcessor.States as Record<string, any>) : []),
  ]);
}

/**
 * The store calls each function with tables makes one after another before it answers (read
 * off its code), and what else its timeout must hold: each call may take the store's worst
 * case (every attempt hung) and still leave the function time to answer.
 */
const SEQUENTIAL_STORE_CALLS: Record<'authorizerFunction' | 'apiFunction' | 'reconcilerFunction', { calls: number; besidesMs: number }> = {
  // The key, then its account (shared/auth/authenticate.ts); a second for the rest.
  authorizerFunction: { calls: 2, besidesMs: 1_000 },
  // The reserve (the account comes in the authorizer's context), then the models, at least
  // 2 s, stopped 1 s before the deadline, which is 4 s before the timeout.
  apiFunction: { calls: 1, besidesMs: 2_000 + 1_000 + 4_000 },
  // A batch: a Scan page, then one account's close (the ledger read, the settlement, the account update); a second for the rest.
  reconcilerFunction: { calls: 4, besidesMs: 1_000 },
};

/** Every function that calls the store has the time for SEQUENTIAL_STORE_CALLS of its calls each to fail all their attempts. */
function expectStoreCallersOutlastTheStore(stack: GatewayStack, template: Template): void {
  // Each attempt waits at most answerMs (the connection included); the SDK's backoff between attempts stays under a second in all.
  const worstCallMs = STORE_ATTEMPTS * STORE_TIMEOUTS.answerMs + 1_000;
  const all = template.toJSON().Resources as Resources;
  const callers = Object.entries(template.findResources('AWS::Lambda::Function') as Resources)
    .filter(([, fn]) => Object.keys(fn.Properties!.Environment.Variables).some((name) => name.endsWith('_TABLE')))
    .map(([id]) => id);
  const counted = Object.keys(SEQUENTIAL_STORE_CALLS) as (keyof typeof SEQUENTIAL_STORE_CALLS)[];
  // A new function with tables gets its count decided here.
  expect(callers.sort()).toEqual(counted.map((name) => logicalId(stack, stack[name])).sort());
  for (const name of counted) {
    const { calls, besidesMs } = SEQUENTIAL_STORE_CALLS[name];
    expect(all[logicalId(stack, stack[name])]!.Properties!.Timeout * 1_000, name).toBeGreaterThanOrEqual(calls * worstCallMs + besidesMs);
  }
}

/**
 * The Lambda service errors the workflow's tasks retry (infra/stack/workflow.ts): a throttled
 * invocation, which never ran. Never one that may follow a run (its vendor calls would be paid
 * twice), nor an error the function threw.
 */
const LAMBDA_SERVICE_ERRORS = ['Lambda.TooManyRequestsException'];

/** Actions AWS supports on no resource but "*", by who needs them. */
const LAMBDA_STAR_ACTIONS = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
const STATE_MACHINE_STAR_ACTIONS = [
  // Execution logs to CloudWatch Logs (vended log delivery).
  'logs:CreateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:DescribeLogGroups',
  'logs:DescribeResourcePolicies',
  'logs:GetLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:UpdateLogDelivery',
  // X-Ray tracing.
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
  'xray:PutTelemetryRecords',
  'xray:PutTraceSegments',
].sort();

describe('Stack: GatewayStack', () => {
  let stack: GatewayStack;
  let template: Template;
  let all: Resources;

  beforeAll(() => {
    ({ stack, template } = synthesize());
    all = template.toJSON().Resources as Resources;
  }, 60_000);

  describe('Construct: GatewayData (stateful)', () => {
    it('declares exactly one table per TABLES entry', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', TABLES.length);
    });

    it.each(TABLES.map((definition) => [definition.key, definition] as const))('builds the %s table from its shared definition, as the local bootstrap does', (key, definition) => {
      // Prepare
      const local = toCreateTableInput(definition, 'local');
      const table = all[logicalId(stack, stack.data.tables[key])]!;
      const props = table.Properties!;

      // Assess: the same keys, attributes and indexes as CreateTable gets locally.
      expect(props.KeySchema).toEqual(local.KeySchema);
      expect(props.BillingMode).toBe(local.BillingMode);
      const byName = (a: { AttributeName?: string }, b: { AttributeName?: string }) => a.AttributeName!.localeCompare(b.AttributeName!);
      expect([...props.AttributeDefinitions].sort(byName)).toEqual([...local.AttributeDefinitions!].sort(byName));
      expect(props.GlobalSecondaryIndexes).toEqual(local.GlobalSecondaryIndexes);
      // Keys only: a whole prompt log (up to 350 KB) is not written a second time into an index.
      for (const index of props.GlobalSecondaryIndexes ?? []) expect(index.Projection).toEqual({ ProjectionType: 'KEYS_ONLY' });
      expect(props.TimeToLiveSpecification).toEqual(definition.ttlAttribute ? { AttributeName: definition.ttlAttribute, Enabled: true } : undefined);
      // Protected: on demand, PITR, deletion protection, retained on delete and on replacement.
      expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(props.DeletionProtectionEnabled).toBe(true);
      expect(props.TableName).toBeUndefined();
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
    });

    it("keeps the tables' logical IDs (a new ID would be a new, empty table)", () => {
      const ids = Object.fromEntries(TABLES.map((t) => [t.key, logicalId(stack, stack.data.tables[t.key])]));
      expect(ids).toEqual({
        accounts: 'Dataaccounts8C353CD3',
        apiKeys: 'DataapiKeysF790ECC1',
        ledger: 'DataledgerA066B167',
        idempotency: 'DataidempotencyF4D089FD',
        promptLogs: 'DatapromptLogs017E57BE',
      });
    });

    it("names every table's environment variable the way shared/config.ts reads it", () => {
      for (const { key } of TABLES) {
        expect(loadConfig({ [TABLE_ENV[key]]: `deployed-${key}` }).tables[key]).toBe(`deployed-${key}`);
      }
    });

    it('encrypts the claim-check bucket, blocks public access, expires objects after a day, and keeps its TLS-only policy with it (the policy had been deleted with the stack, the bucket kept)', () => {
      const bucketId = logicalId(stack, stack.data.claimCheckBucket);
      template.hasResource('AWS::S3::Bucket', {
        DeletionPolicy: 'Retain',
        Properties: {
          BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
          PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
          LifecycleConfiguration: {
            Rules: [Match.objectLike({ Status: 'Enabled', ExpirationInDays: 1, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } })],
          },
        },
      });
      template.hasResource('AWS::S3::BucketPolicy', {
        DeletionPolicy: 'Retain',
        Properties: {
          Bucket: { Ref: bucketId },
          PolicyDocument: {
            Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
          },
        },
      });
    });
  });

  describe('Construct: ProviderSecret', () => {
    it('creates the secret as an empty JSON object, with no generated or placeholder value', () => {
      template.resourceCountIs('AWS::SecretsManager::Secret', 1);
      template.hasResourceProperties('AWS::SecretsManager::Secret', { SecretString: '{}', GenerateSecretString: Match.absent() });
    });

    it('lets only the functions that call models (api, generate, judge) read it, GetSecretValue alone (their one call: not the DescribeSecret grantRead adds), and gives them its ARN', () => {
      const secretId = logicalId(stack, stack.providerSecret.secret);
      const callers = [stack.apiFunction, stack.generateFunction, stack.judgeFunction];
      const readers = policyStatements(template).filter(({ statement }) => actions(statement).some((a) => a.startsWith('secretsmanager:')));
      expect(readers.flatMap(({ roles }) => roles).sort()).toEqual(callers.map((fn) => logicalId(stack, fn.role!)).sort());
      for (const { statement } of readers) {
        expect(statement.Effect).toBe('Allow');
        expect(actions(statement)).toEqual(['secretsmanager:GetSecretValue']);
        expect(statement.Resource).toEqual({ Ref: secretId });
      }
      for (const fn of callers) {
        expect(all[logicalId(stack, fn)]!.Properties!.Environment.Variables.PROVIDER_SECRET_ARN).toEqual({ Ref: secretId });
      }
      for (const fn of [stack.authorizerFunction, stack.reconcilerFunction]) {
        expect(all[logicalId(stack, fn)]!.Properties!.Environment.Variables.PROVIDER_SECRET_ARN).toBeUndefined();
      }
    });
  });

  describe('Construct: GatewayFunction', () => {
    it('gives every function that calls the store the time for each store call it makes before answering to fail all its attempts, so that it answers instead of timing out', () => {
      expectStoreCallersOutlastTheStore(stack, template);
    });

    it('runs every function on nodejs22.x, arm64, with active tracing, its own log group and the Powertools settings', () => {
      const functions = Object.values(template.findResources('AWS::Lambda::Function') as Resources);
      expect(functions).toHaveLength(6);
      expect(Object.keys(template.findResources('AWS::Lambda::Function')).sort()).toEqual(
        [stack.authorizerFunction, stack.apiFunction, stack.catalogFunction, stack.generateFunction, stack.judgeFunction, stack.reconcilerFunction]
          .map((fn) => logicalId(stack, fn))
          .sort(),
      );
      for (const fn of functions) {
        const props = fn.Properties!;
        expect(props.Runtime).toBe('nodejs22.x');
        expect(props.Architectures).toEqual(['arm64']);
        expect(props.TracingConfig).toEqual({ Mode: 'Active' });
        expect(props.Handler).toBe('index.handler');
        // Source maps ship beside the bundle but are not read at start (they cost each cold start about 8 ms).
        expect(props.Environment.Variables.NODE_OPTIONS).toBeUndefined();
        expect(props.Environment.Variables).toMatchObject({
          POWERTOOLS_SERVICE_NAME: 'model-compare-gateway',
          POWERTOOLS_METRICS_NAMESPACE: 'ModelCompareGateway',
          POWERTOOLS_LOGGER_LOG_EVENT: 'false',
          POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
          POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
        });
        const logGroup = all[props.LoggingConfig.LogGroup.Ref]!;
        expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
        expect(logGroup.Properties!.RetentionInDays).toBe(30);
      }
    });

    it('gives the roles no managed policy', () => {
      for (const role of Object.values(template.findResources('AWS::IAM::Role') as Resources)) {
        const principal = role.Properties!.AssumeRolePolicyDocument.Statement[0].Principal.Service;
        if (principal === 'lambda.amazonaws.com') expect(role.Properties!.ManagedPolicyArns).toBeUndefined();
      }
    });

    it('gives the api function its tables, a timeout equal to the integration timeout and a 4 s shorter deadline', () => {
      const props = all[logicalId(stack, stack.apiFunction)]!.Properties!;
      expect(props.Timeout).toBe(29);
      expect(props.Environment.Variables.REQUEST_DEADLINE_MS).toBe('25000');
      const tableEnv = Object.fromEntries(TABLES.filter((t) => t.key !== 'apiKeys').map((t) => [TABLE_ENV[t.key], { Ref: logicalId(stack, stack.data.tables[t.key]) }]));
      expect(props.Environment.Variables).toMatchObject(tableEnv);
      expect(props.Environment.Variables[TABLE_ENV.apiKeys]).toBeUndefined();
    });

    it('gives the authorizer the API keys and accounts tables only', () => {
      const variables = all[logicalId(stack, stack.authorizerFunction)]!.Properties!.Environment.Variables;
      expect(variables[TABLE_ENV.apiKeys]).toEqual({ Ref: logicalId(stack, stack.data.tables.apiKeys) });
      expect(variables[TABLE_ENV.accounts]).toEqual({ Ref: logicalId(stack, stack.data.tables.accounts) });
      expect(
        Object.keys(variables)
          .filter((name) => name.endsWith('_TABLE'))
          .sort(),
      ).toEqual([TABLE_ENV.accounts, TABLE_ENV.apiKeys].sort());
      expect(variables.PROVIDER_SECRET_ARN).toBeUndefined();
      expect(variables.JUDGE_WORKFLOW_ARN).toBeUndefined();
      expect(variables.CLAIM_CHECK_BUCKET).toBeUndefined();
    });

    it('gives the generate and judge functions the secret and the claim-check bucket, no table, and the integration timeout', () => {
      const bucketRef = { Ref: logicalId(stack, stack.data.claimCheckBucket) };
      for (const fn of [stack.generateFunction, stack.judgeFunction]) {
        const props = all[logicalId(stack, fn)]!.Properties!;
        expect(props.Timeout).toBe(29);
        expect(props.Environment.Variables).toMatchObject({
          PROVIDER_SECRET_ARN: { Ref: logicalId(stack, stack.providerSecret.secret) },
          CLAIM_CHECK_BUCKET: bucketRef,
        });
        expect(Object.keys(props.Environment.Variables).filter((name) => name.endsWith('_TABLE'))).toEqual([]);
        expect(props.Environment.Variables.JUDGE_WORKFLOW_ARN).toBeUndefined();
      }
    });

    it('gives the reconciler the accounts and ledger tables only, and a timeout below its schedule', () => {
      const props = all[logicalId(stack, stack.reconcilerFunction)]!.Properties!;
      expect(props.Timeout).toBe(240);
      expect(props.Environment.Variables).toMatchObject({
        [TABLE_ENV.accounts]: { Ref: logicalId(stack, stack.data.tables.accounts) },
        [TABLE_ENV.ledger]: { Ref: logicalId(stack, stack.data.tables.ledger) },
      });
      expect(
        Object.keys(props.Environment.Variables)
          .filter((name) => name.endsWith('_TABLE'))
          .sort(),
      ).toEqual([TABLE_ENV.accounts, TABLE_ENV.ledger].sort());
      expect(props.Environment.Variables.PROVIDER_SECRET_ARN).toBeUndefined();
    });
  });

  describe('Schedule: reconciler', () => {
    it('runs the reconciler every 5 minutes from an EventBridge rule, without retries of old events', () => {
      const rules = Object.values(template.findResources('AWS::Events::Rule') as Resources);
      expect(rules).toHaveLength(1);
      const rule = rules[0]!.Properties!;
      expect(rule.ScheduleExpression).toBe('rate(5 minutes)');
      expect(rule.State).toBe('ENABLED');
      expect(rule.Targets).toEqual([
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [logicalId(stack, stack.reconcilerFunction), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ]);
      // Nor Lambda's own retries of an async invocation that failed: the next run tries again.
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: logicalId(stack, stack.reconcilerFunction) },
        MaximumRetryAttempts: 0,
      });
    });

    it('lets only that rule invoke the reconciler', () => {
      const permissions = Object.values(template.findResources('AWS::Lambda::Permission') as Resources)
        .map((p) => p.Properties!)
        .filter((p) => p.Principal === 'events.amazonaws.com');
      expect(permissions).toHaveLength(1);
      expect(permissions[0]).toMatchObject({
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [logicalId(stack, stack.reconcilerFunction), 'Arn'] },
        SourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.reconcileSchedule), 'Arn'] },
      });
    });
  });

  describe('IAM', () => {
    it('has no wildcard action anywhere, and "*" resources only for the actions AWS supports on nothing else', () => {
      const stateMachineRole = logicalId(stack, stack.workflow.stateMachine.role);
      const starActions: Record<string, Set<string>> = {};
      for (const { roles, statement } of policyStatements(template)) {
        expect(statement.Effect).toBe('Allow');
        expect(actions(statement).filter((a) => a.includes('*'))).toEqual([]);
        if (!resources(statement).includes('*')) continue;
        // A "*" statement names nothing else, so no other action can ride on it.
        expect(resources(statement)).toEqual(['*']);
        for (const role of roles) {
          const granted = starActions[role] ?? new Set<string>();
          starActions[role] = granted;
          for (const action of actions(statement)) granted.add(action);
        }
      }
      // Lambda's X-Ray integration (every function) and the state machine's log delivery and
      // X-Ray tracing support no resource-level permissions; nothing else may name "*".
      const functionRoles = [stack.authorizerFunction, stack.apiFunction, stack.catalogFunction, stack.generateFunction, stack.judgeFunction, stack.reconcilerFunction].map((fn) =>
        logicalId(stack, fn.role!),
      );
      expect(Object.keys(starActions).sort()).toEqual([...functionRoles, stateMachineRole].sort());
      for (const role of functionRoles) expect([...starActions[role]!].sort(), role).toEqual(LAMBDA_STAR_ACTIONS);
      expect([...starActions[stateMachineRole]!].sort()).toEqual(STATE_MACHINE_STAR_ACTIONS);
    });

    /** Table logical IDs named by a role's DynamoDB statements, and the actions on each. */
    function tableGrants(roleId: string): Record<string, string[]> {
      const grants: Record<string, string[]> = {};
      for (const { roles, statement } of policyStatements(template)) {
        if (!roles.includes(roleId) || !actions(statement).some((a) => a.startsWith('dynamodb:'))) continue;
        for (const resource of resources(statement)) {
          expect(resource).not.toBe('*');
          const json = JSON.stringify(resource);
          const table = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(json)?.[1];
          expect(table, `a DynamoDB resource that is not a table ARN: ${json}`).toBeDefined();
          // An index ARN (`<table ARN>/index/...`) counts apart from its table.
          const key = json.includes('/index/') ? `${table}/index` : table!;
          grants[key] = [...new Set([...(grants[key] ?? []), ...actions(statement)])].sort();
        }
      }
      return grants;
    }

    /** The grants a role should have: table key to the exact DynamoDB actions its code calls. */
    function expectGrants(role: IConstruct, expected: Partial<Record<keyof typeof stack.data.tables, string[]>>): void {
      const id = (key: string) => logicalId(stack, stack.data.tables[key as keyof typeof stack.data.tables]);
      const want = Object.fromEntries(Object.entries(expected).map(([key, names]) => [id(key), names!.map((n) => `dynamodb:${n}`).sort()]));
      expect(tableGrants(logicalId(stack, role))).toEqual(want);
    }

    it('lets the authorizer get the API key by its hash and the account by its ID, nothing else (no index, no query)', () => {
      // shared/auth/authenticate.ts: apiKeys.get, accounts.get.
      expectGrants(stack.authorizerFunction.role!, { apiKeys: ['GetItem'], accounts: ['GetItem'] });
    });

    it('gives the generate, judge and state machine roles no table', () => {
      for (const role of [stack.generateFunction.role!, stack.judgeFunction.role!, stack.workflow.stateMachine.role]) {
        expect(tableGrants(logicalId(stack, role))).toEqual({});
      }
    });

    it("lets the api, generate and judge functions invoke the catalog's Nova models through this region's inference profiles (the api function streaming too), and nothing else on Bedrock", () => {
      const callers = [stack.apiFunction, stack.generateFunction, stack.judgeFunction].map((fn) => logicalId(stack, fn.role!));
      const bedrock = policyStatements(template).filter(({ statement }) => actions(statement).some((a) => a.startsWith('bedrock:')));
      const mappingId = Object.keys(template.toJSON().Mappings as object)[0]!;
      const inMap = (attribute: string) => ({ 'Fn::FindInMap': [mappingId, { Ref: 'AWS::Region' }, attribute] });
      const profile = (model: string) => ({
        'Fn::Join': [
          '',
          ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':inference-profile/', inMap('prefix'), `.${model}`],
        ],
      });
      const apiRole = callers[0];
      for (const role of callers) {
        const statements = bedrock.filter(({ roles }) => roles.includes(role)).map(({ statement }) => statement as Statement & { Sid?: string });
        // Converse is authorized as InvokeModel, ConverseStream (the api function's, for an
        // event-stream request) as InvokeModelWithResponseStream: no other model, no management API.
        const granted = role === apiRole ? ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'] : ['bedrock:InvokeModel'];
        expect(statements.map((st) => [st.Sid, actions(st)]).sort()).toEqual([
          ['NovaFoundationModels', granted],
          ['NovaInferenceProfiles', granted],
        ]);
        // The profiles in this region and account; the models in the profile's destination regions.
        expect(statements.find((st) => st.Sid === 'NovaInferenceProfiles')!.Resource).toEqual(novaModels().map(profile));
        expect(statements.find((st) => st.Sid === 'NovaFoundationModels')!.Resource).toEqual({ 'Fn::Split': [',', inMap('foundationModels')] });
      }
      expect([...new Set(bedrock.flatMap(({ roles }) => roles))].sort()).toEqual(callers.sort());
      // docs/deployment.md names every Bedrock action a role holds, where it says what the roles may call.
      const deployment = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
      const providerKeysBullet = /\n- Bedrock \(`fam_h`\) needs no key:[\s\S]*?(?=\n- |\n\n)/.exec(deployment)![0];
      const grantBullet = /\n- The grant \(`infra\/stack\/bedrock\.ts`, `NovaInvoke`\):[\s\S]*?(?=\n- |\n\n)/.exec(deployment)![0];
      for (const action of new Set(bedrock.flatMap(({ statement }) => actions(statement)))) {
        expect(providerKeysBullet, action).toContain(`\`${action}\``);
        expect(grantBullet, action).toContain(`\`${action}\``);
      }
    });

    it("maps every source region of a Nova profile to its geography's prefix and every catalog Bedrock model in every destination region", () => {
      const mapping = Object.values(template.toJSON().Mappings as Record<string, Record<string, { prefix: string; foundationModels: string }>>)[0]!;
      const catalog = [...new Set(MODELS.filter((m) => m.provider === 'bedrock').map((m) => m.upstreamModel))].sort();
      expect(novaModels()).toEqual(catalog);
      expect(Object.keys(mapping).sort()).toEqual(NOVA_GEOGRAPHIES.flatMap((g) => g.regions).sort());
      for (const geography of NOVA_GEOGRAPHIES) {
        const arns = geography.regions.flatMap((region) => catalog.map((model) => `arn:aws:bedrock:${region}::foundation-model/${model}`)).sort();
        for (const region of geography.regions) {
          expect(mapping[region]!.prefix).toBe(geography.prefix);
          expect(mapping[region]!.foundationModels.split(',').sort()).toEqual(arns);
        }
      }
      expect(mapping['eu-west-1']!.prefix).toBe('eu');
    });

    it("tells each Bedrock caller to call Bedrock in the stack's region", () => {
      for (const fn of [stack.apiFunction, stack.generateFunction, stack.judgeFunction]) {
        expect(all[logicalId(stack, fn)]!.Properties!.Environment.Variables.BEDROCK_REGION).toEqual({ Ref: 'AWS::Region' });
      }
      expect(all[logicalId(stack, stack.authorizerFunction)]!.Properties!.Environment.Variables.BEDROCK_REGION).toBeUndefined();
    });

    it('refuses at synth a stack whose region no Nova profile serves, and synthesizes one that a profile serves', () => {
      expect(() => synthesize({ env: { region: 'sa-east-1' } })).toThrow(/no cross-region inference profile with sa-east-1/);
      expect(() => synthesize({ env: { region: 'eu-west-3' } })).not.toThrow();
    });

    it('lets the api function call exactly what the request path calls on each table, and only append to the ledger', () => {
      // Account read and reserve/settle updates; ledger put and read-back; idempotency claim,
      // read, complete and release; the prompt log written. No Scan, Query, batch or index.
      expectGrants(stack.apiFunction.role!, {
        accounts: ['GetItem', 'UpdateItem'],
        ledger: ['PutItem', 'GetItem'],
        idempotency: ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem'],
        promptLogs: ['PutItem'],
      });
    });

    it('lets the reconciler scan and update accounts and only append to the ledger', () => {
      expectGrants(stack.reconcilerFunction.role!, { accounts: ['Scan', 'UpdateItem'], ledger: ['PutItem', 'GetItem'] });
    });

    it('refuses to grant anything that rewrites the ledger', () => {
      const { stack: fresh } = synthesize();
      expect(() => fresh.data.grantItems('ledger', fresh.reconcilerFunction, ['UpdateItem'])).toThrow(/append-only/);
      expect(() => fresh.data.grantItems('ledger', fresh.reconcilerFunction, ['DeleteItem'])).toThrow(/append-only/);
    });

    it("denies every principal, in the ledger's own policy, what would change or delete an entry; no other table has a policy", () => {
      const tables = template.findResources('AWS::DynamoDB::Table') as Resources;
      const ledger = tables[logicalId(stack, stack.data.tables.ledger)]!.Properties!;
      const [statement, ...others] = ledger.ResourcePolicy.PolicyDocument.Statement;
      expect(others).toEqual([]);
      expect(statement).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Resource: '*' });
      expect([...statement.Action].sort()).toEqual(['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PartiQLDelete', 'dynamodb:PartiQLUpdate', 'dynamodb:UpdateItem']);
      expect(Object.values(tables).filter((table) => table.Properties!.ResourcePolicy !== undefined)).toHaveLength(1);
    });
  });

  describe('Construct: JudgeWorkflow', () => {
    let machine: { Type: string; Properties?: Record<string, any> };
    let definition: Record<string, any>;
    let states: Record<string, Record<string, any>>;

    beforeAll(() => {
      machine = all[logicalId(stack, stack.workflow.stateMachine)]!;
      definition = definitionOf(machine);
      states = Object.fromEntries(allStates(definition.States as Record<string, any>));
    });

    it('is the one Express state machine, logging every event without execution data to its own log group, traced', () => {
      template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
      const props = machine.Properties!;
      expect(props.StateMachineType).toBe('EXPRESS');
      expect(props.TracingConfiguration).toEqual({ Enabled: true });
      expect(props.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
      const destinations = props.LoggingConfiguration.Destinations as { CloudWatchLogsLogGroup: { LogGroupArn: unknown } }[];
      expect(destinations).toEqual([{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logicalId(stack, stack.workflow.logGroup), 'Arn'] } } }]);
      expect(all[logicalId(stack, stack.workflow.logGroup)]!.Properties!.RetentionInDays).toBe(30);
      // Under the prefix AWS advises for vended logs (the logs resource policy's size limit), named per stack.
      expect(all[logicalId(stack, stack.workflow.logGroup)]!.Properties!.LogGroupName).toBe('/aws/vendedlogs/states/GatewayTest-judge-workflow');
      // Named, so deleted with the stack: one left behind would make the next deploy fail on its name.
      expect(all[logicalId(stack, stack.workflow.logGroup)]!.DeletionPolicy).toBe('Delete');
      // The api function waits for it synchronously: no longer than the integration timeout.
      expect(definition.TimeoutSeconds).toBe(29);
    });

    it('runs Generate (a Map) then Judge (a Map), and ends', () => {
      expect(definition.StartAt).toBe('Generate');
      expect(Object.keys(definition.States as object).sort()).toEqual(['Generate', 'Judge']);
      expect(definition.States.Generate).toMatchObject({ Type: 'Map', ItemsPath: '$.models', ResultPath: '$.results', Next: 'Judge' });
      expect(definition.States.Judge).toMatchObject({ Type: 'Map', ItemsPath: '$.judges', ResultPath: '$.judgments', End: true });
      expect(definition.States.Generate.ItemProcessor.StartAt).toBe('GenerateModel');
      // One task per judge, given every result: it skips the pairs with a failed one itself.
      expect(definition.States.Judge.ItemProcessor.StartAt).toBe('JudgeCalls');
      expect(definition.States.Judge.ItemSelector).toMatchObject({ 'item.$': '$$.Map.Item.Value', 'results.$': '$.results' });
    });

    it('fits any request the contract allows into one wave of each inline Map (at most 40 iterations at once)', () => {
      // Neither map caps its concurrency below Step Functions' own 40.
      for (const map of ['Generate', 'Judge']) expect(definition.States[map].MaxConcurrency ?? 0).toBe(0);
      expect(definition.States.Generate.ItemProcessor.ProcessorConfig ?? { Mode: 'INLINE' }).toEqual({ Mode: 'INLINE' });
      let atLimit = 0;
      for (let judges = 1; judges <= LIMITS.judges; judges++) {
        for (let n = 2; n <= LIMITS.models && judgeCallCount(judges, n) <= LIMITS.judgeCalls; n++) {
          const models = Array.from({ length: n }, (_, i) => i);
          const items = planJudgeItems(judges, models);
          // Generate: one iteration per model; Judge: one per judge, holding all its calls.
          expect(n).toBeLessThanOrEqual(INLINE_MAP_CONCURRENCY);
          expect(items.length).toBeLessThanOrEqual(INLINE_MAP_CONCURRENCY);
          expect(items.flatMap((item) => item.tasks)).toHaveLength(judgeCallCount(judges, n));
          if (judgeCallCount(judges, n) > LIMITS.judgeCalls - 11) atLimit++;
        }
      }
      expect(atLimit).toBeGreaterThan(0);
    });

    it('has exactly two Lambda tasks, GenerateModel on the generate function and JudgeCalls on the judge function', () => {
      const tasks = Object.entries(states).filter(([, state]) => state.Type === 'Task');
      expect(tasks.map(([name]) => name).sort()).toEqual(['GenerateModel', 'JudgeCalls']);
      for (const [name, fn] of [
        ['GenerateModel', stack.generateFunction],
        ['JudgeCalls', stack.judgeFunction],
      ] as const) {
        const task = states[name]!;
        expect(task.Resource).toBe('arn:aws:states:::lambda:invoke');
        expect(task.Parameters).toEqual({ FunctionName: `<${logicalId(stack, fn)}.Arn>`, 'Payload.$': '$' });
        expect(task.OutputPath).toBe('$.Payload');
        expect(task.TimeoutSeconds).toBe(29);
      }
    });

    it.each(['GenerateModel', 'JudgeCalls'])('retries %s on a throttled invocation only, and catches everything else into a failed item', (name) => {
      const task = states[name]!;
      // One retrier, on errors of the Lambda service: an error the function threw is a bug a retry would repeat.
      expect(task.Retry).toHaveLength(1);
      const [retry] = task.Retry as Record<string, any>[];
      expect([...(retry!.ErrorEquals as string[])].sort()).toEqual(LAMBDA_SERVICE_ERRORS);
      expect(retry).toMatchObject({ IntervalSeconds: 1, MaxAttempts: 2, BackoffRate: 2, JitterStrategy: 'FULL' });
      // Every other error becomes a failed item, so one model or judge never fails the execution.
      expect(task.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: expect.any(String) }]);
      const fallback = states[(task.Catch as { Next: string }[])[0]!.Next]!;
      expect(fallback).toMatchObject({ Type: 'Pass', End: true, Parameters: { status: 'failed', 'error.$': '$.error.Error' } });
    });

    it('gives the state machine a role that may invoke the generate and judge functions only', () => {
      const roleId = logicalId(stack, stack.workflow.stateMachine.role);
      expect(machine.Properties!.RoleArn).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      const role = all[roleId]!.Properties!;
      expect(role.AssumeRolePolicyDocument.Statement).toEqual([
        expect.objectContaining({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: 'states.amazonaws.com' } }),
      ]);
      expect(role.ManagedPolicyArns).toBeUndefined();
      const statements = policyStatements(template)
        .filter(({ roles }) => roles.includes(roleId))
        .map(({ statement }) => statement);
      const invoke = statements.filter((statement) => actions(statement).some((a) => a.startsWith('lambda:')));
      expect(invoke).toHaveLength(1);
      expect(actions(invoke[0]!)).toEqual(['lambda:InvokeFunction']);
      const arns = [stack.generateFunction, stack.judgeFunction].flatMap((fn) => {
        const arn = { 'Fn::GetAtt': [logicalId(stack, fn), 'Arn'] };
        return [arn, { 'Fn::Join': ['', [arn, ':*']] }];
      });
      expect(resources(invoke[0]!)).toHaveLength(arns.length);
      expect(resources(invoke[0]!)).toEqual(expect.arrayContaining(arns));
      // Everything else it holds is the "*" log delivery and X-Ray of the IAM test above.
      for (const statement of statements.filter((s) => s !== invoke[0])) expect(resources(statement)).toEqual(['*']);
    });

    it('lets only the api function start it, synchronously, and gives it the ARN', () => {
      const machineRef = { Ref: logicalId(stack, stack.workflow.stateMachine) };
      const starters = policyStatements(template).filter(({ statement }) => actions(statement).some((a) => a.startsWith('states:')));
      expect(starters).toHaveLength(1);
      expect(starters[0]!.roles).toEqual([logicalId(stack, stack.apiFunction.role!)]);
      expect(actions(starters[0]!.statement)).toEqual(['states:StartSyncExecution']);
      expect(resources(starters[0]!.statement)).toEqual([machineRef]);
      expect(all[logicalId(stack, stack.apiFunction)]!.Properties!.Environment.Variables.JUDGE_WORKFLOW_ARN).toEqual(machineRef);
      // The tasks are invoked by the state machine's role, never through a resource policy.
      const invokable = Object.values(template.findResources('AWS::Lambda::Permission') as Resources).map((p) => JSON.stringify(p.Properties!.FunctionName));
      for (const fn of [stack.generateFunction, stack.judgeFunction]) {
        expect(invokable.filter((name) => name.includes(logicalId(stack, fn)))).toEqual([]);
      }
    });

    it('gives the claim-check bucket to the api, generate and judge functions only, on its objects, with exact actions (and ListBucket on the bucket to those that read)', () => {
      const bucketId = logicalId(stack, stack.data.claimCheckBucket);
      const bucket = { 'Fn::GetAtt': [bucketId, 'Arn'] };
      const objects = { 'Fn::Join': ['', [bucket, '/*']] };
      const grants: Record<string, string[]> = {};
      for (const { roles, statement } of policyStatements(template)) {
        if (!JSON.stringify(statement.Resource).includes(bucketId)) continue;
        // The bucket itself only for ListBucket, which makes S3 answer a missing object's read NoSuchKey, not AccessDenied.
        expect(resources(statement)).toEqual(actions(statement).includes('s3:ListBucket') ? [bucket] : [objects]);
        if (actions(statement).includes('s3:ListBucket')) expect(actions(statement)).toEqual(['s3:ListBucket']);
        for (const role of roles) grants[role] = [...(grants[role] ?? []), ...actions(statement)].sort();
      }
      expect(grants).toEqual({
        [logicalId(stack, stack.apiFunction.role!)]: ['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject'],
        [logicalId(stack, stack.generateFunction.role!)]: ['s3:GetObject', 's3:ListBucket', 's3:PutObject'],
        [logicalId(stack, stack.judgeFunction.role!)]: ['s3:GetObject', 's3:ListBucket', 's3:PutObject'],
      });
      for (const fn of [stack.apiFunction, stack.generateFunction, stack.judgeFunction]) {
        expect(all[logicalId(stack, fn)]!.Properties!.Environment.Variables.CLAIM_CHECK_BUCKET).toEqual({ Ref: bucketId });
      }
      for (const fn of [stack.authorizerFunction, stack.reconcilerFunction]) {
        expect(all[logicalId(stack, fn)]!.Properties!.Environment.Variables.CLAIM_CHECK_BUCKET).toBeUndefined();
      }
    });
  });

  describe('Construct: GatewayApi', () => {
    it('is a regional REST API that takes TLS 1.2 and 1.3 only (its default endpoint took TLS 1.0 and 1.1)', () => {
      template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] }, SecurityPolicy: 'TLS_1_2' });
    });

    it('has POST /api/v1/prompt behind the custom authorizer and the integration timeout', () => {
      const methods = Object.values(template.findResources('AWS::ApiGateway::Method') as Resources).map((m) => m.Properties!);
      expect(methods.map((m) => m.HttpMethod).sort()).toEqual([
        'ANY',
        'ANY',
        'ANY',
        'ANY',
        'ANY',
        'ANY',
        'ANY',
        'GET',
        'GET',
        'GET',
        'GET',
        'GET',
        'GET',
        'HEAD',
        'HEAD',
        'HEAD',
        'HEAD',
        'HEAD',
        'HEAD',
        'POST',
      ]);
      const method = methods.find((m) => m.HttpMethod === 'POST')!;
      expect(method.HttpMethod).toBe('POST');
      expect(method.AuthorizationType).toBe('CUSTOM');
      expect(method.AuthorizerId).toEqual({ Ref: Object.keys(template.findResources('AWS::ApiGateway::Authorizer'))[0] });
      expect(method.Integration).toMatchObject({ Type: 'AWS_PROXY', TimeoutInMillis: 29_000 });

      // The path, walked up from the method's resource to the API root.
      const parts: string[] = [];
      let resource: unknown = method.ResourceId;
      while (typeof resource === 'object' && resource !== null && 'Ref' in resource) {
        const props = all[(resource as { Ref: string }).Ref]!.Properties!;
        parts.unshift(props.PathPart);
        resource = props.ParentId;
      }
      expect(parts).toEqual(['api', 'v1', 'prompt']);
      expect(resource).toEqual({ 'Fn::GetAtt': [expect.any(String), 'RootResourceId'] });
      // api, v1, prompt, models, openapi.json; page.js, page-markdown.js, page.css.
      template.resourceCountIs('AWS::ApiGateway::Resource', 8);
    });

    it('has GET and HEAD /api/v1/models and /api/v1/openapi.json on the catalog function, behind the same authorizer, other methods 405 with Allow: GET, HEAD', () => {
      const methods = Object.values(template.findResources('AWS::ApiGateway::Method') as Resources).map((m) => m.Properties!);
      const post = methods.find((m) => m.HttpMethod === 'POST')!;
      const pathOf = (resourceId: { Ref: string }) => all[resourceId.Ref]!.Properties!.PathPart as string;
      const gets = methods.filter((m) => (m.HttpMethod === 'GET' || m.HttpMethod === 'HEAD') && m.AuthorizationType !== 'NONE');
      expect(gets.map((m) => `${m.HttpMethod} ${pathOf(m.ResourceId)}`).sort()).toEqual(['GET models', 'GET openapi.json', 'HEAD models', 'HEAD openapi.json']);
      const catalogArn = logicalId(stack, stack.catalogFunction);
      for (const get of gets) {
        expect(get.AuthorizationType).toBe('CUSTOM');
        expect(get.AuthorizerId).toEqual(post.AuthorizerId);
        expect(get.Integration.Type).toBe('AWS_PROXY');
        expect(JSON.stringify(get.Integration.Uri)).toContain(catalogArn);
        // Siblings of the prompt resource, under /api/v1.
        expect(all[get.ResourceId.Ref]!.Properties!.ParentId).toEqual(all[post.ResourceId.Ref]!.Properties!.ParentId);
        const any = methods.find((m) => m.HttpMethod === 'ANY' && m.ResourceId.Ref === get.ResourceId.Ref)!;
        expect(any.Integration.IntegrationResponses[0].ResponseParameters['method.response.header.Allow']).toBe("'GET, HEAD'");
      }
      // The catalog function reads no table and no secret: X-Ray and its logs only.
      const catalogRole = logicalId(stack, stack.catalogFunction.role!);
      const granted = policyStatements(template)
        .filter(({ roles }) => roles.includes(catalogRole))
        .flatMap(({ statement }) => actions(statement));
      expect(granted.filter((action) => !action.startsWith('xray:') && !action.startsWith('logs:'))).toEqual([]);
    });

    it('serves the comparison page (GET and HEAD /, /page.js, /page-markdown.js, /page.css) from the catalog function without the authorizer, other methods 405 with Allow: GET, HEAD', () => {
      const methods = Object.values(template.findResources('AWS::ApiGateway::Method') as Resources).map((m) => m.Properties!);
      const pages = methods.filter((m) => (m.HttpMethod === 'GET' || m.HttpMethod === 'HEAD') && m.AuthorizationType === 'NONE');
      const pathOf = (resourceId: unknown) =>
        typeof resourceId === 'object' && resourceId !== null && 'Ref' in resourceId ? (all[(resourceId as { Ref: string }).Ref]!.Properties!.PathPart as string) : '/';
      expect(pages.map((m) => `${m.HttpMethod} ${pathOf(m.ResourceId)}`).sort()).toEqual([
        'GET /',
        'GET page-markdown.js',
        'GET page.css',
        'GET page.js',
        'HEAD /',
        'HEAD page-markdown.js',
        'HEAD page.css',
        'HEAD page.js',
      ]);
      const catalogArn = logicalId(stack, stack.catalogFunction);
      for (const get of pages) {
        expect(get.AuthorizerId).toBeUndefined();
        expect(get.Integration.Type).toBe('AWS_PROXY');
        expect(JSON.stringify(get.Integration.Uri)).toContain(catalogArn);
        // The page's files are children of the root; the page itself is the root's GET.
        if (pathOf(get.ResourceId) === '/') expect(get.ResourceId).toEqual({ 'Fn::GetAtt': [expect.any(String), 'RootResourceId'] });
        else expect(all[get.ResourceId.Ref]!.Properties!.ParentId).toEqual({ 'Fn::GetAtt': [expect.any(String), 'RootResourceId'] });
        const any = methods.find((m) => m.HttpMethod === 'ANY' && JSON.stringify(m.ResourceId) === JSON.stringify(get.ResourceId))!;
        expect(any.Integration.IntegrationResponses[0].ResponseParameters['method.response.header.Allow']).toBe("'GET, HEAD'");
      }
    });

    it('answers every other method on the prompt path 405 with Allow: POST and the error body, from a mock without the authorizer', () => {
      // Prepare
      const methods = Object.values(template.findResources('AWS::ApiGateway::Method') as Resources).map((m) => m.Properties!);
      const post = methods.find((m) => m.HttpMethod === 'POST')!;
      const any = methods.find((m) => m.HttpMethod === 'ANY' && m.ResourceId.Ref === post.ResourceId.Ref)!;

      // Assess: the same resource as POST, no authorizer, a mock (no Lambda runs).
      expect(any.ResourceId).toEqual(post.ResourceId);
      expect(any.AuthorizationType).toBe('NONE');
      expect(any.AuthorizerId).toBeUndefined();
      expect(any.Integration.Type).toBe('MOCK');
      expect(any.Integration.PassthroughBehavior).toBe('NEVER');
      expect(any.Integration.RequestTemplates['application/json']).toBe('{"statusCode": 405}');
      const [response, ...others] = any.Integration.IntegrationResponses as Record<string, any>[];
      expect(others).toEqual([]);
      expect(response!.StatusCode).toBe('405');
      expect(response!.SelectionPattern).toBeUndefined();
      expect(response!.ResponseParameters).toEqual({
        'method.response.header.Allow': "'POST'",
        'method.response.header.Content-Type': "'application/json; charset=utf-8'",
        'method.response.header.Cache-Control': "'no-store'",
      });
      expect(any.MethodResponses).toEqual([
        {
          StatusCode: '405',
          ResponseParameters: {
            'method.response.header.Allow': true,
            'method.response.header.Content-Type': true,
            'method.response.header.Cache-Control': true,
          },
        },
      ]);

      // The body, rendered as API Gateway would for GET, is the handler's 405 body.
      const template405 = response!.ResponseTemplates['application/json'] as string;
      const rendered = JSON.parse(template405.replace('$context.httpMethod', 'GET'));
      expect(rendered).toEqual({ error: { code: 'method_not_allowed', message: new MethodNotAllowedError('GET').message } });
    });

    it('runs a TOKEN authorizer on the Authorization header, cached for 30 s, on the one spelling of a key the gateway takes', () => {
      template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
      template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
        Type: 'TOKEN',
        IdentitySource: 'method.request.header.Authorization',
        IdentityValidationExpression: AUTHORIZATION_PATTERN,
        AuthorizerResultTtlInSeconds: 30,
      });
      // API Gateway reads the expression as a Java regular expression: nothing in it that only JavaScript reads so.
      expect(AUTHORIZATION_PATTERN).toMatch(/^\^[^\\()?]*\$$/);
      const authorizer = Object.values(template.findResources('AWS::ApiGateway::Authorizer') as Resources)[0]!;
      expect(JSON.stringify(authorizer.Properties!.AuthorizerUri)).toContain(logicalId(stack, stack.authorizerFunction));
    });

    it("streams the api function's answer (Lambda InvokeWithResponseStream), so settling follows the answer", () => {
      const post = Object.values(template.findResources('AWS::ApiGateway::Method') as Resources)
        .map((m) => m.Properties!)
        .find((p) => p.HttpMethod === 'POST');
      expect(post!.Integration).toMatchObject({ Type: 'AWS_PROXY', ResponseTransferMode: 'STREAM' });
      const uri = JSON.stringify(post!.Integration.Uri);
      expect(uri).toContain('2021-11-15/functions/');
      expect(uri).toContain('/response-streaming-invocations');
      expect(uri).toContain(logicalId(stack, stack.apiFunction));
    });

    it('builds a buffered integration with -c gateway:responseStreaming=false, and tells the api function to settle before it answers', () => {
      // Prepare
      const buffered = synthesize({ responseStreaming: false });
      const postOf = (t: Template) =>
        Object.values(t.findResources('AWS::ApiGateway::Method') as Resources)
          .map((m) => m.Properties!)
          .find((p) => p.HttpMethod === 'POST')!;
      const streamingEnv = (s: GatewayStack, t: Template) =>
        (t.toJSON().Resources[logicalId(s, s.apiFunction)].Properties.Environment.Variables as Record<string, unknown>).RESPONSE_STREAMING;

      // Assess: the buffered stack, an ordinary proxy integration the emulators can run.
      const integration = postOf(buffered.template).Integration;
      expect(integration.Type).toBe('AWS_PROXY');
      expect(integration).not.toHaveProperty('ResponseTransferMode');
      const uri = JSON.stringify(integration.Uri);
      expect(uri).toContain('2015-03-31/functions/');
      expect(uri).not.toContain('response-streaming');
      expect(streamingEnv(buffered.stack, buffered.template)).toBe('false');
      // No WAF web ACL for the emulators, which may not run it.
      buffered.template.resourceCountIs('AWS::WAFv2::WebACL', 0);
      // The default stack streams, and says so to its function.
      expect(streamingEnv(stack, template)).toBe('true');
      // Only the buffered stack declares the store endpoint (empty: AWS), for sam-local's --env-vars to override.
      const storeEndpoint = (s: GatewayStack, t: Template, fn: IConstruct) => t.toJSON().Resources[logicalId(s, fn)].Properties.Environment.Variables.DYNAMODB_ENDPOINT;
      for (const fn of ['apiFunction', 'authorizerFunction'] as const) {
        expect(storeEndpoint(buffered.stack, buffered.template, buffered.stack[fn])).toBe('');
        expect(storeEndpoint(stack, template, stack[fn])).toBeUndefined();
      }
      // And, on the api function, every provider's key and base URL, empty; never in the AWS stack.
      const variables = (s: GatewayStack, t: Template) => t.toJSON().Resources[logicalId(s, s.apiFunction)].Properties.Environment.Variables as Record<string, unknown>;
      expect(variables(buffered.stack, buffered.template)).toMatchObject({ OPENAI_API_KEY: '', OPENAI_BASE_URL: '', BEDROCK_BASE_URL: '', GROQ_API_KEY: '' });
      expect(Object.keys(variables(stack, template)).filter((name) => /_API_KEY$|_BASE_URL$/.test(name))).toEqual([]);
    });

    it.each<[string, string | undefined, string]>([
      ['UNAUTHORIZED', '401', 'unauthorized'],
      ['ACCESS_DENIED', '403', 'forbidden'],
      ['THROTTLED', '429', 'rate_limited'],
      ['MISSING_AUTHENTICATION_TOKEN', '404', 'not_found'],
      ['BAD_REQUEST_BODY', '400', 'invalid_request'],
      ['REQUEST_TOO_LARGE', '413', 'payload_too_large'],
      ['UNSUPPORTED_MEDIA_TYPE', '415', 'unsupported_media_type'],
      ['INTEGRATION_TIMEOUT', '504', 'gateway_timeout'],
      ['AUTHORIZER_FAILURE', '503', 'service_unavailable'],
      ['AUTHORIZER_CONFIGURATION_ERROR', '503', 'service_unavailable'],
      ['DEFAULT_4XX', undefined, 'bad_request'],
      ['DEFAULT_5XX', undefined, 'internal_error'],
    ])("answers %s with %s and the handler's error body (code %s)", (type, status, code) => {
      const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse') as Resources)
        .map((r) => r.Properties!)
        .filter((p) => p.ResponseType === type);
      expect(responses).toHaveLength(1);
      const response = responses[0]!;
      expect(response.StatusCode).toBe(status);
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'",
        'gatewayresponse.header.Cache-Control': "'no-store'",
        // RFC 9110 11.6.1: a 401 names the scheme it takes.
        ...(status === '401' ? { 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" } : {}),
      });
      // API Gateway renders $context.error.messageString as a quoted JSON string.
      const body = JSON.parse((response.ResponseTemplates['application/json'] as string).replace('$context.error.messageString', '"rendered"'));
      expect(Object.keys(body)).toEqual(['error']);
      expect(Object.keys(body.error)).toEqual(['code', 'message']);
      expect(body.error.code).toBe(code);
      expect(typeof body.error.message).toBe('string');
      expect(body.error.message.length).toBeGreaterThan(0);
    });

    it("names in its 404 every route the local host's names (it had named the prompt's alone)", () => {
      const [response] = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse') as Resources)
        .map((r) => r.Properties!)
        .filter((p) => p.ResponseType === 'MISSING_AUTHENTICATION_TOKEN');
      const body = JSON.parse(response!.ResponseTemplates['application/json'] as string);
      expect(body.error.message).toBe(`No route for this method and path; the API is ${API_ROUTES}`);
      expect(new NotFoundError('/x').message).toBe(`No route for /x; the API is ${API_ROUTES}`);
      expect(API_ROUTES).toContain('GET /api/v1/models');
    });

    it.each(['THROTTLED', 'AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR'])('tells a caller answered %s when to retry (Retry-After: 1)', (type) => {
      const [response] = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse') as Resources)
        .map((r) => r.Properties!)
        .filter((p) => p.ResponseType === type);
      expect(response!.ResponseParameters).toMatchObject({ 'gatewayresponse.header.Retry-After': "'1'" });
    });

    it('throttles the stage, traces it and keeps execution logs free of data', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'prod',
        TracingEnabled: true,
        MethodSettings: [
          Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100, LoggingLevel: 'ERROR', DataTraceEnabled: false }),
        ],
      });
    });

    it('writes JSON access logs with chosen fields and no payload, header, token or key', () => {
      const stage = Object.values(template.findResources('AWS::ApiGateway::Stage') as Resources)[0]!.Properties!;
      const format = stage.AccessLogSetting.Format as string;
      const fields = JSON.parse(format) as Record<string, string>;
      expect(fields).toMatchObject({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        method: '$context.httpMethod',
        path: '$context.path',
        status: '$context.status',
        latency: '$context.responseLatency',
        integrationLatency: '$context.integrationLatency',
        responseLength: '$context.responseLength',
        accountId: '$context.authorizer.accountId',
        errorMessage: '$context.error.message',
        tlsVersion: '$context.tlsVersion',
      });
      for (const forbidden of ['principalId', '$input', '$request', 'body', 'header', 'Authorization', 'authorizationToken', 'apiKey', 'identity.user']) {
        expect(format.toLowerCase()).not.toContain(forbidden.toLowerCase());
      }
      const destination = JSON.stringify(stage.AccessLogSetting.DestinationArn);
      expect(destination).toContain(logicalId(stack, stack.api.accessLogs));
      expect(all[logicalId(stack, stack.api.accessLogs)]!.Properties!.RetentionInDays).toBe(30);
    });

    it("creates the stage's execution log group, where API Gateway writes them, with the stack's retention and the other log groups' removal policy, before the stage", () => {
      // API Gateway's name for it: API-Gateway-Execution-Logs_<rest API ID>/<stage>; else it creates the group itself, kept forever.
      const restApiId = logicalId(stack, stack.api.restApi);
      const groups = template.findResources('AWS::Logs::LogGroup', {
        Properties: { LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: restApiId }, '/prod']] } },
      }) as Resources;
      expect(Object.keys(groups)).toHaveLength(1);
      const [id, group] = Object.entries(groups)[0]!;
      expect(group.Properties!.RetentionInDays).toBe(30);
      // As the function and access log groups are kept.
      const accessLogs = all[logicalId(stack, stack.api.accessLogs)]!;
      const functionLogs = all[all[logicalId(stack, stack.apiFunction)]!.Properties!.LoggingConfig.LogGroup.Ref]!;
      for (const other of [accessLogs, functionLogs]) {
        expect([group.DeletionPolicy, group.UpdateReplacePolicy]).toEqual([other.DeletionPolicy, other.UpdateReplacePolicy]);
      }
      expect(group.DeletionPolicy).toBe('Retain');
      template.hasResource('AWS::ApiGateway::Stage', { DependsOn: Match.arrayWith([id]) });
    });
  });

  describe('Construct: GatewayEdge', () => {
    it("holds each API key and each IP address to a share of the stage's throttle, at the edge, with the gateway's 429 body", () => {
      template.resourceCountIs('AWS::WAFv2::WebACL', 1);
      const acl = Object.values(template.findResources('AWS::WAFv2::WebACL') as Resources)[0]!.Properties!;
      expect(acl).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
      // The stage allows 50 requests a second: 3,000 a minute.
      const rules = acl.Rules as {
        Name: string;
        Statement: { RateBasedStatement: Record<string, unknown> };
        Action: unknown;
        VisibilityConfig: { SampledRequestsEnabled: boolean };
      }[];
      expect(rules.map((rule) => [rule.Name, rule.Statement.RateBasedStatement])).toEqual([
        [
          'PerApiKey',
          {
            Limit: 1_200,
            EvaluationWindowSec: 60,
            AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }] } }],
          },
        ],
        ['PerIpAddress', { Limit: 1_500, EvaluationWindowSec: 60, AggregateKeyType: 'IP' }],
      ]);
      for (const rule of rules) {
        expect(rule.Action).toEqual({
          Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'rateLimited', ResponseHeaders: [{ Name: 'Retry-After', Value: '60' }] } },
        });
      }
      const body = (acl.CustomResponseBodies as Record<string, { ContentType: string; Content: string }>).rateLimited!;
      expect(body.ContentType).toBe('APPLICATION_JSON');
      expect(JSON.parse(body.Content)).toEqual({ error: { code: 'rate_limited', message: expect.any(String) } });
      // Sampled requests would keep the Authorization header (a key) in the console.
      for (const config of [acl.VisibilityConfig, ...rules.map((rule) => rule.VisibilityConfig)]) expect(config).toMatchObject({ SampledRequestsEnabled: false });
    });

    it('guards the stage', () => {
      const association = Object.values(template.findResources('AWS::WAFv2::WebACLAssociation') as Resources)[0]!.Properties!;
      expect(association.WebACLArn).toEqual({ 'Fn::GetAtt': [stack.resolve(stack.edge!.webAcl.logicalId), 'Arn'] });
      expect(association.ResourceArn).toEqual(stack.resolve(stack.api.restApi.deploymentStage.stageArn));
      expect(JSON.stringify(association.ResourceArn)).toContain(logicalId(stack, stack.api.restApi.deploymentStage));
    });
  });

  describe('Construct: GatewayAlarms', () => {
    const topic = () => ({ Ref: stack.resolve(stack.alarms.topic.topicArn).Ref });
    const alarms = () => Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources).map((alarm) => alarm.Properties!);

    it("sends every alarm to the topic, on the first occurrence in its period, and no data is no alarm (but the reconciler's)", () => {
      expect(alarms().length).toBe(13);
      const reconciler = (alarm: Record<string, unknown>) => JSON.stringify(alarm.Metrics ?? null).includes('"Invocations"');
      for (const alarm of alarms().filter((a) => !reconciler(a))) {
        expect(alarm).toMatchObject({
          AlarmActions: [topic()],
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          EvaluationPeriods: 1,
          TreatMissingData: 'notBreaching',
        });
      }
    });

    it("watches every function's failed invocations, the reconciler's failed runs among them, but the authorizer's, which refuse keys", () => {
      const functions = Object.entries(all).filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties!.Handler === 'index.handler');
      expect(functions.length).toBe(6);
      const authorizer = logicalId(stack, stack.authorizerFunction);
      const errors = (id: string) =>
        expect.objectContaining({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Statistic: 'Sum', Period: 300, Dimensions: [{ Name: 'FunctionName', Value: { Ref: id } }] });
      for (const [id] of functions) {
        if (id === authorizer) expect(alarms()).not.toContainEqual(errors(id));
        else expect(alarms()).toContainEqual(errors(id));
      }
    });

    it("watches the throttled invocations of the api function and the workflow's tasks, which their Errors miss, in one alarm", () => {
      const alarm = alarms().find((a) => JSON.stringify(a.Metrics ?? null).includes('"Throttles"'))!;
      expect(alarm).toBeDefined();
      const metrics = (alarm.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: unknown } } }[]).flatMap((m) =>
        m.MetricStat ? [m.MetricStat.Metric] : [],
      );
      expect(metrics.map((m) => m.MetricName)).toEqual(['Throttles', 'Throttles', 'Throttles']);
      expect(metrics.map((m) => m.Dimensions)).toEqual(
        [stack.apiFunction, stack.generateFunction, stack.judgeFunction].map((fn) => [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, fn) } }]),
      );
      expect((alarm.Metrics as { Expression?: string }[]).find((m) => m.Expression)!.Expression).toBe('FILL(t0, 0) + FILL(t1, 0) + FILL(t2, 0)');
    });

    it("counts the error lines of every function's log group, and alarms on any", () => {
      const filters = Object.values(template.findResources('AWS::Logs::MetricFilter') as Resources).map((filter) => filter.Properties!);
      const functions = [stack.authorizerFunction, stack.apiFunction, stack.catalogFunction, stack.reconcilerFunction, stack.generateFunction, stack.judgeFunction];
      const errorFilters = filters.filter((filter) => filter.FilterPattern === '{ $.level = "ERROR" }');
      expect(errorFilters.map((filter) => filter.LogGroupName)).toEqual(functions.map((fn) => stack.resolve(fn.logGroup.logGroupName)));
      for (const filter of errorFilters) expect(filter.MetricTransformations).toEqual([{ MetricName: 'LoggedErrors', MetricNamespace: 'ModelCompareGateway', MetricValue: '1' }]);
      expect(alarms()).toContainEqual(expect.objectContaining({ Namespace: 'ModelCompareGateway', MetricName: 'LoggedErrors', Statistic: 'Sum' }));
    });

    it.each([
      ["the cost left uncollected, from the api function's settle line", () => stack.apiFunction, UNCOLLECTED_LOG_MESSAGE, 'UncollectedMicroCredits', '$.uncollectedMicro'],
      [
        'what the reconciler released of requests that ended without a settle, from its line',
        () => stack.reconcilerFunction,
        RELEASED_LOG_MESSAGE,
        'ReleasedMicroCredits',
        '$.amountMicro',
      ],
    ])('sums %s, over an hour', (_what, fn, message, metric, value) => {
      template.hasResourceProperties('AWS::Logs::MetricFilter', {
        LogGroupName: stack.resolve(fn().logGroup.logGroupName),
        FilterPattern: `{ $.message = "${message}" }`,
        MetricTransformations: [{ MetricName: metric, MetricNamespace: 'ModelCompareGateway', MetricValue: value }],
      });
      expect(alarms()).toContainEqual(expect.objectContaining({ MetricName: metric, Statistic: 'Sum', Period: 3600 }));
    });

    it('alarms when the reconciler has not run for three of its schedule periods: a period without a run is a 0 (FILLed), below 1 (a disabled schedule fails nothing its Errors count)', () => {
      const reconciler = logicalId(stack, stack.reconcilerFunction);
      const watching = alarms().filter((a) => JSON.stringify(a.Metrics ?? null).includes('"Invocations"'));
      expect(watching).toEqual([
        expect.objectContaining({ AlarmActions: [topic()], Threshold: 1, ComparisonOperator: 'LessThanThreshold', EvaluationPeriods: 1, TreatMissingData: 'breaching' }),
      ]);
      // On the raw metric, CloudWatch would look back past an empty period to the last run it has.
      const metrics = watching[0]!.Metrics as {
        Expression?: string;
        MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown }; Period: number; Stat: string };
      }[];
      expect(metrics.find((m) => m.Expression)!.Expression).toBe('FILL(runs, 0)');
      expect(metrics.find((m) => m.MetricStat)!.MetricStat).toEqual({
        Metric: { Namespace: 'AWS/Lambda', MetricName: 'Invocations', Dimensions: [{ Name: 'FunctionName', Value: { Ref: reconciler } }] },
        Period: RECONCILE_SCHEDULE.toSeconds() * 3,
        Stat: 'Sum',
      });
    });

    it("watches the API's 5xx answers, under the API's own name (the stack's), and the workflow's failed, timed-out and aborted executions", () => {
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: stack.stackName });
      expect(alarms()).toContainEqual(expect.objectContaining({ Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Dimensions: [{ Name: 'ApiName', Value: stack.stackName }] }));
      const workflow = alarms().find((alarm) => JSON.stringify(alarm.Metrics ?? null).includes('ExecutionsFailed'))!;
      // Each FILLed: a sum with a series that has no datapoint in the period (no execution ever timed out) has none.
      expect((workflow.Metrics as { Expression?: string }[]).find((m) => m.Expression)!.Expression).toBe('FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)');
      const machine = logicalId(stack, stack.workflow.stateMachine);
      const metrics = (workflow.Metrics as { MetricStat?: { Metric: { MetricName: string; Dimensions: unknown } } }[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
      expect(metrics.map((m) => m.MetricName).sort()).toEqual(['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
      for (const metric of metrics) expect(metric.Dimensions).toEqual([{ Name: 'StateMachineArn', Value: { Ref: machine } }]);
    });

    it("alarms when half or more of 10 or more vendor calls in a period failed on the vendors' side, from the api function's per-request metrics", () => {
      const alarm = alarms().find((a) => JSON.stringify(a.Metrics ?? null).includes('VendorFailures'))!;
      const metrics = alarm.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown }; Stat: string } }[];
      expect(metrics.find((m) => m.Expression)!.Expression).toBe('IF(FILL(calls, 0) >= 10 AND FILL(failures, 0) >= 0.5 * FILL(calls, 0), 1, 0)');
      const stats = metrics.flatMap((m) => (m.MetricStat ? [[m.Id, m.MetricStat.Metric.MetricName, m.MetricStat.Stat]] : []));
      expect(stats.sort()).toEqual([
        ['calls', METRIC.vendorCalls, 'Sum'],
        ['failures', METRIC.vendorFailures, 'Sum'],
      ]);
      for (const m of metrics)
        if (m.MetricStat) expect(m.MetricStat.Metric).toMatchObject({ Namespace: 'ModelCompareGateway', Dimensions: [{ Name: 'service', Value: 'model-compare-gateway' }] });
    });

    it("lets this account's CloudWatch alarms publish to the topic, whose policy (it refuses plain HTTP) replaces SNS's default one", () => {
      const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy') as Resources).map((policy) => policy.Properties!);
      expect(policies).toHaveLength(1);
      const statements = (policies[0]!.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
      const allowed = statements.filter((statement) => statement.Effect === 'Allow');
      expect(allowed).toEqual([
        expect.objectContaining({
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: 'sns:Publish',
          Resource: topic(),
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            ArnLike: {
              'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:*']] },
            },
          },
        }),
      ]);
      expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
    });

    it('subscribes no one unless an address is given', () => {
      template.resourceCountIs('AWS::SNS::Subscription', 0);
      synthesize({ alarmEmail: 'ops@example.com' }).template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    });
  });

  describe('Outputs', () => {
    it('exports the API URL, every table name and the secret ARN', () => {
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(JSON.stringify(outputs.ApiUrl!.Value)).toContain(logicalId(stack, stack.api.restApi));
      for (const { key } of TABLES) {
        expect(outputs[tableNameOutputId(key)]!.Value).toEqual({ Ref: logicalId(stack, stack.data.tables[key]) });
      }
      expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['AccountsTableName', 'ApiKeysTableName', 'PromptLogsTableName']));
      expect(outputs.ProviderSecretArn!.Value).toEqual({ Ref: logicalId(stack, stack.providerSecret.secret) });
      expect(outputs.AlarmTopicArn!.Value).toEqual({ Ref: stack.resolve(stack.alarms.topic.topicArn).Ref });
    });

    it('has only the outputs deployment.md lists (the RestApi construct adds an endpoint output of its own, removed)', () => {
      const deployment = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
      const listed = /`cdk deploy` prints the stack outputs: ([^.]*)\./s.exec(deployment)?.[1] ?? '';
      const names = Object.keys(template.toJSON().Outputs as object);
      for (const name of names.filter((n) => !n.endsWith('TableName'))) expect(listed).toContain(`\`${name}\``);
      expect(names.filter((n) => n.endsWith('TableName'))).toHaveLength(TABLES.length);
    });
  });

  describe('cdk-nag: AwsSolutions', () => {
    it('reports no unacknowledged finding, error or warning', () => {
      // Act (what `Validations.of(app).addPlugins(new AwsSolutionsChecks(app))` runs in `cdk synth`)
      const report = new AwsSolutionsChecks().validateScope(stack);

      // Assess: cdk-nag 3 fails the synth on any finding, warnings included.
      expect(report.violations.map((v) => `${v.severity} ${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
      expect(report.success).toBe(true);
    });

    it('acknowledges only the reviewed rules, each with its reason', () => {
      const acknowledged: Record<string, string> = {};
      for (const construct of stack.node.findAll()) {
        for (const entry of construct.node.metadata) {
          if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
          for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
            acknowledged[`${construct.node.path.replace(/^GatewayTest\//, '')} ${id.replace(/^annotation::/i, '')}`] = reason;
          }
        }
      }
      for (const reason of Object.values(acknowledged)) expect(reason.length).toBeGreaterThan(40);
      expect(Object.keys(acknowledged).sort()).toEqual(
        [
          'ApiFunction AwsSolutions-L1',
          'ReconcilerFunction AwsSolutions-L1',
          'ReconcilerFunctionRole AwsSolutions-IAM5[Resource::*]',
          'Api/RestApi/Default/api/v1/prompt/ANY AwsSolutions-APIG4',
          'Api/RestApi/Default/api/v1/models/ANY AwsSolutions-APIG4',
          'Api/RestApi/Default/api/v1/openapi.json/ANY AwsSolutions-APIG4',
          // The comparison page: public GETs of static files, and the 405 mocks beside them.
          'Api/RestApi/Default/ANY AwsSolutions-APIG4',
          'Api/RestApi/Default/GET AwsSolutions-APIG4',
          'Api/RestApi/Default/HEAD AwsSolutions-APIG4',
          'Api/RestApi/Default/page.js/ANY AwsSolutions-APIG4',
          'Api/RestApi/Default/page.js/GET AwsSolutions-APIG4',
          'Api/RestApi/Default/page.js/HEAD AwsSolutions-APIG4',
          'Api/RestApi/Default/page-markdown.js/ANY AwsSolutions-APIG4',
          'Api/RestApi/Default/page-markdown.js/GET AwsSolutions-APIG4',
          'Api/RestApi/Default/page-markdown.js/HEAD AwsSolutions-APIG4',
          'Api/RestApi/Default/page.css/ANY AwsSolutions-APIG4',
          'Api/RestApi/Default/page.css/GET AwsSolutions-APIG4',
          'Api/RestApi/Default/page.css/HEAD AwsSolutions-APIG4',
          'CatalogFunction AwsSolutions-L1',
          'CatalogFunctionRole AwsSolutions-IAM5[Resource::*]',
          'ApiFunctionRole AwsSolutions-IAM5[Resource::*]',
          'AuthorizerFunction AwsSolutions-L1',
          'AuthorizerFunctionRole AwsSolutions-IAM5[Resource::*]',
          // The judge workflow's functions: the runtime and Lambda's X-Ray, as for every function.
          'GenerateFunction AwsSolutions-L1',
          'GenerateFunctionRole AwsSolutions-IAM5[Resource::*]',
          'JudgeFunction AwsSolutions-L1',
          'JudgeFunctionRole AwsSolutions-IAM5[Resource::*]',
          // Claim-check objects (named per request) of the one bucket.
          'ApiFunctionRole AwsSolutions-IAM5[Resource::<DataClaimCheckA9E48B77.Arn>/*]',
          'GenerateFunctionRole AwsSolutions-IAM5[Resource::<DataClaimCheckA9E48B77.Arn>/*]',
          'JudgeFunctionRole AwsSolutions-IAM5[Resource::<DataClaimCheckA9E48B77.Arn>/*]',
          // The state machine: log delivery and X-Ray on "*", versions and aliases of its two functions.
          'Workflow/StateMachine/Role AwsSolutions-IAM5[Resource::*]',
          'Workflow/StateMachine/Role AwsSolutions-IAM5[Resource::<GenerateFunctionD11A7A28.Arn>:*]',
          'Workflow/StateMachine/Role AwsSolutions-IAM5[Resource::<JudgeFunction23E26E53.Arn>:*]',
          'Api/RestApi AwsSolutions-APIG2',
          'Api/RestApi AwsSolutions-COG4',
          'Api/RestApi AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
          'Data/ClaimCheck AwsSolutions-S1',
          'ProviderKeys/Secret AwsSolutions-SMG4',
          // Alarm state changes only: no request data to encrypt.
          'Alarms/Topic AwsSolutions-SNS2',
        ].sort(),
      );
    });
  });
});

describe('Stack: GatewayStack settings', () => {
  it('applies the settings the app passes down', () => {
    // Prepare
    const { template } = synthesize({
      authorizerCacheTtl: Duration.seconds(0),
      integrationTimeout: Duration.seconds(60),
      throttlingRateLimit: 5,
      throttlingBurstLimit: 10,
      stageName: 'test',
      apiGatewayCloudWatchRole: false,
      rateLimitRpm: 120,
      maxRequestsInFlight: 16,
      logRetention: RetentionDays.ONE_WEEK,
    });

    // Assess
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', { AuthorizerResultTtlInSeconds: 0 });
    template.hasResourceProperties('AWS::ApiGateway::Method', { Integration: Match.objectLike({ TimeoutInMillis: 60_000 }) });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'test',
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 })],
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 60,
      Environment: { Variables: Match.objectLike({ REQUEST_DEADLINE_MS: '56000', RATE_LIMIT_RPM: '120', MAX_REQUESTS_IN_FLIGHT: '16' }) },
    });
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    // Every log group, the stage's execution logs included, keeps the retention given.
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', Match.anyValue(), '/test']] },
      RetentionInDays: 7,
    });
    for (const group of Object.values(template.findResources('AWS::Logs::LogGroup') as Resources)) expect(group.Properties!.RetentionInDays).toBe(7);
    // The workflow the api function waits for, and each of its tasks, follow the integration timeout too.
    const machine = Object.values(template.findResources('AWS::StepFunctions::StateMachine') as Resources)[0]!;
    const definition = definitionOf(machine);
    expect(definition.TimeoutSeconds).toBe(60);
    const tasks = allStates(definition.States as Record<string, any>).filter(([, state]) => state.Type === 'Task');
    expect(tasks.map(([, state]) => state.TimeoutSeconds)).toEqual([60, 60]);
  });
});

/** The shortest integration timeout the app deploys: the least `gateway:integrationTimeoutSeconds` that the context and the stack both take. */
function shortestIntegrationTimeout(): Duration {
  for (let seconds = 1; seconds <= 300; seconds++) {
    try {
      const settings = resolveSettings(settingsFromContext(new App({ context: { [CONTEXT_KEYS.integrationTimeoutSeconds]: String(seconds) } }).node));
      return settings.integrationTimeout;
    } catch {
      // Refused: try the next.
    }
  }
  throw new Error('no integration timeout accepted');
}

describe('Stack: GatewayStack at the shortest integration timeout it takes', () => {
  let template: Template;
  let stack: GatewayStack;

  beforeAll(() => {
    ({ stack, template } = synthesize({ integrationTimeout: shortestIntegrationTimeout() }));
  }, 60_000);

  it('leaves the models time: the deadline less the settle margin (1 s) and a reserve that took the store worst case is at least 2 s', () => {
    const worstCallMs = STORE_ATTEMPTS * STORE_TIMEOUTS.answerMs + 1_000;
    const props = (template.toJSON().Resources as Resources)[logicalId(stack, stack.apiFunction)]!.Properties!;
    const deadlineMs = Number(props.Environment.Variables.REQUEST_DEADLINE_MS);
    // shared/orchestrator/prompt-service.ts: the models stop 1 s before the deadline, counted from when the request was received.
    expect(deadlineMs - 1_000 - worstCallMs).toBeGreaterThanOrEqual(2_000);
    // The deadline is one the api function's own configuration takes.
    expect(loadConfig({ REQUEST_DEADLINE_MS: String(deadlineMs) }).requestDeadlineMs).toBe(deadlineMs);
  });

  it('gives every function that calls the store the time for each store call it makes before answering to fail all its attempts', () => {
    expectStoreCallersOutlastTheStore(stack, template);
  });
});
