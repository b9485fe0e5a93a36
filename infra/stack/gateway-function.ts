import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FUNCTIONS_DIR = join(REPO_ROOT, 'functions');

/**
 * ESM output cannot `require()`; CommonJS dependencies bundled into it still do. This
 * gives the bundle a real `require` (under a name no bundled module declares at the top).
 */
const CJS_REQUIRE_SHIM =
  "import { createRequire as __gatewayCreateRequire } from 'node:module'; const require = __gatewayCreateRequire(import.meta.url);";

/** What every gateway function shares and the stack decides once (from its props). */
export interface GatewayFunctionDefaults {
  logRetention: RetentionDays;
  /** POWERTOOLS_SERVICE_NAME. */
  serviceName: string;
  /** POWERTOOLS_METRICS_NAMESPACE. */
  metricsNamespace: string;
}

export interface GatewayFunctionProps {
  /** The entry file under functions/, without extension: `api`, `authorizer`, later `generate`, `judge`, `reconciler`. */
  source: string;
  description: string;
  defaults: GatewayFunctionDefaults;
  environment?: Record<string, string>;
  /** @default 10 seconds */
  timeout?: Duration;
  /** @default 512 */
  memorySize?: number;
}

/**
 * Every Lambda function of the gateway: one ESM bundle of `functions/<source>.ts` built by
 * the local esbuild (never Docker), Node 22 on arm64, X-Ray tracing, its own log group with
 * the stack's retention and a role that holds nothing but what is granted to it (no
 * managed policy: the log group grants its own write access).
 */
export class GatewayFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: GatewayFunctionProps) {
    const entry = join(FUNCTIONS_DIR, `${props.source}.ts`);
    if (!existsSync(entry)) throw new Error(`GatewayFunction ${id}: no entry file ${entry}`);
    // Children of `scope`, not of the function: a construct cannot add children before super().
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: props.defaults.logRetention });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${props.source} function`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      entry,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.defaults.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: props.defaults.metricsNamespace,
        // The event holds the Authorization header and the prompt; a handler's result holds
        // model outputs. Neither may reach the logs or the X-Ray trace metadata.
        POWERTOOLS_LOGGER_LOG_EVENT: 'false',
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        // DESIGN.md: bundle for Node 20 so the same code runs in development and on nodejs22.x.
        target: 'node20',
        mainFields: ['module', 'main'],
        banner: CJS_REQUIRE_SHIM,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // The nodejs22.x runtime ships AWS SDK v3.
        externalModules: ['@aws-sdk/*'],
        forceDockerBundling: false,
        logLevel: LogLevel.WARNING,
      },
    });

    // Lambda's X-Ray integration (PutTraceSegments, PutTelemetryRecords) has no resource-level
    // permissions: the statement CDK adds for Tracing.ACTIVE must name "*".
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions; "*" is the only valid resource.',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'DESIGN.md fixes the Lambda runtime at nodejs22.x (bundled for Node 20, the development runtime); ' +
        'a runtime change is a deliberate decision, not a lint fix.',
    });
  }
}
