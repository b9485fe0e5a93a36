import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { RELEASED_LOG_MESSAGE, UNCOLLECTED_LOG_MESSAGE } from '../../shared/credits/credits-service.js';
import type { GatewayFunction } from './gateway-function.js';

export interface GatewayAlarmsProps {
  /** Every function of the gateway, by the construct ID its alarm is named after: each one's error lines are counted. */
  functions: Record<string, GatewayFunction>;
  /**
   * Those of `functions` whose failed invocations have no alarm of their own: the authorizer,
   * which fails an invocation to refuse a key (how API Gateway is told to answer 401), so that
   * its `Errors` counts every unknown key anyone sends. A real failure of it (the store down,
   * a timeout) is answered 503 by API Gateway, which `ApiServerErrors` counts.
   */
  refusingByErrors: readonly string[];
  /** The functions whose throttled invocations fail requests' work (the api's, the workflow's tasks): one alarm for all. */
  throttlesWatched: Record<string, GatewayFunction>;
  /** The function that settles requests: its log holds the cost left uncollected. */
  apiFunction: GatewayFunction;
  /** The reconciler and how often its schedule runs it: an alarm when it has not run for three of those. */
  reconciler: { fn: GatewayFunction; every: Duration };
  /** The API's 5xx answers (API Gateway's `5XXError`, all of them: the function's, the authorizer's, timeouts, throttled invocations). */
  serverErrors: Metric;
  stateMachine: IStateMachine;
  /** Namespace of the metrics the log filters publish, and the functions' (Powertools). */
  metricsNamespace: string;
  /** The functions' `service` dimension (POWERTOOLS_SERVICE_NAME). */
  serviceName: string;
  /** Subscribed to the topic when given. */
  email?: string;
}

/** How long each alarm looks back. */
const PERIOD = Duration.minutes(5);
/** Uncollected cost is summed over an hour: a sign that a reserve missed its bound, not an outage. */
const UNCOLLECTED_PERIOD = Duration.hours(1);
/** The VendorFailures alarm: at least this many vendor calls in a period, at least this share of them failed on the vendor's side. */
const VENDOR_FAILURES = { calls: 10, share: 0.5 } as const;

/**
 * What an operator must hear about, each an alarm on one SNS topic (docs/deployment.md,
 * Alarms): a function's failed invocations (the reconciler's failed run among them), an
 * error logged by any function (a settle entry that may not have landed, a failed judge workflow
 * released uncharged), the API's 5xx answers, failed or timed-out workflow executions,
 * cost above a reservation that the gateway paid and did not charge, and vendor calls failing
 * on the vendors' side (a vendor down or limiting the gateway: `failedOnVendorSide`), whose
 * requests still answer 200; and a reconciler that has stopped running. Every alarm fires on
 * the first occurrence in its period, no data no alarm, but the reconciler's, which fires on
 * a period without a run.
 */
