import type { ClaimCheckStore } from '../claim-check/types.js';
import { accountRateLimit, type GatewayConfig } from '../config.js';
import type { PromptRequest } from '../contract/types.js';
import { microToCredits, usdToMicroCredits, usdToMicroCreditsUp, type CreditRates } from '../credits/credits.js';
import { chargeableMicro, type CreditsService, type OpenRequest } from '../credits/credits-service.js';
import { estimateBreakdown, type EstimateBreakdown } from '../credits/estimate.js';
import { SETTLE_MARGIN_MS } from '../deadlines.js';
import { planRequest, type RequestPlan } from '../plan/request-plan.js';
import { AccountNotFoundError, InsufficientCreditsError, ProviderKeysUnavailableError, type CreditsEstimate } from '../errors.js';
import type { IdempotencyService, Outcome, Running } from '../idempotency/idempotency-service.js';
import { promptLogId as newPromptLogId } from '../ids.js';
import { ServerTiming } from '../http/server-timing.js';
import { JudgingFailedError, JudgingUnavailableError } from './errors.js';
import type { JudgingStatistics } from '../judging/statistics.js';
import type { Evaluation, RankingEntry } from '../judging/types.js';
import type { JudgingWorkflow } from '../judging/workflow-types.js';
import { lazyAsync } from '../lazy.js';
import type { Log } from '../log.js';
import { believedOutputTokens, boundInput, boundSearch, uncountedPdfs } from '../pricing/bound.js';
import { chargedUsd } from '../pricing/charge.js';
import type { Router } from '../providers/router.js';
import type { AccountsRepository } from '../storage/accounts.js';
import type { PromptLogsRepository } from '../storage/prompt-logs.js';
import { toPromptLog } from './prompt-log.js';
import { refusedGatewayKey, unservedCatalogModel, type ModelResult } from '../compare/result.js';
import { heldToBudget } from '../compare/output-budget.js';
import { runModels, type FanOutOptions } from '../compare/run-models.js';
import { preparingInTurns } from '../compare/turns.js';

/** The success body (spec 2.10). */
export interface PromptResponse {
  promptLogId: string;
  results: ModelResult[];
  evaluations: Evaluation[];
  /** Only when `judges` was given: the models by Bradley-Terry strength, with intervals, across the evaluations. */
  ranking?: RankingEntry[];
  /** Only when `judges` was given: how each judge behaved, and how far the judges agree. */
  judgeStatistics?: JudgingStatistics;
  creditsUsed: number;
}

export interface PromptServiceDeps {
  config: Pick<GatewayConfig, 'creditsPerUsd' | 'markup' | 'requestDeadlineMs' | 'rateLimitRpm' | 'maxInFlight'>;
  accounts: AccountsRepository;
  credits: CreditsService;
  idempotency: IdempotencyService<PromptResponse>;
  promptLogs: PromptLogsRepository;
  /** The router, or (the first request of a Lambda container) its promise while the provider keys are read: GatewayOptions.withKeys. */
  router: () => Router | Promise<Router>;
  /** The judge workflow and its claim-check store; without them judged requests are refused (501). */
  judging?: { workflow: JudgingWorkflow; claimCheck: ClaimCheckStore };
  log: Log;
}

const loadJudging = lazyAsync(() => import('../judging/judged-comparison.js'));

/** What an event-stream caller hears while the models run (unjudged requests), and its disconnect. */
export type Streaming = Pick<FanOutOptions, 'onDelta' | 'onResult' | 'signal'>;

/** A request that passed every refusal: its answer to come, or a replay's stored one. */
export interface Started {
  replayed: boolean;
  answer: Promise<PromptResponse>;
  /**
   * The writes that follow the answer (settle, ledger, prompt log): started once the answer
   * is in hand, on the event loop's next turn (so that the answer is written first), and
   * resolved once they are done. Whoever sends the answer awaits it after sending, so that
   * the writes end within the invocation. It never rejects: each failure is logged and left
   * to the reconciler or a retry. Resolves with the micro-credits the settle charged the
   * account (what the answer's `creditsUsed` says, unless the settle found otherwise); undefined
   * where it did not settle (a failure, left to the reconciler). A replay and a failed run have none.
   */
  finished: Promise<number | undefined>;
  /**
   * Says the answer could not be sent (it could not even be serialised: outputs too large
   * for one string): what follows it then releases the reservation instead of charging, as
   * the error answer sent instead says. Called before `finished` starts (the same turn of
   * the event loop as the answer), it takes effect; a replay has nothing to withdraw.
   */
  withdraw(): void;
}

