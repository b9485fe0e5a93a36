import { CfnOutput, Duration, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { PROVIDERS } from '../../shared/catalog/types.js';
import { providerBaseUrlName, providerKeyName, RESPONSE_STREAMING_ENV, WORKFLOW_ENV } from '../../shared/config.js';
import { FUNCTION_MARGIN_MS, MIN_REQUEST_DEADLINE_MS, STORE_WORST_CALL_MS } from '../../shared/deadlines.js';
import { TABLES } from '../../shared/storage/tables.js';
import { GatewayAlarms } from './alarms.js';
import { SettingsError } from './settings-error.js';
import { GatewayApi } from './api.js';
import { GatewayEdge } from './edge.js';
import { NovaInvoke } from './bedrock.js';
import { GatewayData, TABLE_ENV, tableNameOutputId } from './data.js';
import { GatewayFunction, type GatewayFunctionDefaults } from './gateway-function.js';
import { ProviderSecret } from './secrets.js';
import { grantClaimCheck, JudgeWorkflow } from './workflow.js';

/** What the app decides at synth time (infra/stack/context.ts reads it from CDK context). */
export interface GatewaySettings {
  /** How long API Gateway caches an authorizer decision per Authorization header (0 disables, at most 1 hour). */
  authorizerCacheTtl: Duration;
  /**
   * How long API Gateway waits for the `api` function; also that function's timeout. The
   * request deadline (REQUEST_DEADLINE_MS) is 4 s shorter, to leave time for settling
   * credits and answering; at least MIN_INTEGRATION_TIMEOUT (14 s), so that the deadline
   * leaves the models time. The integration streams its answer, so it may be set above
   * 29 s without raising the regional REST API integration timeout quota, up to 300 s:
   * the answer is written at once when it is ready, and API Gateway cuts a stream that
   * stays idle for 5 minutes (Regional endpoints).
   */
  integrationTimeout: Duration;
  /**
   * Whether API Gateway streams the `api` function's answer (Lambda response streaming,
   * the STREAM transfer mode) or waits for it whole (buffered). Buffered is for emulators
   * that cannot stream (LocalStack, sam-local; docs/deployment.md): the function then
   * settles and logs before it answers, and the integration timeout is at most 29 s.
   */
  responseStreaming: boolean;
  /** Stage throttling: steady requests per second, across all callers. */
  throttlingRateLimit: number;
  /** Stage throttling: burst bucket size. */
  throttlingBurstLimit: number;
  /** Retention of the function logs and the API access logs. */
  logRetention: RetentionDays;
  stageName: string;
  /** Whether the stack sets the region's API Gateway CloudWatch Logs role (see docs/deployment.md). */
  apiGatewayCloudWatchRole: boolean;
  serviceName: string;
  metricsNamespace: string;
  /** RATE_LIMIT_RPM, MAX_REQUESTS_IN_FLIGHT, CREDITS_PER_USD, MARKUP: unset leaves the defaults of shared/config.ts. */
  rateLimitRpm?: number;
  maxRequestsInFlight?: number;
  creditsPerUsd?: number;
  markup?: number;
  /** Subscribed to the alarms' topic when given (else subscribe to the AlarmTopicArn output). */
  alarmEmail?: string;
}

export const DEFAULT_SETTINGS: GatewaySettings = {
  authorizerCacheTtl: Duration.seconds(30),
  integrationTimeout: Duration.seconds(29),
  responseStreaming: true,
  throttlingRateLimit: 50,
  throttlingBurstLimit: 100,
  logRetention: RetentionDays.ONE_MONTH,
  stageName: 'prod',
  apiGatewayCloudWatchRole: true,
  serviceName: 'model-compare-gateway',
  metricsNamespace: 'ModelCompareGateway',
};

/**
 * How often the reconciler runs. A reservation is released once it is older than
 * RESERVATION_TIMEOUT_MS (18 minutes, shared/credits/credits-service.ts), so a crashed
 * request's credits come back within 18 to 23 minutes.
 */
export const RECONCILE_SCHEDULE = Duration.minutes(5);

/**
 * The shortest integration timeout: REQUEST_DEADLINE_MS (FUNCTION_MARGIN_MS shorter) at least
 * MIN_REQUEST_DEADLINE_MS, which leaves the models time after a reserve that took the
 * store's worst case (shared/deadlines.ts): 14 s.
 */
export const MIN_INTEGRATION_TIMEOUT = Duration.seconds(Math.ceil((MIN_REQUEST_DEADLINE_MS + FUNCTION_MARGIN_MS) / 1_000));
/**
 * The authorizer's timeout: it reads the key, then its account (shared/auth/authenticate.ts),
 * two store calls one after the other, each up to STORE_WORST_CALL_MS (7 s) when the store
 * hangs, and a second for the rest: 15 s. With Lambda's default 10 s, a hung first read and a
 * slow second one timed the function out: a Lambda timeout, not the store failure the
 * authorizer logs and answers (API Gateway's 503 `service_unavailable` follows either way).
 */
export const AUTHORIZER_STORE_CALLS = 2;
export const AUTHORIZER_TIMEOUT = Duration.seconds(Math.ceil((AUTHORIZER_STORE_CALLS * STORE_WORST_CALL_MS + 1_000) / 1_000));
/** API Gateway ends a streamed response (Regional endpoint) that sends nothing for this long; a JSON answer is written once it is whole, an event stream sends a keep-alive comment every 15 s. */
export const STREAM_IDLE_LIMIT = Duration.minutes(5);
/** The longest a buffered (not streamed) Regional REST API integration may take without a quota increase. */
export const BUFFERED_INTEGRATION_LIMIT = Duration.seconds(29);

export type GatewayStackProps = StackProps & Partial<GatewaySettings>;

/**
 * The gateway in one deployable unit. Stateful (GatewayData: tables and claim-check
 * bucket, retained and protected from deletion and replacement) and stateless parts
 * (functions, API, workflow) are separate constructs, so either can move to a
 * stack of its own without renaming anything inside it.
 */
export class GatewayStack extends Stack {
  readonly data: GatewayData;
  readonly providerSecret: ProviderSecret;
  readonly nova: NovaInvoke;
  readonly authorizerFunction: GatewayFunction;
  readonly apiFunction: GatewayFunction;
  readonly catalogFunction: GatewayFunction;
  readonly reconcilerFunction: GatewayFunction;
  readonly reconcileSchedule: Rule;
  readonly generateFunction: GatewayFunction;
  readonly judgeFunction: GatewayFunction;
  readonly workflow: JudgeWorkflow;
  readonly api: GatewayApi;
  /** The stage's web ACL; none in the buffered build for emulators. */
  readonly edge?: GatewayEdge;
  readonly alarms: GatewayAlarms;

  constructor(scope: Construct, id: string, props: GatewayStackProps = {}) {
    super(scope, id, props);
    const settings = resolveSettings(props);
    const defaults: GatewayFunctionDefaults = {
      logRetention: settings.logRetention,
      serviceName: settings.serviceName,
      metricsNamespace: settings.metricsNamespace,
    };

    // Stateful.
    this.data = new GatewayData(this, 'Data');
    const { tables } = this.data;
    // Buffered (emulator) stacks declare, empty, what an emulator may need to point elsewhere:
    // the store endpoint, and for the api function each provider's key and base URL.
    // sam-local's --env-vars overrides only variables the template declares (docs/deployment.md);
    // empty means unset (AWS, keys from the secret).
    const emulated = !settings.responseStreaming;
    const storeEnv: Record<string, string> = emulated ? { DYNAMODB_ENDPOINT: '' } : {};
    const providerEnv: Record<string, string> = emulated
      ? Object.fromEntries(
          PROVIDERS.flatMap((provider) => [
            [providerKeyName(provider), ''],
            [providerBaseUrlName(provider), ''],
          ]),
        )
      : {};
    this.providerSecret = new ProviderSecret(this, 'ProviderKeys');

    // Stateless: functions.
    this.authorizerFunction = new GatewayFunction(this, 'AuthorizerFunction', {
      source: 'authorizer',
      description: 'Lambda TOKEN authorizer: Authorization: Bearer <key> to the account ID',
      defaults,
      timeout: AUTHORIZER_TIMEOUT,
      environment: { [TABLE_ENV.apiKeys]: tables.apiKeys.tableName, [TABLE_ENV.accounts]: tables.accounts.tableName, ...storeEnv },
    });
    // shared/auth/authenticate.ts: the key by its hash, then its account (zero data retention
    // and rate limit go into the authorizer context, saving the api function a read).
    this.data.grantItems('apiKeys', this.authorizerFunction, ['GetItem']);
    this.data.grantItems('accounts', this.authorizerFunction, ['GetItem']);

    this.apiFunction = new GatewayFunction(this, 'ApiFunction', {
      source: 'api',
      description: 'POST /api/v1/prompt',
      defaults,
      memorySize: 1024,
      timeout: settings.integrationTimeout,
      environment: {
        [TABLE_ENV.accounts]: tables.accounts.tableName,
        [TABLE_ENV.ledger]: tables.ledger.tableName,
        [TABLE_ENV.idempotency]: tables.idempotency.tableName,
        [TABLE_ENV.promptLogs]: tables.promptLogs.tableName,
        PROVIDER_SECRET_ARN: this.providerSecret.secret.secretArn,
        REQUEST_DEADLINE_MS: String(requestDeadlineMs(settings.integrationTimeout)),
        [RESPONSE_STREAMING_ENV]: String(settings.responseStreaming),
        ...storeEnv,
        ...providerEnv,
        ...optionalEnv({
          RATE_LIMIT_RPM: settings.rateLimitRpm,
          MAX_REQUESTS_IN_FLIGHT: settings.maxRequestsInFlight,
          CREDITS_PER_USD: settings.creditsPerUsd,
          MARKUP: settings.markup,
        }),
      },
    });
    // What the request path calls (DESIGN.md), table by table: the account read (when the
    // authorizer context has not got it) and its reserve and settle updates; ledger entries
    // put, and read back when one was already there; the idempotency record claimed, read,
    // completed or released; the prompt log written. No Scan, Query, batch or index.
    this.data.grantItems('accounts', this.apiFunction, ['GetItem', 'UpdateItem']);
    this.data.grantItems('ledger', this.apiFunction, ['PutItem', 'GetItem']);
    this.data.grantItems('idempotency', this.apiFunction, ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem']);
    this.data.grantItems('promptLogs', this.apiFunction, ['PutItem']);
    this.providerSecret.grantRead(this.apiFunction);
    // Amazon Nova (fam_h) through Bedrock Converse, in this region, signed with the function's role.
    this.nova = new NovaInvoke(this, 'Nova');
    // A caller's event-stream request streams its models: ConverseStream for Nova.
    this.nova.grantInvoke(this.apiFunction, { streaming: true });

    // Stateless: the reconciler, on a schedule. It scans accounts for unposted ledger entries
    // and stale reservations and updates them, and puts (or reads back) ledger entries; nothing else.
    this.reconcilerFunction = new GatewayFunction(this, 'ReconcilerFunction', {
      source: 'reconciler',
      description: 'Scheduled: posts unposted ledger entries, completes or releases reservations older than 18 minutes',
      defaults,
      // Below the schedule's period; an overlapping run would still be safe (conditional writes).
      timeout: Duration.minutes(4),
      environment: {
        [TABLE_ENV.accounts]: tables.accounts.tableName,
        [TABLE_ENV.ledger]: tables.ledger.tableName,
      },
    });
    this.data.grantItems('accounts', this.reconcilerFunction, ['Scan', 'UpdateItem']);
    this.data.grantItems('ledger', this.reconcilerFunction, ['PutItem', 'GetItem']);
    this.reconcileSchedule = new Rule(this, 'ReconcileSchedule', {
      description: `Runs the reconciler every ${RECONCILE_SCHEDULE.toMinutes()} minutes`,
      schedule: Schedule.rate(RECONCILE_SCHEDULE),
      // A missed run is made up by the next one; retrying an old event only adds load.
      targets: [new LambdaFunction(this.reconcilerFunction, { retryAttempts: 0 })],
    });
    // Nor does Lambda retry a run that failed (an account whose writes failed fails the run once
    // every other account had its turn): the next scheduled run tries again.
    this.reconcilerFunction.configureAsyncInvoke({ retryAttempts: 0 });

    // Stateless: the judge workflow (Step Functions Express: Generate map, Judge map), which
    // the api function starts synchronously for judged requests. Its tasks call the
    // providers (the secret) and pass large payloads through the claim-check bucket.
    const { claimCheckBucket } = this.data;
    const taskEnvironment = {
      PROVIDER_SECRET_ARN: this.providerSecret.secret.secretArn,
      [WORKFLOW_ENV.claimCheckBucket]: claimCheckBucket.bucketName,
    };
    this.generateFunction = new GatewayFunction(this, 'GenerateFunction', {
      source: 'generate',
      description: 'Judge workflow: runs one model of a judged request',
      defaults,
      timeout: settings.integrationTimeout,
      environment: taskEnvironment,
    });
    this.judgeFunction = new GatewayFunction(this, 'JudgeFunction', {
      source: 'judge',
      description: "Judge workflow: runs one judge's calls, on every ordered pair of results, side by side",
      defaults,
      timeout: settings.integrationTimeout,
      environment: taskEnvironment,
    });
    for (const fn of [this.generateFunction, this.judgeFunction]) {
      this.providerSecret.grantRead(fn);
      this.nova.grantInvoke(fn);
      // Reads the request and results, writes its own result or judgment.
      grantClaimCheck(claimCheckBucket, fn, ['s3:GetObject', 's3:PutObject']);
    }
    this.workflow = new JudgeWorkflow(this, 'Workflow', {
      generateFunction: this.generateFunction,
      judgeFunction: this.judgeFunction,
      timeout: settings.integrationTimeout,
      taskTimeout: settings.integrationTimeout,
      logRetention: settings.logRetention,
    });
    this.workflow.stateMachine.grantStartSyncExecution(this.apiFunction);
    this.apiFunction.addEnvironment(WORKFLOW_ENV.stateMachineArn, this.workflow.stateMachine.stateMachineArn);
    this.apiFunction.addEnvironment(WORKFLOW_ENV.claimCheckBucket, claimCheckBucket.bucketName);
    // Writes the request, reads results and judgments, deletes them all when the request ends.
    grantClaimCheck(claimCheckBucket, this.apiFunction, ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']);

    // The catalog and the OpenAPI document: built into the bundle, no table, no secret.
    this.catalogFunction = new GatewayFunction(this, 'CatalogFunction', {
      source: 'catalog',
      description: 'GET /api/v1/models, GET /api/v1/openapi.json and the comparison page (GET /, /page.js, /page-markdown.js, /page.css)',
      defaults,
    });

    this.api = new GatewayApi(this, 'Api', {
      apiFunction: this.apiFunction,
      catalogFunction: this.catalogFunction,
      authorizerFunction: this.authorizerFunction,
      stageName: settings.stageName,
      authorizerCacheTtl: settings.authorizerCacheTtl,
      integrationTimeout: settings.integrationTimeout,
      responseStreaming: settings.responseStreaming,
      throttlingRateLimit: settings.throttlingRateLimit,
      throttlingBurstLimit: settings.throttlingBurstLimit,
      logRetention: settings.logRetention,
      cloudWatchRole: settings.apiGatewayCloudWatchRole,
    });
    // Per-key and per-address limits at the edge, each a share of the stage's throttle; not in
    // the buffered build for emulators, which may not run WAFv2 (LocalStack's editions differ).
    if (emulated) {
      Validations.of(this.api.restApi.deploymentStage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason: 'The buffered build is for LocalStack and sam-local, which may not run WAFv2; the AWS build puts a web ACL on the stage.',
      });
    } else {
      this.edge = new GatewayEdge(this, 'Edge', { stageArn: this.api.restApi.deploymentStage.stageArn, throttlingRateLimit: settings.throttlingRateLimit });
    }

    this.alarms = new GatewayAlarms(this, 'Alarms', {
      functions: {
        AuthorizerFunction: this.authorizerFunction,
        ApiFunction: this.apiFunction,
        CatalogFunction: this.catalogFunction,
        ReconcilerFunction: this.reconcilerFunction,
        GenerateFunction: this.generateFunction,
        JudgeFunction: this.judgeFunction,
      },
      refusingByErrors: ['AuthorizerFunction'],
      throttlesWatched: { ApiFunction: this.apiFunction, GenerateFunction: this.generateFunction, JudgeFunction: this.judgeFunction },
      apiFunction: this.apiFunction,
      reconciler: { fn: this.reconcilerFunction, every: RECONCILE_SCHEDULE },
      serverErrors: this.api.restApi.metricServerError(),
      stateMachine: this.workflow.stateMachine,
      metricsNamespace: settings.metricsNamespace,
      serviceName: settings.serviceName,
      email: settings.alarmEmail,
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the stage; the operation is POST <ApiUrl>api/v1/prompt',
      value: this.api.restApi.url,
    });
    for (const definition of TABLES) {
      new CfnOutput(this, tableNameOutputId(definition.key), {
        description: `DynamoDB table "${definition.key}" (the admin CLI reads these outputs)`,
        value: tables[definition.key].tableName,
      });
    }
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic of the alarms (docs/deployment.md, Alarms): subscribe to hear of them',
      value: this.alarms.topic.topicArn,
    });
    new CfnOutput(this, 'ProviderSecretArn', {
      description: 'Secrets Manager secret with the provider keys as JSON; see docs/deployment.md to put keys in it',
      value: this.providerSecret.secret.secretArn,
    });
  }
}

