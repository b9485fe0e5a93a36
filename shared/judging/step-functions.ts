import type { SFNClient } from '@aws-sdk/client-sfn';
import { StandardRetryStrategy } from '@smithy/core/retry';
import type { RetryErrorInfo, StandardRetryToken } from '@smithy/types';
import { WorkflowFailedError } from './errors.js';
import { withFastConfig } from '../aws-client-config.js';
import type { JudgingWorkflow, WorkflowInput, WorkflowOutput } from './workflow-types.js';

export interface StepFunctionsWorkflowOptions {
  stateMachineArn: string;
  region: string;
  /** AWS_ENDPOINT_URL_SFN or AWS_ENDPOINT_URL (LocalStack); by default the region's. */
  endpoint?: string;
  /** A client to use (tests); otherwise one is made on first use. */
  client?: SFNClient;
}

/**
 * How long past the request's deadline the execution's answer is awaited: its last states
 * (judge calls cut at the deadline, a large judgment's claim check) and the answer's way back.
 * The api function then still has 3 s before its timeout to answer and settle (the stack's 4 s
 * settle margin and the orchestrator's 1 s, less this).
 */
export const ANSWER_GRACE_MS = 2_000;

/**
 * StartSyncExecution is retried only where no execution can have begun: Step Functions
 * refused it (throttling), or the connection was refused before the call was sent. A 5xx or
 * a connection lost can come while the execution runs, and a synchronous Express execution
 * is not idempotent by its name: a second call would start a second execution, which calls
 * every model and judge again (paid to the vendors twice, the caller charged once).
 */
export class ThrottlingOnlyRetry extends StandardRetryStrategy {
  override async refreshRetryTokenForRetry(token: StandardRetryToken, errorInfo: RetryErrorInfo): Promise<StandardRetryToken> {
    const refused = (errorInfo.error as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
    // The retry step answers the call's own error when this refuses.
    if (errorInfo.errorType !== 'THROTTLING' && !refused) throw new Error('Not retried: the execution may have started');
    return super.refreshRetryTokenForRetry(token, errorInfo);
  }
}

/**
 * The judge workflow in AWS: StartSyncExecution on the Express state machine, which
 * answers once the execution has ended. The SDK is loaded on first use, so requests
 * without judges never pay for its import.
 */
export class StepFunctionsWorkflow implements JudgingWorkflow {
  private loaded: Promise<{ sdk: typeof import('@aws-sdk/client-sfn'); client: SFNClient }> | undefined;

  constructor(private readonly options: StepFunctionsWorkflowOptions) {}

  async run(input: WorkflowInput, { executionName }: { executionName: string }): Promise<WorkflowOutput> {
    const { sdk, client } = await this.sfn();
    // Waits for the answer until just past the request's deadline, when every judge call has
    // ended: a hung call then fails (an AbortError), and the request with it, its reservation
    // released, instead of holding the invocation until the function's timeout.
    // AbortSignal.timeout takes whole, finite milliseconds only.
    const waitMs = Math.floor(input.context.deadlineAt + ANSWER_GRACE_MS - Date.now());
    const answer = await client.send(new sdk.StartSyncExecutionCommand({ stateMachineArn: this.options.stateMachineArn, name: executionName, input: JSON.stringify(input) }), {
      abortSignal: Number.isFinite(waitMs) ? AbortSignal.timeout(Math.max(0, waitMs)) : undefined,
    });
    // Error and cause are logged by the caller by name only: a cause may quote a payload.
    if (answer.status !== 'SUCCEEDED' || answer.output === undefined) throw new WorkflowFailedError(answer.status ?? 'UNKNOWN', answer.error);
    return JSON.parse(answer.output) as WorkflowOutput;
  }

  /** The SDK module and the client, loaded together on first use. */
  private sfn() {
    this.loaded ??= import('@aws-sdk/client-sfn').then((sdk) => ({
      sdk,
      client:
        this.options.client ??
        // StartSyncExecution's host takes a `sync-` prefix in AWS; an endpoint given (LocalStack,
        // e.g. http://localhost:4566) is taken as it is, or `sync-localhost` would not resolve.
        withFastConfig(
          new sdk.SFNClient({
            region: this.options.region,
            retryStrategy: new ThrottlingOnlyRetry(3),
            ...(this.options.endpoint ? { endpoint: this.options.endpoint, disableHostPrefix: true } : {}),
          }),
        ),
    }));
    return this.loaded;
  }
}
