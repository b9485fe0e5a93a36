import type { GatewayConfig } from '../config.js';

/**
 * Where the judge workflow lives in AWS. shared/config.ts reads the variables
 * (JUDGE_WORKFLOW_ARN, CLAIM_CHECK_BUCKET: WORKFLOW_ENV) into the GatewayConfig; the stack
 * sets them on the `api`, `generate` and `judge` functions.
 */
export interface WorkflowSettings {
  /** The Express state machine the `api` function starts for judged requests. */
  stateMachineArn?: string;
  /** The claim-check bucket. */
  claimCheckBucket?: string;
}

/** The workflow's settings, from the configuration. */
export function workflowSettings(config: Pick<GatewayConfig, 'judgeWorkflowArn' | 'claimCheckBucket'>): WorkflowSettings {
  return { stateMachineArn: config.judgeWorkflowArn, claimCheckBucket: config.claimCheckBucket };
}
