import { readFileSync } from 'node:fs';
import { App, Duration, Validations, type CfnResource, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { toCreateTableInput } from '../../infra/local/store.js';
import { TABLE_ENV, tableNameOutputId } from '../../infra/stack/data.js';
import { GatewayStack } from '../../infra/stack/gateway-stack.js';
import { loadConfig } from '../../shared/config.js';
import { TABLES } from '../../shared/storage/tables.js';

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

    it.each(TABLES.map((definition) => [definition.key, definition] as const))(
      'builds the %s table from its shared definition, as the local bootstrap does',
      (key, definition) => {
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
        expect(props.TimeToLiveSpecification).toEqual(
          definition.ttlAttribute ? { AttributeName: definition.ttlAttribute, Enabled: true } : undefined,
        );
        // Protected: on demand, PITR, deletion protection, retained on delete and on replacement.
        expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
        expect(props.DeletionProtectionEnabled).toBe(true);
        expect(props.TableName).toBeUndefined();
        expect(table.DeletionPolicy).toBe('Retain');
        expect(table.UpdateReplacePolicy).toBe('Retain');
      },
    );

    it('keeps the tables\' logical IDs (a new ID would be a new, empty table)', () => {
      const ids = Object.fromEntries(TABLES.map((t) => [t.key, logicalId(stack, stack.data.tables[t.key])]));
      expect(ids).toEqual({
        accounts: 'Dataaccounts8C353CD3',
        apiKeys: 'DataapiKeysF790ECC1',
        ledger: 'DataledgerA066B167',
        idempotency: 'DataidempotencyF4D089FD',
        rateLimits: 'DatarateLimits8CC51797',
        promptLogs: 'DatapromptLogs017E57BE',
      });
    });

    it('names every table\'s environment variable the way shared/config.ts reads it', () => {
      for (const { key } of TABLES) {
        expect(loadConfig({ [TABLE_ENV[key]]: `deployed-${key}` }).tables[key]).toBe(`deployed-${key}`);
      }
    });

    it('encrypts the claim-check bucket, blocks public access and expires objects after a day', () => {
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
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    });
  });

  describe('Construct: ProviderSecret', () => {
    it('creates the secret as an empty JSON object, with no generated or placeholder value', () => {
      template.resourceCountIs('AWS::SecretsManager::Secret', 1);
      template.hasResourceProperties('AWS::SecretsManager::Secret', { SecretString: '{}', GenerateSecretString: Match.absent() });
    });

    it('lets only the api function read it, and gives it its ARN', () => {
      const secretId = logicalId(stack, stack.providerSecret.secret);
      const readers = policyStatements(template).filter(({ statement }) => actions(statement).some((a) => a.startsWith('secretsmanager:')));
      expect(readers).toHaveLength(1);
      expect(readers[0]!.roles).toEqual([logicalId(stack, stack.apiFunction.role!)]);
      expect(readers[0]!.statement.Resource).toEqual({ Ref: secretId });
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: 'POST /api/v1/prompt',
        Environment: { Variables: Match.objectLike({ PROVIDER_SECRET_ARN: { Ref: secretId } }) },
      });
    });
  });

  describe('Construct: GatewayFunction', () => {
    it('runs every function on nodejs22.x, arm64, with active tracing, its own log group and the Powertools settings', () => {
      const functions = Object.values(template.findResources('AWS::Lambda::Function') as Resources);
      expect(functions).toHaveLength(2);
      for (const fn of functions) {
        const props = fn.Properties!;
        expect(props.Runtime).toBe('nodejs22.x');
        expect(props.Architectures).toEqual(['arm64']);
        expect(props.TracingConfig).toEqual({ Mode: 'Active' });
        expect(props.Handler).toBe('index.handler');
        expect(props.Environment.Variables).toMatchObject({
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'model-compare-gateway',
          POWERTOOLS_METRICS_NAMESPACE: 'ModelCompareGateway',
          POWERTOOLS_LOGGER_LOG_EVENT: 'false',
          POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
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
      const tableEnv = Object.fromEntries(
        TABLES.filter((t) => t.key !== 'apiKeys').map((t) => [TABLE_ENV[t.key], { Ref: logicalId(stack, stack.data.tables[t.key]) }]),
      );
      expect(props.Environment.Variables).toMatchObject(tableEnv);
      expect(props.Environment.Variables[TABLE_ENV.apiKeys]).toBeUndefined();
    });

    it('gives the authorizer the API keys table only', () => {
      const variables = all[logicalId(stack, stack.authorizerFunction)]!.Properties!.Environment.Variables;
      expect(variables[TABLE_ENV.apiKeys]).toEqual({ Ref: logicalId(stack, stack.data.tables.apiKeys) });
      expect(Object.keys(variables).filter((name) => name.endsWith('_TABLE'))).toEqual([TABLE_ENV.apiKeys]);
      expect(variables.PROVIDER_SECRET_ARN).toBeUndefined();
    });
  });

  describe('IAM', () => {
    it('has no "*" action anywhere, and "*" resources only for X-Ray', () => {
      for (const { statement } of policyStatements(template)) {
        expect(actions(statement)).not.toContain('*');
        expect(actions(statement).filter((a) => a.endsWith(':*'))).toEqual([]);
        // Lambda's X-Ray integration supports no resource-level permissions.
        if (resources(statement).includes('*')) expect(actions(statement).every((a) => a.startsWith('xray:'))).toBe(true);
      }
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
          grants[table!] = [...new Set([...(grants[table!] ?? []), ...actions(statement)])].sort();
        }
      }
      return grants;
    }

    it('lets the authorizer read the API keys table and nothing else', () => {
      const grants = tableGrants(logicalId(stack, stack.authorizerFunction.role!));
      expect(Object.keys(grants)).toEqual([logicalId(stack, stack.data.tables.apiKeys)]);
      expect(grants[logicalId(stack, stack.data.tables.apiKeys)]!.every((a) => !/Put|Update|Delete|Write/.test(a))).toBe(true);
    });

    it('lets the api function use every table but the API keys, and only append to the ledger', () => {
      const grants = tableGrants(logicalId(stack, stack.apiFunction.role!));
      const id = (key: keyof typeof stack.data.tables) => logicalId(stack, stack.data.tables[key]);
      expect(Object.keys(grants).sort()).toEqual(TABLES.filter((t) => t.key !== 'apiKeys').map((t) => id(t.key)).sort());
      expect(grants[id('accounts')]).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem']));
      expect(grants[id('promptLogs')]).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query']));
      expect(grants[id('ledger')]).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query']));
      expect(grants[id('ledger')]!.filter((a) => /UpdateItem|DeleteItem|BatchWriteItem/.test(a))).toEqual([]);
    });
  });

  describe('Construct: GatewayApi', () => {
    it('is a regional REST API', () => {
      template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
    });

    it('has one method, POST /api/v1/prompt, behind the custom authorizer and the integration timeout', () => {
      const methods = Object.values(template.findResources('AWS::ApiGateway::Method') as Resources);
      expect(methods).toHaveLength(1);
      const method = methods[0]!.Properties!;
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
      template.resourceCountIs('AWS::ApiGateway::Resource', 3);
    });

    it('runs a TOKEN authorizer on the Authorization header, cached for 30 s', () => {
      template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
      template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
        Type: 'TOKEN',
        IdentitySource: 'method.request.header.Authorization',
        AuthorizerResultTtlInSeconds: 30,
      });
      const authorizer = Object.values(template.findResources('AWS::ApiGateway::Authorizer') as Resources)[0]!;
      expect(JSON.stringify(authorizer.Properties!.AuthorizerUri)).toContain(logicalId(stack, stack.authorizerFunction));
    });

    it.each<[string, string | undefined, string]>([
      ['UNAUTHORIZED', '401', 'unauthorized'],
      ['ACCESS_DENIED', '403', 'forbidden'],
      ['THROTTLED', '429', 'rate_limited'],
      ['MISSING_AUTHENTICATION_TOKEN', '404', 'not_found'],
      ['BAD_REQUEST_BODY', '400', 'invalid_request'],
      ['REQUEST_TOO_LARGE', '413', 'payload_too_large'],
      ['INTEGRATION_TIMEOUT', '504', 'gateway_timeout'],
      ['DEFAULT_4XX', undefined, 'bad_request'],
      ['DEFAULT_5XX', undefined, 'internal_error'],
    ])('answers %s with %s and the handler\'s error body (code %s)', (type, status, code) => {
      const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse') as Resources)
        .map((r) => r.Properties!)
        .filter((p) => p.ResponseType === type);
      expect(responses).toHaveLength(1);
      const response = responses[0]!;
      expect(response.StatusCode).toBe(status);
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'",
        'gatewayresponse.header.Cache-Control': "'no-store'",
      });
      // API Gateway renders $context.error.messageString as a quoted JSON string.
      const body = JSON.parse((response.ResponseTemplates['application/json'] as string).replace('$context.error.messageString', '"rendered"'));
      expect(Object.keys(body)).toEqual(['error']);
      expect(Object.keys(body.error)).toEqual(['code', 'message']);
      expect(body.error.code).toBe(code);
      expect(typeof body.error.message).toBe('string');
      expect(body.error.message.length).toBeGreaterThan(0);
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
      });
      for (const forbidden of ['principalId', '$input', '$request', 'body', 'header', 'Authorization', 'authorizationToken', 'apiKey', 'identity.user']) {
        expect(format.toLowerCase()).not.toContain(forbidden.toLowerCase());
      }
      const destination = JSON.stringify(stage.AccessLogSetting.DestinationArn);
      expect(destination).toContain(logicalId(stack, stack.api.accessLogs));
      expect(all[logicalId(stack, stack.api.accessLogs)]!.Properties!.RetentionInDays).toBe(30);
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
          'ApiFunctionRole AwsSolutions-IAM5[Resource::*]',
          'ApiFunctionRole AwsSolutions-IAM5[Resource::<DatapromptLogs017E57BE.Arn>/index/*]',
          'AuthorizerFunction AwsSolutions-L1',
          'AuthorizerFunctionRole AwsSolutions-IAM5[Resource::*]',
          'AuthorizerFunctionRole AwsSolutions-IAM5[Resource::<DataapiKeysF790ECC1.Arn>/index/*]',
          'Api/RestApi AwsSolutions-APIG2',
          'Api/RestApi AwsSolutions-COG4',
          'Api/RestApi AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
          'Api/RestApi/DeploymentStage.prod AwsSolutions-APIG3',
          'Data/ClaimCheck AwsSolutions-S1',
          'ProviderKeys/Secret AwsSolutions-SMG4',
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
      Environment: { Variables: Match.objectLike({ REQUEST_DEADLINE_MS: '56000', RATE_LIMIT_RPM: '120' }) },
    });
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });
});
