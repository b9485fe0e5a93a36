import type { SFNClient } from '@aws-sdk/client-sfn';
import { WorkflowFailedError } from './errors.js';
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
 * The judge workflow in AWS: StartSyncExecution on the Express state machine, which
 * answers once the execution has ended. The SDK is loaded on first use, so requests
 * without judges never pay for its import.
 */
export class StepFunctionsWorkflow implements JudgingWorkflow {
  private client: Promise<SFNClient> | undefined;

  constructor(private readonly options: StepFunctionsWorkflowOptions) {}

  async run(input: WorkflowInput, { executionName }: { executionName: string }): Promise<WorkflowOutput> {
    const { StartSyncExecutionCommand } = await import('@aws-sdk/client-sfn');
    const client = await this.sfn();
    const answer = await client.send(new StartSyncExecutionCommand({ stateMachineArn: this.options.stateMachineArn, name: executionName, input: JSON.stringify(input) }));
    // Error and cause are logged by the caller by name only: a cause may quote a payload.
    if (answer.status !== 'SUCCEEDED' || answer.output === undefined) throw new WorkflowFailedError(answer.status ?? 'UNKNOWN', answer.error);
    return JSON.parse(answer.output) as WorkflowOutput;
  }

  private sfn(): Promise<SFNClient> {
    this.client ??= this.options.client
      ? Promise.resolve(this.options.client)
      : import('@aws-sdk/client-sfn').then(
          ({ SFNClient: Client }) => new Client({ region: this.options.region, ...(this.options.endpoint ? { endpoint: this.options.endpoint } : {}) }),
        );
    return this.client;
  }
}