export interface SubmitOptions extends Streaming {
  idempotencyKey?: string;
  receivedAt?: number;
  /** The account settings the authorizer cached with its decision; read from the store when absent. */
  account?: { zeroDataRetention: boolean; rateLimitRpm?: number };
  /** The SHA-256 of the key the authorizer let in: the reserve refuses it once revoked, whatever the authorizer cached. */
  keyHash?: string;
  /** Times the phases (`idempotency`, `reserve`, `keys`, `models` or `judging`) for the answer's Server-Timing header. */
  timing?: ServerTiming;
  /** The HTTP request's ID (API Gateway's, the answer's `x-request-id`), for the log line of a prompt that ran. */
  requestId?: string;
}

/** One request as its run sees it: step 1's result. */
interface RunContext {
  accountId: string;
  request: PromptRequest;
  promptLogId: string;
  zeroDataRetention: boolean;
  rateLimitRpm: number;
  keyHash?: string;
  receivedAt: number;
  timing: ServerTiming;
  requestId?: string;
}

/** Resolves on the event loop's next turn: once the answer, already in hand, has been written. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The most the models' request bodies may come to together (RequestPlan.bodyBytes) for their
 * calls to be prepared while the reserve is in flight. Past it, they are prepared once it
 * holds: a tenant over its rate limit or its balance must not have the gateway serialise 32
 * copies of a 5 MiB prompt for nothing (about a quarter of a second of the thread every
 * tenant of a local host shares, and of a Lambda's billed time), while a small request's
 * preparation, under a millisecond, still hides behind the reserve.
 */
export const PREPARE_EARLY_BYTES = 1 << 20;

/**
 * The most content (serialised: prompt, system prompt, history, outputs…) the prompt log
 * keeps of a request charged nothing, whose every model failed before its vendor billed it
 * (a context window overrun is refused free) or was cancelled unsent. Kept whole, a
 * tenant could have the operator store 5 MiB a request, with no expiry and about 10,000
 * write units each, for nothing; a request that pays for any model pays for its input.
 * About three times what a typical request's log writes.
 */
export const UNCHARGED_CONTENT_BYTES = 32 * 1024;

/**
 * One prompt, in the steps of docs/architecture.md: resolve (the account and its
 * settings), plan (every call, built once) and estimate, reserve (rate limit and
 * reservation in one write), run the models (or the judge workflow), answer; then, once
 * the answer is on its way, settle and log. With an `Idempotency-Key`, the unit from the
 * plan on runs under its record (IdempotencyService.run).
 */
export class PromptService {
  constructor(private readonly deps: PromptServiceDeps) {}

  /** The answer, once the models (and judges) have answered and what follows the answer is written. */
  async submit(accountId: string, request: PromptRequest, options: SubmitOptions = {}): Promise<PromptResponse> {
    const started = await this.start(accountId, request, options);
    const response = await started.answer;
    await started.finished;
    return response;
  }

