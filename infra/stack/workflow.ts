import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  DefinitionBody,
  Errors,
  JitterType,
  JsonPath,
  LogLevel,
  Map as MapState,
  Pass,
  StateMachine,
  StateMachineType,
  Timeout,
  type TaskStateBase,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { LIMITS } from '../../shared/contract/limits.js';

/**
 * The one error of the Lambda service that a task retries: a throttled invocation, which never
 * ran. The others (a client timeout, a service or SDK error) may come after the function ran
 * and called its vendors, which a retry would call and pay a second time; nor is an error the
 * function threw retried: the task answers failed results for model failures, so a throw is
 * a bug that a retry would only repeat. Each fails its model or judge instead.
 */
const LAMBDA_SERVICE_ERRORS = ['Lambda.TooManyRequestsException'];

/** Where Step Functions' log groups belong (AWS: Logging using CloudWatch Logs, "/aws/vendedlogs/" prefix). */
export const VENDED_LOGS_PREFIX = '/aws/vendedlogs/states/';

/** The state names; the local runner binds the Lambda tasks by what the definition says, not by these. */
export const WORKFLOW_STATES = {
  generate: 'Generate',
  generateModel: 'GenerateModel',
  generateFailed: 'GenerateFailed',
  judge: 'Judge',
  judgeCalls: 'JudgeCalls',
  judgeFailed: 'JudgeFailed',
} as const;

/**
 * An inline Map state runs at most this many iterations at once (Step Functions quotas);
 * more would run in waves, and the last waves would meet the request's deadline. A
 * request has at most LIMITS.models models (one Generate iteration each) and LIMITS.judges
 * judges (one Judge iteration each, running all of that judge's calls at once).
 */
export const INLINE_MAP_CONCURRENCY = 40;

export interface JudgeWorkflowProps {
  /** Runs one model (functions/generate.ts). */
  generateFunction: IFunction;
  /** Runs one judge's calls, side by side (functions/judge.ts). */
  judgeFunction: IFunction;
  /** The longest an execution may take: the `api` function waits for it synchronously. */
  timeout: Duration;
  /** The longest one task may take (the functions' timeout). */
  taskTimeout: Duration;
  logRetention: RetentionDays;
}

/**
 * The judge workflow (DESIGN.md, The workflow): a Step Functions Express state machine
 * that the `api` function starts synchronously for a judged request.
 *
 *   Generate  Map over the requested models, one `generate` task each
 *   Judge     Map over the judges, one `judge` task each making all of that judge's
 *             calls at once (every pair x both orders); a pair with a failed result is
 *             skipped without a call. Both maps fit one wave of an inline Map.
 *
 * A task that fails (after retries of a throttled invocation) is caught and becomes a
 * failed item, so the execution itself always succeeds. Payloads are the types of
 * shared/judging/workflow-types.ts; large ones travel by claim check. Execution logs
 * record every event but never execution data (prompts, outputs, verdicts).
 */
