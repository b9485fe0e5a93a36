/** What the gateway takes from the Step Functions client (the judge workflow in AWS), loaded on demand as `#sdk/sfn`: see s3.ts. */
export { SFNClient, StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