  /**
   * Everything that may refuse the request (account, idempotency, rate limit, reserve),
   * then the run, started: resolves once the reservation holds (or with a replay's stored
   * answer), so that an event-stream caller commits to its 200 only then, and hears
   * `onDelta` / `onResult` from there on. `answer` rejects should the run itself fail.
   */
  async start(accountId: string, request: PromptRequest, options: SubmitOptions = {}): Promise<Started> {
    const context = await this.resolve(accountId, request, options);
    const work = () => this.planReserveAndRun(context, options);
    if (options.idempotencyKey === undefined) return this.answering(await work(), context.promptLogId);
    const { promptLogId, receivedAt, zeroDataRetention, timing, rateLimitRpm, keyHash } = context;
    const run = await this.deps.idempotency.run(
      {
        accountId,
        key: options.idempotencyKey,
        body: request.body,
        promptLogId,
        receivedAt,
        zeroDataRetention,
        measure: (phase, claim) => timing.measure(phase, claim),
        // A replay runs nothing and is charged nothing, but counts in the account's rate limit.
        admitReplay: () => this.deps.credits.countRequest(accountId, { limitPerMinute: rateLimitRpm, ...(keyHash === undefined ? {} : { keyHash }) }),
      },
      work,
    );
    if (!run.replayed) return this.answering(run, promptLogId);
    // Nothing ran and nothing was charged: the stored answer, and nothing to write after it. Its
    // line, as every answer has one (a replay's request ID had been in no line).
    this.deps.log.info('Prompt replayed', {
      ...(context.requestId === undefined ? {} : { requestId: context.requestId }),
      promptLogId: run.response.promptLogId,
      accountId,
    });
    return { replayed: true, answer: Promise.resolve(run.response), finished: Promise.resolve(undefined), withdraw: () => undefined };
  }

  /** Step 1, resolve: the account's settings (cached by the authorizer, else read), and what the request runs as. */
  private async resolve(accountId: string, request: PromptRequest, options: SubmitOptions): Promise<RunContext> {
    const receivedAt = options.receivedAt ?? Date.now();
    const account = options.account ?? (await this.deps.accounts.get(accountId));
    if (!account) throw new AccountNotFoundError();
    if (request.judges.length > 0 && !this.deps.judging) throw new JudgingUnavailableError();
    return {
      accountId,
      request,
      promptLogId: newPromptLogId(receivedAt),
      zeroDataRetention: request.body.zero_data_retention ?? account.zeroDataRetention,
      rateLimitRpm: accountRateLimit(account, this.deps.config),
      ...(options.keyHash === undefined ? {} : { keyHash: options.keyHash }),
      ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
      receivedAt,
      timing: options.timing ?? new ServerTiming(),
    };
  }

  /**
   * Steps 2 to 4: plan (and estimate), reserve, and the models sent once the reserve holds
   * (a judged request's workflow starts after it). Resolves once the reservation holds,
   * with the answer to come.
   */
  private async planReserveAndRun(context: RunContext, streaming: Streaming): Promise<Running<PromptResponse>> {
    const { accountId, request, promptLogId, receivedAt, rateLimitRpm, keyHash, timing } = context;
    const { config, credits } = this.deps;
    const plan = planRequest(request);
    const estimate = estimateBreakdown(plan, config);
    const reserving = timing.measure('reserve', () =>
      credits
        .reserve(accountId, promptLogId, estimate.micro, { limitPerMinute: rateLimitRpm, inFlight: config.maxInFlight, keyHash }, requestSlots(request))
        .catch((error: unknown) => {
          // A 402 says what the estimate is made of, so that the caller sees what to lower.
          throw error instanceof InsufficientCreditsError ? new InsufficientCreditsError(error.estimatedCreditsRequired, error.balance, inCredits(estimate, plan, config)) : error;
        }),
    );
    const deadlineAt = receivedAt + config.requestDeadlineMs - SETTLE_MARGIN_MS;
    // A judged request calls no model here: its workflow's functions do. The read of the
    // provider keys (a Lambda container's first request) is timed as `keys`, beside `reserve`.
    const routing = request.judges.length > 0 ? undefined : this.deps.router();
    const router = routing instanceof Promise ? timing.measure('keys', () => routing) : routing;
    const models = router === undefined ? undefined : this.runModelsOnceReserved(plan, router, reserving, deadlineAt, streaming, accountId);
    // Should the reserve be refused, nothing awaits these results: a failure of theirs is dropped with them.
    models?.catch(() => undefined);
    const open = router instanceof Promise ? await reservedOnceKeyed(reserving, router, credits) : await reserving;
    return { answered: this.answer(context, open, models, deadlineAt) };
  }

  /** What a run started gives its caller: the answer, and the writes that follow it. */
  private answering({ answered }: Running<PromptResponse>, promptLogId: string): Started {
    const answer = answered.then(({ response }) => response);
    let sent = true;
    const finished = answered.then(
      async ({ finish }) => {
        await nextTurn();
        return finish(sent).catch((error: unknown): undefined => {
          this.deps.log.error('Finishing after the answer failed', { promptLogId, errorName: (error as Error).name });
          return undefined;
        });
      },
      // A failed run has nothing to finish: its failure is the answer's.
      () => undefined,
    );
    return {
      replayed: false,
      answer,
      finished,
      withdraw: () => {
        sent = false;
      },
    };
  }

