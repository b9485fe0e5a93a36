import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AssetHashType, DockerImage, Duration, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { bundleFunction, FUNCTIONS_DIR } from './bundle.js';

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
 * Every Lambda function of the gateway: `functions/<source>.ts` bundled by the local
 * esbuild (never Docker) with the options of ./bundle.ts, Node 22 on arm64, X-Ray tracing, its own log group with
 * the stack's retention and a role that holds nothing but what is granted to it (no
 * managed policy: the log group grants its own write access).
 */
export class GatewayFunction extends LambdaFunction {
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
      code: Code.fromAsset(FUNCTIONS_DIR, {
        // The hash of what is deployed: the bundle, not the folder it comes from.
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          // Part of the key CDK caches a bundle under: without it, every function would get the first one's bundle.
          environment: { GATEWAY_FUNCTION: props.source },
          local: {
            tryBundle(outputDir) {
              bundleFunction(props.source, outputDir);
              return true;
            },
          },
        },
      }),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      // No --enable-source-maps: reading the maps cost every cold start about 8 ms, and no log
      // line carries a stack trace (errors are logged by name); the maps ship beside the bundle.
      environment: {
        POWERTOOLS_SERVICE_NAME: props.defaults.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: props.defaults.metricsNamespace,
        // The event holds the Authorization header and the prompt; a handler's result holds
        // model outputs; an error's message may quote the request (a 400 names the schema
        // pattern or property it refuses). None may reach the logs or the X-Ray trace metadata,
        // which X-Ray keeps 30 days whatever a request's zero data retention.
        POWERTOOLS_LOGGER_LOG_EVENT: 'false',
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
        ...props.environment,
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
      reason: 'DESIGN.md fixes the Lambda runtime at nodejs22.x (bundled for Node 20, the development runtime); ' + 'a runtime change is a deliberate decision, not a lint fix.',
    });
  }
}
