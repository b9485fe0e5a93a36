import { loadConfig, type GatewayConfig } from '../config.js';

/**
 * Where the judge workflow lives in AWS. shared/config.ts reads the variables
 * (JUDGE_WORKFLOW_ARN, CLAIM_CHECK_BUCKET: WORKFLOW_ENV) into the GatewayConfig; the stack
 * sets them on the `api`, `generate` and `judge` functions.
 */
export { WORKFLOW_ENV } from '../config.js';

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

/**
 * The workflow's settings from an environment, through loadConfig (the one reader of the
 * environment); without one, loadConfig's default (the process environment).
 */
export function loadWorkflowSettings(env?: NodeJS.ProcessEnv): WorkflowSettings {
  return workflowSettings(loadConfig(env));
}