  /**
   * Steps 4 to 7: the models' results (or the judge workflow's), the charge and the answer;
   * and what follows the answer: settle, then the prompt log.
   */
  private async answer(context: RunContext, open: OpenRequest, models: Promise<ModelResult[]> | undefined, deadlineAt: number): Promise<Outcome<PromptResponse>> {
    const { accountId, request, promptLogId, zeroDataRetention, receivedAt, timing, requestId } = context;
    const { config, log } = this.deps;
    const judged = models === undefined;
    const { results, evaluations, ranking, judgeStatistics, discardClaims } = judged
      ? await timing.measure('judging', () => this.judge(open, request, promptLogId, deadlineAt))
      : { results: await timing.measure('models', () => models!), evaluations: [], ranking: undefined, judgeStatistics: undefined, discardClaims: undefined };
    // Judge calls are charged like model calls, each what it used (a call refused by its vendor
    // nothing; one whose answer held no verdict, what its vendor billed); never more than the
    // reservation (a cost above it is left uncollected, see CreditsService.settle).
    const cost = chargedUsd([...results, ...evaluations.flatMap((evaluation) => evaluation.orders)]);
    const costMicro = usdToMicroCredits(cost.usd, config);
    const estimatedMicro = usdToMicroCredits(cost.estimatedUsd, config);
    const chargeMicro = chargeableMicro(open, costMicro);
    // The answer does not wait for the store: the settle and the prompt log, side by side, follow it
    // (and a judged request's claim-check objects go then, before the invocation ends).
    const finish = async (charge = true): Promise<number | undefined> => {
      const logged = { promptLogId, accountId, request, results, evaluations, ranking, chargedMicro: charge ? chargeMicro : 0, zeroDataRetention, receivedAt };
      const [{ chargedMicro, undecided }] = await Promise.all([
        this.deps.credits.settle(open, charge ? costMicro : 0, charge ? estimatedMicro : 0),
        this.writePromptLog(logged),
        discardClaims?.(),
      ]);
      if (chargedMicro !== chargeMicro) log.warn('Charged differs from the credits in the answer', { promptLogId, chargedMicro, chargeMicro });
      // The prompt log says what the account paid (the reconciler released the request first, say):
      // written again with it, its content kept as the first write kept it (its pieces written over).
      if (chargedMicro !== logged.chargedMicro) await this.writePromptLog({ ...logged, chargedMicro }, logged.chargedMicro);
      log.info('Prompt completed', {
        ...(requestId === undefined ? {} : { requestId }),
        promptLogId,
        accountId,
        models: results.map((r) => ({ modelId: r.modelId, status: r.status, latencyMs: r.latencyMs, errorCode: r.error?.code, upstreamStatus: r.error?.upstreamStatus })),
        ...(judged ? { evaluations: evaluations.length, evaluationsFailed: evaluations.filter((e) => e.status === 'failed').length } : {}),
        // Undecided, the reconciler charges it or nothing: no figure said as charged.
        ...(undecided ? { chargeUndecided: true } : { creditsUsedMicro: chargedMicro }),
      });
      logRefusedKeys(log, request, results, evaluations, { requestId, promptLogId });
      // Undecided (its entry's write unanswered), the charge is the reconciler's to make: none said.
      return undecided ? undefined : chargedMicro;
    };
    const response = {
      promptLogId,
      results,
      evaluations,
      ...(ranking ? { ranking } : {}),
      ...(judgeStatistics ? { judgeStatistics } : {}),
      creditsUsed: microToCredits(chargeMicro),
    };
    // Replayed under an Idempotency-Key only where it charged something or holds an answer: one
    // whose every model was cancelled before its vendor, or failed, for free frees its key.
    const replayable = chargeMicro > 0 || results.some((result) => result.status === 'completed');
    return { response, finish, replayable };
  }

