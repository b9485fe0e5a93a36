import type { GatewayConfig } from '../config.js';
import type { PromptRequest } from '../contract/types.js';
import { microToCredits, usdToMicroCredits } from '../credits/credits.js';
import type { CreditsService, OpenRequest } from '../credits/credits-service.js';
import { estimateMicroCredits } from '../credits/estimate.js';
import { AccountNotFoundError, GatewayError, RateLimitedError } from '../errors.js';
import type { IdempotencyService } from '../idempotency/idempotency-service.js';
import { promptLogId as newPromptLogId } from '../ids.js';
import type { Log } from '../log.js';
import type { Router } from '../providers/router.js';
import type { AccountsRepository } from '../storage/accounts.js';
import type { PromptLogContent, PromptLogMeta, PromptLogsRepository } from '../storage/prompt-logs.js';
import type { RateLimitsRepository } from '../storage/rate-limits.js';
import type { ModelResult } from './result.js';
import { runModels } from './run-models.js';

/** The success body (spec 2.10). */
export interface PromptResponse {
  promptLogId: string;
  results: ModelResult[];
  evaluations: unknown[];
  creditsUsed: number;
}

export interface PromptServiceDeps {
  config: Pick<GatewayConfig, 'creditsPerUsd' | 'markup' | 'requestDeadlineMs' | 'rateLimitRpm'>;
  accounts: AccountsRepository;
  credits: CreditsService;
  rateLimits: RateLimitsRepository;
  idempotency: IdempotencyService<PromptResponse>;
  promptLogs: PromptLogsRepository;
  route: Router;
  log: Log;
}

export class JudgingUnavailableError extends GatewayError {
  override name = 'JudgingUnavailableError';
  constructor() {
    super(501, 'judging_not_available', 'Judging (the judges field) is not available in this version of the gateway yet');
  }
}

/** Time kept back from the deadline for settling and logging after the models answered. */
const SETTLE_MARGIN_MS = 1_000;

export interface SubmitOptions {
  idempotencyKey?: string;
  receivedAt?: number;
}

/** The request path of DESIGN.md from step 3 on: account, rate limit, reserve, run, settle, log, answer. */
export class PromptService {
  constructor(private readonly deps: PromptServiceDeps) {}

  async submit(accountId: string, request: PromptRequest, options: SubmitOptions = {}): Promise<PromptResponse> {
    const { accounts, idempotency } = this.deps;
    const receivedAt = options.receivedAt ?? Date.now();
    const promptLogId = newPromptLogId(receivedAt);
    const account = await accounts.get(accountId);
    if (!account) throw new AccountNotFoundError();
    if (request.judges.length > 0) throw new JudgingUnavailableError();
    const zeroDataRetention = request.body.zero_data_retention ?? account.zeroDataRetention;

    if (options.idempotencyKey === undefined) {
      return this.run(accountId, account.rateLimitRpm, request, promptLogId, zeroDataRetention, receivedAt);
    }
    const begun = await idempotency.begin(accountId, options.idempotencyKey, request.body, promptLogId, receivedAt);
    if (begun.kind === 'replay') return begun.response;
    let response: PromptResponse;
    try {
      response = await this.run(accountId, account.rateLimitRpm, request, promptLogId, zeroDataRetention, receivedAt);
    } catch (error) {
      await idempotency.release(begun.recordKey, promptLogId).catch(() => undefined);
      throw error;
    }
    await idempotency.complete(begun.recordKey, promptLogId, response, zeroDataRetention).catch((error: unknown) => {
      // The answer stands; a retry with this key will run again once the lease passes.
      this.deps.log.warn('Idempotency record not completed', { promptLogId, errorName: (error as Error).name });
    });
    return response;
  }

  private async run(
    accountId: string,
    rateLimitRpm: number | undefined,
    request: PromptRequest,
    promptLogId: string,
    zeroDataRetention: boolean,
    receivedAt: number,
  ): Promise<PromptResponse> {
    const { config, credits, log } = this.deps;
    const limit = rateLimitRpm ?? config.rateLimitRpm;
    const decision = await this.deps.rateLimits.take(accountId, limit, receivedAt);
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, limit);

    const open = await credits.reserve(accountId, promptLogId, estimateMicroCredits(request, config));
    const results = await runModels(request, {
      route: this.deps.route,
      deadlineAt: receivedAt + config.requestDeadlineMs - SETTLE_MARGIN_MS,
    });
    const chargedMicro = await this.settle(open, results);

    await this.deps.promptLogs
      .put(
        toLogMeta(promptLogId, accountId, request, results, chargedMicro, zeroDataRetention, receivedAt),
        zeroDataRetention ? undefined : toLogContent(request, results),
      )
      .catch((error: unknown) => log.error('Prompt log not written', { promptLogId, errorName: (error as Error).name }));
    log.info('Prompt completed', {
      promptLogId,
      accountId,
      models: results.map((r) => ({ modelId: r.modelId, status: r.status, latencyMs: r.latencyMs, errorCode: r.error?.code })),
      creditsUsedMicro: chargedMicro,
    });
    return { promptLogId, results, evaluations: [], creditsUsed: microToCredits(chargedMicro) };
  }

  /** Charges the completed results' cost; failed ones cost nothing. A store failure here leaves the reservation to the reconciler. */
  private async settle(open: OpenRequest, results: ModelResult[]): Promise<number> {
    const { config, credits, log } = this.deps;
    const costUsd = results.reduce((sum, r) => sum + (r.status === 'completed' ? (r.providerCost ?? 0) : 0), 0);
    try {
      return (await credits.settle(open, usdToMicroCredits(costUsd, config))).chargedMicro;
    } catch (error) {
      log.error('Settle failed; the reconciler will release the reservation', { requestId: open.requestId, errorName: (error as Error).name });
      return 0;
    }
  }
}

function toLogMeta(
  promptLogId: string,
  accountId: string,
  request: PromptRequest,
  results: ModelResult[],
  creditsUsedMicro: number,
  zeroDataRetention: boolean,
  receivedAt: number,
): PromptLogMeta {
  return {
    promptLogId,
    accountId,
    createdAt: new Date(receivedAt).toISOString(),
    zeroDataRetention,
    models: results.map((r) => ({
      modelId: r.modelId,
      status: r.status,
      tokensIn: r.tokensIn,
      tokensOut: r.tokensOut,
      latencyMs: r.latencyMs,
      providerCost: r.providerCost,
      ...(r.error ? { errorCode: r.error.code } : {}),
    })),
    judges: request.judges.map((j) => j.requestedId),
    creditsUsedMicro,
  };
}

function toLogContent(request: PromptRequest, results: ModelResult[]): PromptLogContent {
  const { body } = request;
  return {
    prompt: body.prompt,
    systemPrompt: body.system_prompt,
    history: body.history,
    judgePrompt: body.judge_prompt,
    attachments: body.attachments?.map((a) => ({ name: a.name, type: a.type, bytes: Math.floor((a.base64.length * 3) / 4) })),
    outputs: results.filter((r) => r.status === 'completed').map((r) => ({ modelId: r.modelId, output: r.output })),
  };
}
