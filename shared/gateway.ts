import { S3ClaimCheck } from './claim-check/s3.js';
import type { ClaimCheckStore } from './claim-check/types.js';
import { PromptService, type PromptResponse } from './orchestrator/prompt-service.js';
import type { GatewayConfig } from './config.js';
import type { CreditsService } from './credits/credits-service.js';
import { IdempotencyService } from './idempotency/idempotency-service.js';
import { workflowSettings } from './judging/settings.js';
import { StepFunctionsWorkflow } from './judging/step-functions.js';
import type { JudgingWorkflow } from './judging/workflow-types.js';
import { silentLog, type Log } from './log.js';
import { lazyAsyncAtHand } from './lazy.js';
import { ProviderKeysUnavailableError } from './errors.js';
import { createRouter, type Router, type RouterOptions } from './providers/router.js';
import type { AccountsRepository } from './storage/accounts.js';
import type { ApiKeysRepository } from './storage/api-keys.js';
import { IdempotencyRepository } from './storage/idempotency.js';
import type { LedgerRepository } from './storage/ledger.js';
import type { StoreClient } from './storage/dynamodb.js';
import { PromptLogsRepository } from './storage/prompt-logs.js';
import { createStore } from './credits/store.js';

/** Everything a handler needs, built once per process (per Lambda cold start). */
export interface Gateway {
  config: GatewayConfig;
  storeClient: StoreClient;
  accounts: AccountsRepository;
  apiKeys: ApiKeysRepository;
  ledger: LedgerRepository;
  promptLogs: PromptLogsRepository;
  credits: CreditsService;
  prompts: PromptService;
}

export interface GatewayOptions extends RouterOptions {
  storeClient?: StoreClient;
  log?: Log;
  /**
   * The config with the provider keys read from where they are kept (the Lambda's secret:
   * withProviderSecret), when `config` does not hold them. Read by the first request without
   * judges, side by side with its reserve; a failed read is a 503 (that request's
   * reservation given back, nothing charged), and the next request reads again.
   */
  withKeys?: (config: GatewayConfig) => Promise<GatewayConfig>;
  /**
   * How judged requests run: the workflow and its claim-check store. Without it, the
   * Step Functions state machine and S3 bucket the configuration names (set by the stack:
   * shared/judging/settings.ts); without those either, judged requests are refused.
   */
  judging?: JudgingDeps;
}

export interface JudgingDeps {
  workflow: JudgingWorkflow;
  claimCheck: ClaimCheckStore;
}

/** The judge workflow and claim-check bucket of the deployed stack, when the configuration names them. */
function judgingFromConfig(config: GatewayConfig): JudgingDeps | undefined {
  const { stateMachineArn, claimCheckBucket } = workflowSettings(config);
  if (stateMachineArn === undefined || claimCheckBucket === undefined) return undefined;
  return {
    workflow: new StepFunctionsWorkflow({ stateMachineArn, region: config.region, endpoint: config.awsEndpoints.sfn }),
    claimCheck: new S3ClaimCheck(claimCheckBucket, { region: config.region, endpoint: config.awsEndpoints.s3 }),
  };
}

export function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Gateway {
  const log = options.log ?? silentLog;
  const store = createStore(config, options);
  const promptLogs = new PromptLogsRepository(store.storeClient.items, config.tables.promptLogs);
  const prompts = new PromptService({
    config,
    accounts: store.accounts,
    credits: store.credits,
    // A run that has not finished within its deadline (plus slack) has crashed: its key may be retried.
    idempotency: new IdempotencyService<PromptResponse>(new IdempotencyRepository(store.storeClient.documents, config.tables.idempotency), config.requestDeadlineMs + 5_000, log),
    promptLogs,
    router: routerOnceKeyed(config, options),
    judging: options.judging ?? judgingFromConfig(config),
    log,
  });
  return { config, ...store, promptLogs, prompts };
}

/**
 * The router: from `config` at once; with `withKeys`, once the keys are read (the router
 * then kept, so that later requests route at once). The read's failure is answered 503.
 */
function routerOnceKeyed(config: GatewayConfig, options: GatewayOptions): () => Router | Promise<Router> {
  const { withKeys } = options;
  if (!withKeys) {
    const router = createRouter(config, options);
    return () => router;
  }
  return lazyAsyncAtHand(async () => {
    try {
      return createRouter(await withKeys(config), options);
    } catch (error) {
      // Logged where it was read (withProviderSecret).
      throw new ProviderKeysUnavailableError({ cause: error });
    }
  });
}
