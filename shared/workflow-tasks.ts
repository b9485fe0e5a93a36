import { S3ClaimCheck } from './claim-check/s3.js';
import type { ClaimCheckStore } from './claim-check/types.js';
import type { GatewayConfig } from './config.js';
import { workflowSettings } from './judging/settings.js';
import { WorkflowTasks } from './judging/workflow-tasks.js';
import { silentLog, type Log } from './log.js';
import { createRouter, type RouterOptions } from './providers/router.js';

/* Apart from gateway.ts: the workflow's task functions have no store, and bundle none. */

/**
 * The `generate` and `judge` tasks of the judge workflow: the providers (routed as for
 * the `api` function) and the claim-check store (`options.claimCheck`, else the bucket
 * the configuration names).
 */
export function createWorkflowTasks(config: GatewayConfig, options: RouterOptions & { log?: Log; claimCheck?: ClaimCheckStore } = {}): WorkflowTasks {
  let claimCheck = options.claimCheck;
  if (!claimCheck) {
    const { claimCheckBucket } = workflowSettings(config);
    if (claimCheckBucket === undefined) throw new Error('The workflow tasks need a claim-check store: CLAIM_CHECK_BUCKET is not set');
    claimCheck = new S3ClaimCheck(claimCheckBucket, { region: config.region, endpoint: config.awsEndpoints.s3 });
  }
  return new WorkflowTasks({ route: createRouter(config, options), claimCheck, log: options.log ?? silentLog });
}