  /**
   * The plan's model calls, prepared while the reserve is in flight (once the router is
   * there) and sent once it holds (the fan-out's `ready`): nothing reaches a provider
   * unreserved; a refused reserve sends nothing (and these results are dropped).
   */
  private async runModelsOnceReserved(
    plan: RequestPlan,
    router: Router | Promise<Router>,
    reserving: Promise<OpenRequest>,
    deadlineAt: number,
    streaming: Streaming,
    accountId: string,
  ): Promise<ModelResult[]> {
    const { onDelta, onResult, signal } = streaming;
    // Prepared while the reserve is in flight, but for a large request: refused, it would have serialised them all for nothing.
    const prepareOnceReady = plan.bodyBytes > PREPARE_EARLY_BYTES;
    const run = (route: Router) => runModels(plan.calls, { route, deadlineAt, ready: reserving, prepareOnceReady, onDelta, onResult, signal, accountId });
    return router instanceof Promise ? router.then(run) : run(router);
  }

  /**
   * The comparison through the judge workflow (its code loads with the first judged
   * request), and the deletion of its claim-check objects, for `finish` to run after the
   * answer. Should the workflow itself fail, the reservation is released, beside that
   * deletion (the release never waits for S3), and nothing is charged.
   */
  private async judge(open: OpenRequest, request: PromptRequest, promptLogId: string, deadlineAt: number) {
    const judging = this.deps.judging;
    if (!judging) throw new JudgingUnavailableError();
    let discardClaims: (() => Promise<void>) | undefined;
    let keysUnread: ((error: unknown) => boolean) | undefined;
    try {
      const { startJudgedComparison, KeysUnreadError } = await loadJudging();
      keysUnread = (error) => error instanceof KeysUnreadError;
      const run = startJudgedComparison(request, { requestId: promptLogId, deadlineAt, accountId: open.accountId }, { ...judging, log: this.deps.log, turns: preparingInTurns });
      discardClaims = run.discardClaims;
      const comparison = await run.comparison;
      // Each model ran in a task of its own: their outputs are held to the request's budget here
      // (here, not in the judging chunk, which would share the budget's code with this bundle
      // through a chunk of its own: one more file at every cold start).
      return { ...comparison, results: heldToBudget(comparison.results), discardClaims };
    } catch (error) {
      await Promise.all([this.deps.credits.settle(open, 0), discardClaims?.()]);
      // Its tasks could not read the provider keys (each logged why): 503, as an unjudged request.
      if (keysUnread?.(error)) throw new ProviderKeysUnavailableError({ cause: error });
      this.deps.log.error('Judging workflow failed', { promptLogId, errorName: (error as Error).name, status: (error as { status?: unknown }).status });
      throw new JudgingFailedError(error);
    }
  }

  /** Builds the prompt log and writes it, its content held to UNCHARGED_CONTENT_BYTES where `contentChargedMicro` is 0; a failure is logged, never thrown. */
  private async writePromptLog(input: Parameters<typeof toPromptLog>[0], contentChargedMicro = input.chargedMicro): Promise<void> {
    try {
      const { meta, content } = toPromptLog(input);
      await this.deps.promptLogs.put(meta, content, contentChargedMicro === 0 ? UNCHARGED_CONTENT_BYTES : undefined);
    } catch (error) {
      // `promptLogs.putContent`: the record was written, some of its content was not.
      const { operation } = error as { operation?: unknown };
      this.deps.log.error('Prompt log not written whole', {
        promptLogId: input.promptLogId,
        errorName: (error as Error).name,
        ...(typeof operation === 'string' ? { operation } : {}),
      });
    }
  }
}

/**
 * The reservation of a request that reads the provider keys (a Lambda container's first),
 * once that read has ended too. A refused reserve answers after the read, so that no read
 * outlives its invocation (a frozen Lambda would resume it on a dead connection for the
 * next request); a failed read gives the reservation back, no model having been called,
 * and is the request's failure.
 */
async function reservedOnceKeyed(reserving: Promise<OpenRequest>, router: Promise<Router>, credits: CreditsService): Promise<OpenRequest> {
  const [reserved, routed] = await Promise.allSettled([reserving, router]);
  if (reserved.status === 'rejected') throw reserved.reason;
  if (routed.status === 'rejected') {
    await credits.settle(reserved.value, 0);
    throw routed.reason;
  }
  return reserved.value;
}

