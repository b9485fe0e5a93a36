import type { GatewayConfig } from '../config.js';
import type { PromptRequest } from '../contract/types.js';
import { chargeUpTo } from '../credits/charge.js';
import { microToCredits, usdToMicroCredits } from '../credits/credits.js';
import { estimateMicroCredits } from '../credits/estimate.js';
import { AccountNotFoundError, GatewayError, InsufficientCreditsError } from '../errors.js';
import { promptLogId as newPromptLogId } from '../ids.js';
import type { Log } from '../log.js';
import type { Router } from '../providers/router.js';
import type { AccountsRepository } from '../storage/accounts.js';
import type { PromptLogContent, PromptLogMeta, PromptLogsRepository } from '../storage/prompt-logs.js';
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
  config: Pick<GatewayConfig, 'creditsPerUsd' | 'markup' | 'requestDeadlineMs'>;
  accounts: AccountsRepository;
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

/** Time kept back from the deadline for charging and logging after the models answered. */
const SETTLE_MARGIN_MS = 1_000;

/** The request path of DESIGN.md from step 3 on: account, estimate, run, charge, log, answer. */
export class PromptService {
  constructor(private readonly deps: PromptServiceDeps) {}

  async submit(accountId: string, request: PromptRequest, receivedAt = Date.now()): Promise<PromptResponse> {
    const { config, accounts, log } = this.deps;
    const promptLogId = newPromptLogId(receivedAt);
    const account = await accounts.get(accountId);
    if (!account) throw new AccountNotFoundError();
    if (request.judges.length > 0) throw new JudgingUnavailableError();

    const estimateMicro = estimateMicroCredits(request, config);
    if (account.balanceMicro < estimateMicro) {
      throw new InsufficientCreditsError(microToCredits(estimateMicro), microToCredits(account.balanceMicro));
    }

    const results = await runModels(request, {
      route: this.deps.route,
      deadlineAt: receivedAt + config.requestDeadlineMs - SETTLE_MARGIN_MS,
    });

    const costUsd = results.reduce((sum, result) => sum + (result.status === 'completed' ? (result.providerCost ?? 0) : 0), 0);
    const { chargedMicro, shortfallMicro } = await chargeUpTo(accounts, accountId, usdToMicroCredits(costUsd, config));
    if (shortfallMicro > 0) log.warn('Balance did not cover the cost', { promptLogId, accountId, shortfallMicro });

    const zeroDataRetention = request.body.zero_data_retention ?? account.zeroDataRetention;
    await this.deps.promptLogs.put(
      toLogMeta(promptLogId, accountId, request, results, chargedMicro, zeroDataRetention, receivedAt),
      zeroDataRetention ? undefined : toLogContent(request, results),
    );
    log.info('Prompt completed', {
      promptLogId,
      accountId,
      models: results.map((r) => ({ modelId: r.modelId, status: r.status, latencyMs: r.latencyMs, errorCode: r.error?.code })),
      creditsUsedMicro: chargedMicro,
    });
    return { promptLogId, results, evaluations: [], creditsUsed: microToCredits(chargedMicro) };
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