export class JudgeWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  readonly generateFunction: IFunction;
  readonly judgeFunction: IFunction;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: JudgeWorkflowProps) {
    super(scope, id);
    this.generateFunction = props.generateFunction;
    this.judgeFunction = props.judgeFunction;
    const s = WORKFLOW_STATES;
    const context = JsonPath.objectAt('$.context');
    const request = JsonPath.objectAt('$.request');

    const generateModel = this.lambdaTask(s.generateModel, props.generateFunction, props.taskTimeout).addCatch(
      Pass.jsonPath(this, s.generateFailed, {
        parameters: {
          index: JsonPath.numberAt('$.model.index'),
          modelId: JsonPath.stringAt('$.model.modelId'),
          status: 'failed',
          error: JsonPath.stringAt('$.error.Error'),
        },
      }),
      { errors: [Errors.ALL], resultPath: '$.error' },
    );
    if (LIMITS.models > INLINE_MAP_CONCURRENCY || LIMITS.judges > INLINE_MAP_CONCURRENCY) {
      throw new Error(`A request may have ${LIMITS.models} models and ${LIMITS.judges} judges; an inline Map runs ${INLINE_MAP_CONCURRENCY} iterations at once`);
    }
    const generate = MapState.jsonPath(this, s.generate, {
      comment: 'One generate task per requested model',
      itemsPath: '$.models',
      itemSelector: { request, context, model: JsonPath.objectAt('$$.Map.Item.Value') },
      resultPath: '$.results',
    }).itemProcessor(generateModel);

    const judgeCalls = this.lambdaTask(s.judgeCalls, props.judgeFunction, props.taskTimeout).addCatch(
      Pass.jsonPath(this, s.judgeFailed, {
        parameters: { judge: JsonPath.numberAt('$.item.judge'), status: 'failed', error: JsonPath.stringAt('$.error.Error') },
      }),
      { errors: [Errors.ALL], resultPath: '$.error' },
    );
    const judge = MapState.jsonPath(this, s.judge, {
      comment: 'One judge task per judge: all of its calls (every pair of completed results, both orders) at once',
      itemsPath: '$.judges',
      // Each task gets every result (each within its inline budget or claim-checked) and skips pairs with a failed one.
      itemSelector: { request, context, item: JsonPath.objectAt('$$.Map.Item.Value'), results: JsonPath.listAt('$.results') },
      resultPath: '$.judgments',
    }).itemProcessor(judgeCalls);

    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `${VENDED_LOGS_PREFIX}${Stack.of(this).stackName}-judge-workflow`,
      retention: props.logRetention,
      // Named (the vended-logs prefix): one kept after a destroy would make the next deploy of
      // the stack fail on its name. It holds no execution data.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.EXPRESS,
      comment: 'Judged comparison: Generate (one task per model), then Judge (one task per judge, its calls on every pair and order side by side)',
      definitionBody: DefinitionBody.fromChainable(generate.next(judge)),
      timeout: props.timeout,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
    });

    Validations.of(this.stateMachine.role).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'CloudWatch Logs delivery (logs:CreateLogDelivery and the other log-delivery actions) and X-Ray ' +
          '(xray:PutTraceSegments, PutTelemetryRecords, GetSamplingRules, GetSamplingTargets) support no resource-level permissions.',
      },
      ...[props.generateFunction, props.judgeFunction].map((fn) => ({
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*]`,
        reason: 'lambda:InvokeFunction on the versions and aliases of one function of this stack (the grant CDK makes for a LambdaInvoke task).',
      })),
    );
  }

  /**
   * A `lambda:invoke` task that answers the function's payload, retrying only a throttled
   * invocation: at most twice, 1 s then 2 s with full jitter, well inside the request.
   */
  private lambdaTask(id: string, fn: IFunction, taskTimeout: Duration): TaskStateBase {
    return LambdaInvoke.jsonPath(this, id, {
      lambdaFunction: fn,
      outputPath: '$.Payload',
      retryOnServiceExceptions: false,
      taskTimeout: Timeout.duration(taskTimeout),
    }).addRetry({
      errors: LAMBDA_SERVICE_ERRORS,
      interval: Duration.seconds(1),
      maxAttempts: 2,
      backoffRate: 2,
      jitterStrategy: JitterType.FULL,
    });
  }
}

/**
 * Object access to the claim-check bucket with exactly the actions given (a bucket's
 * `grantReadWrite` would add wildcard actions: `s3:GetObject*`, `s3:List*`, `s3:Abort*`).
 * The objects are named per request at run time, so the resource is every object.
 */
export function grantClaimCheck(bucket: IBucket, fn: IFunction, actions: string[]): void {
  fn.addToRolePolicy(new PolicyStatement({ actions, resources: [bucket.arnForObjects('*')] }));
  // Without it S3 answers a read of a missing object (an expired claim check) AccessDenied, not NoSuchKey:
  // an operator would chase a permission that is there.
  if (actions.includes('s3:GetObject')) fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  if (!fn.role) return;
  const bucketId = Stack.of(bucket).getLogicalId(bucket.node.defaultChild as CfnElement);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
    reason: `Claim-check objects are named per request at run time (<promptLogId>/...); ${actions.join(', ')} on the objects of this one bucket only.`,
  });
}