/** The settings given, each missing one from DEFAULT_SETTINGS; rejects values API Gateway or Lambda would. */
export function resolveSettings(props: Partial<GatewaySettings>): GatewaySettings {
  const d = DEFAULT_SETTINGS;
  const settings: GatewaySettings = {
    authorizerCacheTtl: props.authorizerCacheTtl ?? d.authorizerCacheTtl,
    integrationTimeout: props.integrationTimeout ?? d.integrationTimeout,
    responseStreaming: props.responseStreaming ?? d.responseStreaming,
    throttlingRateLimit: props.throttlingRateLimit ?? d.throttlingRateLimit,
    throttlingBurstLimit: props.throttlingBurstLimit ?? d.throttlingBurstLimit,
    logRetention: props.logRetention ?? d.logRetention,
    stageName: props.stageName ?? d.stageName,
    apiGatewayCloudWatchRole: props.apiGatewayCloudWatchRole ?? d.apiGatewayCloudWatchRole,
    serviceName: props.serviceName ?? d.serviceName,
    metricsNamespace: props.metricsNamespace ?? d.metricsNamespace,
    rateLimitRpm: props.rateLimitRpm,
    maxRequestsInFlight: props.maxRequestsInFlight,
    creditsPerUsd: props.creditsPerUsd,
    markup: props.markup,
    alarmEmail: props.alarmEmail,
  };
  const ttl = settings.authorizerCacheTtl.toSeconds();
  if (ttl > 3600) throw new SettingsError(`authorizerCacheTtl (gateway:authorizerCacheTtlSeconds) must be at most 3600 seconds, got ${ttl}`);
  const timeout = settings.integrationTimeout.toMilliseconds();
  if (timeout < MIN_INTEGRATION_TIMEOUT.toMilliseconds()) {
    throw new SettingsError(
      `integrationTimeout (gateway:integrationTimeoutSeconds) must be at least ${MIN_INTEGRATION_TIMEOUT.toSeconds()} s, got ${timeout / 1_000} s: the request deadline is ${FUNCTION_MARGIN_MS / 1_000} s shorter, ` +
        `and below ${MIN_REQUEST_DEADLINE_MS / 1_000} s it could leave the models no time after the reserve`,
    );
  }
  if (timeout > STREAM_IDLE_LIMIT.toMilliseconds()) {
    throw new SettingsError(
      `integrationTimeout (gateway:integrationTimeoutSeconds) cannot exceed ${STREAM_IDLE_LIMIT.toSeconds()} s: API Gateway cuts a streamed answer idle that long`,
    );
  }
  if (!settings.responseStreaming && timeout > BUFFERED_INTEGRATION_LIMIT.toMilliseconds()) {
    throw new SettingsError(
      `integrationTimeout (gateway:integrationTimeoutSeconds) cannot exceed ${BUFFERED_INTEGRATION_LIMIT.toSeconds()} s without response streaming (gateway:responseStreaming false; the Regional REST API integration timeout quota)`,
    );
  }
  return settings;
}

function requestDeadlineMs(integrationTimeout: Duration): number {
  return integrationTimeout.toMilliseconds() - FUNCTION_MARGIN_MS;
}

function optionalEnv(values: Record<string, number | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])));
}