export class GatewayAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: GatewayAlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { displayName: 'Model compare gateway alarms', enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'The topic carries alarm state changes only (alarm names, metric values), never request data; CloudWatch can publish to an encrypted topic only with a customer-managed key, a monthly cost for no data to protect.',
    });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one (every service of the
    // account may publish): without this statement CloudWatch may not, and no alarm would reach anyone.
    const stack = Stack.of(this);
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisAccountsAlarms',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
        },
      }),
    );
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));

    for (const [name, fn] of Object.entries(props.functions)) {
      if (props.refusingByErrors.includes(name)) continue;
      this.alarm(`${name}Errors`, fn.metricErrors({ period: PERIOD, statistic: 'Sum' }), `${name}: failed invocations (an unhandled error, a timeout, out of memory)`);
    }

    // A throttled invocation is no error of the function's (its Errors miss it): a throttled task fails its model or judge uncharged, a throttled api call is a 5xx.
    const throttled = Object.entries(props.throttlesWatched).map(([name, fn], i) => [`t${i}`, fn.metricThrottles({ period: PERIOD, statistic: 'Sum', label: name })] as const);
    const throttles = new MathExpression({
      expression: throttled.map(([id]) => `FILL(${id}, 0)`).join(' + '),
      usingMetrics: Object.fromEntries(throttled),
      period: PERIOD,
      label: 'Lambda invocations throttled',
    });
    this.alarm(
      'Throttles',
      throttles,
      `Lambda throttled invocations of ${Object.keys(props.throttlesWatched).join(', ')}: the account's concurrency is used up (docs/deployment.md, Concurrency); throttled tasks failed their models or judges uncharged`,
    );

    const loggedErrors = new Metric({ namespace: props.metricsNamespace, metricName: 'LoggedErrors', period: PERIOD, statistic: 'Sum' });
    for (const [name, fn] of Object.entries(props.functions)) {
      new MetricFilter(this, `${name}LoggedErrorsFilter`, {
        logGroup: fn.logGroup,
        filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
        metricNamespace: loggedErrors.namespace,
        metricName: loggedErrors.metricName,
        metricValue: '1',
      });
    }
    this.alarm('LoggedErrors', loggedErrors, 'A function logged an error: its log group says which request and what failed (by name; no content is logged)');

    const uncollected = new Metric({ namespace: props.metricsNamespace, metricName: 'UncollectedMicroCredits', period: UNCOLLECTED_PERIOD, statistic: 'Sum' });
    new MetricFilter(this, 'UncollectedFilter', {
      logGroup: props.apiFunction.logGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', UNCOLLECTED_LOG_MESSAGE),
      metricNamespace: uncollected.namespace,
      metricName: uncollected.metricName,
      metricValue: '$.uncollectedMicro',
    });
    this.alarm('Uncollected', uncollected, 'Cost above a reservation was left uncollected: the vendor billed more than the reserve bounded (docs/credits.md)');

    const released = new Metric({ namespace: props.metricsNamespace, metricName: 'ReleasedMicroCredits', period: UNCOLLECTED_PERIOD, statistic: 'Sum' });
    new MetricFilter(this, 'ReleasedFilter', {
      logGroup: props.reconciler.fn.logGroup,
      filterPattern: FilterPattern.stringValue('$.message', '=', RELEASED_LOG_MESSAGE),
      metricNamespace: released.namespace,
      metricName: released.metricName,
      metricValue: '$.amountMicro',
    });
    this.alarm(
      'Released',
      released,
      'The reconciler released reservations whose requests ended without a settle (an api invocation that timed out or crashed): what their models used, if they ran, was charged nothing; at most the sum held (docs/credits.md). A judge workflow that failed is released by the api at once, counted by WorkflowFailures and LoggedErrors instead',
    );

    this.alarm('ApiServerErrors', props.serverErrors.with({ period: PERIOD, statistic: 'Sum' }), 'The API answered 5xx');

    // A reconciler that stops running fails nothing its Errors would count: no run, no datapoint.
    // FILLed, so that a period without one is a 0 to alarm on: on the raw metric, CloudWatch
    // looks back past an empty period to the last datapoint it has (a run), and the alarm
    // would fire only once its whole look-back is empty.
    const { fn: reconciler, every } = props.reconciler;
    const missedRuns = Duration.minutes(every.toMinutes() * 3);
    this.alarm(
      'ReconcilerNotRunning',
      new MathExpression({
        expression: 'FILL(runs, 0)',
        usingMetrics: { runs: reconciler.metricInvocations({ period: missedRuns, statistic: 'Sum' }) },
        period: missedRuns,
        label: 'Reconciler runs',
      }),
      `The reconciler has not run for ${missedRuns.toMinutes()} minutes (its schedule disabled or deleted, or EventBridge failing to invoke it): abandoned reservations stay held out of their accounts' balances, and top-ups and settlements stay unposted`,
      { below: true },
    );

    // FILL: a sum with a series that has no datapoint in a period (no execution ever timed out) has none either.
    const workflowFailures = new MathExpression({
      expression: 'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)',
      usingMetrics: {
        failed: props.stateMachine.metricFailed({ period: PERIOD, statistic: 'Sum' }),
        timedOut: props.stateMachine.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
        aborted: props.stateMachine.metricAborted({ period: PERIOD, statistic: 'Sum' }),
      },
      period: PERIOD,
      label: 'Judge workflow executions failed, timed out or aborted',
    });
    this.alarm('WorkflowFailures', workflowFailures, 'Judge workflow executions failed, timed out or aborted: their requests were released uncharged');

    // Published by the api function for each request (functions/observability.ts), its judge calls included.
    const vendorMetric = (metricName: string) =>
      new Metric({ namespace: props.metricsNamespace, metricName, dimensionsMap: { service: props.serviceName }, period: PERIOD, statistic: 'Sum' });
    const vendorFailures = new MathExpression({
      expression: `IF(FILL(calls, 0) >= ${VENDOR_FAILURES.calls} AND FILL(failures, 0) >= ${VENDOR_FAILURES.share} * FILL(calls, 0), 1, 0)`,
      usingMetrics: { calls: vendorMetric('VendorCalls'), failures: vendorMetric('VendorFailures') },
      period: PERIOD,
      label: "Vendor calls failing on the vendors' side",
    });
    this.alarm(
      'VendorFailures',
      vendorFailures,
      `At least ${VENDOR_FAILURES.share * 100} % of ${VENDOR_FAILURES.calls} or more vendor calls failed on the vendors' side (down, overloaded, limiting the gateway, out of the gateway's credit, answering nonsense or too late, breaking off a stream it had begun, or the gateway's own fault; not a refused key, which LoggedErrors counts): their requests answered 200 with failed results. The api function's log ("Prompt completed") names each model's status and vendor status; a judge call's are in the judge function's log ("Pair judged")`,
    );
  }

  /** An alarm on 1 or more in a period, no data no alarm; `below`: on less than 1, no data an alarm (something that should happen did not). */
  private alarm(id: string, metric: IMetric, description: string, { below = false } = {}): void {
    const alarm = new Alarm(this, `${id}Alarm`, {
      metric,
      alarmDescription: description,
      threshold: 1,
      comparisonOperator: below ? ComparisonOperator.LESS_THAN_THRESHOLD : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: below ? TreatMissingData.BREACHING : TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
  }
}