/** The log line of a failure only the operator can mend (its level and message), or none. */
function operatorLine(error: NonNullable<ModelResult['error']>): [level: 'warn' | 'error', message: string] | undefined {
  if (error.code === 'provider_not_configured') return ['warn', 'No key is configured for the vendor of a requested model'];
  if (unservedCatalogModel(error)) return ['error', 'A vendor does not serve a catalog model'];
  if (refusedGatewayKey(error)) return ['error', "A vendor refused the gateway's key"];
  return undefined;
}

/**
 * The models whose vendor refused the operator's own key (401 or 403), or does not serve the
 * model the catalog calls it by (404, or Groq's 400 "has been decommissioned": a model its
 * vendor retired or renamed before the catalog did): an error line each (the deployment's LoggedErrors alarm counts them), as every call to
 * that model fails until the operator acts, while a caller's bad input fails one call (model
 * IDs are the catalog's, so no caller names a model its vendor does not know). A vendor left
 * without a key is a warning: a deployment may leave vendors out on purpose, and any caller
 * could then raise the alarm at will by asking for their models.
 */
export function logRefusedKeys(
  log: Log,
  request: PromptRequest,
  results: readonly ModelResult[],
  evaluations: readonly Evaluation[],
  ids: { requestId?: string; promptLogId: string },
): void {
  let logged: Set<string> | undefined;
  const check = (modelId: string, error: ModelResult['error']) => {
    if (!error || logged?.has(modelId)) return;
    const line = operatorLine(error);
    if (!line) return;
    logged ??= new Set();
    logged.add(modelId);
    log[line[0]](line[1], { ...ids, modelId, errorCode: error.code, ...(error.upstreamStatus === undefined ? {} : { upstreamStatus: error.upstreamStatus }) });
  };
  // A Gemini cachedContent names a resource the caller chose: its 403 or 404 may be the caller's doing, not the key's or the catalog's.
  results.forEach((result, index) => {
    if (request.models[index]?.tuning.cachedContent === undefined) check(result.modelId, result.error);
  });
  for (const evaluation of evaluations) for (const order of evaluation.orders) check(evaluation.judgeModelId, order.error);
}

/** A refused request's estimate as its 402 shows it: read only then (its input parts cost a price computation a model). */
function inCredits(estimate: EstimateBreakdown, plan: RequestPlan, rates: CreditRates): CreditsEstimate {
  const pdfs = uncountedPdfs(plan.calls[0]?.call.attachments ?? []);
  return {
    models: estimate.models.map(({ modelId, micro }, index) => {
      const { call, bound } = plan.calls[index]!;
      const { usd, cachedContentTokens } = boundInput(call, bound);
      return {
        modelId,
        credits: microToCredits(micro),
        inputTokens: bound.inputTokens,
        ...(cachedContentTokens > 0 ? { cachedContentTokens } : {}),
        inputCredits: microToCredits(usdToMicroCreditsUp(usd, rates)),
        // What its credits hold: the limit sent and the tolerance a usage block is believed within (the limit alone had been shown, 16 tokens short of the price).
        outputTokens: believedOutputTokens(call),
        ...(bound.searchQueries > 0 ? { searchQueries: bound.searchQueries, searchCredits: microToCredits(usdToMicroCreditsUp(boundSearch(call, bound), rates)) } : {}),
      };
    }),
    judgeCalls: { calls: estimate.judgeCalls.calls, credits: microToCredits(estimate.judgeCalls.micro) },
    ...(pdfs.length > 0 ? { uncountedPdfs: pdfs } : {}),
  };
}

/**
 * What a request counts among its account's requests at once (MAX_REQUESTS_IN_FLIGHT): the
 * function instances it holds at once. 1; a judged request also runs a generate task a model,
 * then a judge task a judge, each an instance in AWS, so 1 and the larger of the two.
 */
export function requestSlots(request: PromptRequest): number {
  return request.judges.length === 0 ? 1 : 1 + Math.max(request.models.length, request.judges.length);
}
