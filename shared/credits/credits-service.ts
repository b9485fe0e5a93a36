import { InsufficientCreditsError, RateLimitedError, ServiceUnavailableError } from '../errors.js';
import { ulid, ulidTime } from '../ids.js';
import { silentLog, type Log } from '../log.js';
import { CLOSED_LISTED_MAX, type Account, type AccountsRepository, type CountedRequest, type OpenRequest, type ReserveLimits } from '../storage/accounts.js';
import { AccountContendedError, ConditionFailedError } from '../storage/errors.js';
import type { LedgerEntry, LedgerRepository, SettlementEntry } from '../storage/ledger.js';
import { microToCredits } from '../pricing/micro-credits.js';
import { BoundedMap } from '../bounded-map.js';

export type { OpenRequest };

/**
 * How late an attempt of a write can reach the store: the SDK gives up on an attempt it has
 * no answer to and sends another, but the first may be on its way still, or waiting in the
 * service, and apply after the second. AWS refuses a request signed more than 15 minutes
 * before it arrives (Signature Version 4; some services 5), so none can arrive later than
 * this after it was signed; a minute more for the writers' clocks.
 */
export const LATE_ATTEMPT_MS = 16 * 60 * 1000;

/**
 * From a request's start (its ID's time), how long before no attempt of its reserve can reach
 * the store: its writes are signed within two minutes of the start (the ID's time at most 10 s
 * before the handler, then an account read and the idempotency claim where they run, then at
 * most 8 writes, each a store call of at most STORE_WORST_CALL_MS: about 90 s at worst), then
 * LATE_ATTEMPT_MS.
 */
const RESERVE_ATTEMPTS_END_MS = 2 * 60_000 + LATE_ATTEMPT_MS;

/** From a top-up's entry ID's time, how long before no attempt of its write can reach the store: signed as soon as a reserve's. */
export const TOP_UP_ATTEMPTS_END_MS = RESERVE_ATTEMPTS_END_MS;

/** A top-up named again (`--entry`) before every attempt of its first run's write is over. */
export class TopUpTooEarlyError extends Error {
  override name = 'TopUpTooEarlyError';
  constructor(
    readonly entryId: string,
    readonly runnableAt: number,
  ) {
    super(
      `Top-up ${entryId} may be run again from ${new Date(runnableAt).toISOString()} on (${TOP_UP_ATTEMPTS_END_MS / 60_000} minutes after it was first sent), once no attempt of its first write can still land; it applies once at most then`,
    );
  }
}

/**
 * A reservation that its request never closed is closed by the reconciler after this
 * long (completed with the settle entry its request wrote, else released): past the longest
 * an AWS Lambda function can run (15 minutes), so no request can still settle it, and past
 * the last attempt of its reserve, so that none can hold it again once closed (18 minutes).
 */
export const RESERVATION_TIMEOUT_MS = Math.max(15 * 60 * 1000, RESERVE_ATTEMPTS_END_MS);

/**
 * An entry left unposted in an account (a top-up, an opening balance) is posted by the
 * reconciler once it is this old, never sooner: by then no attempt of the write that added
 * it can still arrive (the admin CLI signs its attempts up to about 70 s after the entry's
 * time: LATE_ATTEMPT_MS alone had left a late one about 10 s after the entry was dropped).
 * An attempt of a write that landed, arriving after the entry was posted and dropped from
 * the item, would apply it again.
 * The entry's time, and the time the reconciler judges ages by, is the store's clock where
 * the writer may be an operator's machine (the admin CLI dates by `storeNow`, the time of its
 * store's answers, to about a second), and the Lambda's or the host's clock elsewhere.
 */
export const POSTING_DELAY_MS = TOP_UP_ATTEMPTS_END_MS;

/** How long a closed request stays in its account's `closedRequests`, from its ID's time: till no attempt of its reserve can arrive. */
export const CLOSED_KEPT_MS = RESERVE_ATTEMPTS_END_MS;

/** What a reconcile run did: accounts read, entries posted, reservations completed or released, accounts whose writes failed. */
export type ReconcileOutcome = {
  accounts: number;
  posted: number;
  completed: number;
  released: number;
  failed: number;
  /** The accounts whose writes failed, where any did (the first FAILED_ACCOUNTS_NAMED). */
  failedAccounts?: string[];
};

/** How many of a reconcile run's failed accounts its outcome names. */
const FAILED_ACCOUNTS_NAMED = 20;

/** What a request costing `costMicro` is charged: its cost, never more than its reservation (and never less than 0). */
export function chargeableMicro(open: OpenRequest, costMicro: number): number {
  return Math.max(0, Math.min(costMicro, open.reservation.amountMicro));
}

/** The log line of a settle whose cost was above its reservation (infra/stack/alarms.ts filters on it). */
export const UNCOLLECTED_LOG_MESSAGE = 'Cost above the reservation left uncollected';

/**
 * The reconciler's line for a reservation it released, its request gone without a settle (its
 * invocation timed out or crashed): what its models used, if they ran, is charged nothing. An
 * alarm sums its held amount (`amountMicro`, the most that went uncharged).
 */
export const RELEASED_LOG_MESSAGE = 'Released an abandoned reservation';

/** A top-up run again (`--entry`) whose entry was applied as something else: another amount, or not a top-up. Nothing applied. */
export class TopUpEntryTakenError extends Error {
  override name = 'TopUpEntryTakenError';
  constructor(entry: LedgerEntry, applied: LedgerEntry) {
    super(
      applied.kind === 'topup'
        ? `Entry ${entry.entryId} was applied already, as a top-up of ${microToCredits(applied.amountMicro)} credits, not ${microToCredits(entry.amountMicro)}: nothing applied. Run it again with --credits ${microToCredits(applied.amountMicro)} to check it, or without --entry for a new top-up`
        : `Entry ${entry.entryId} was applied already, as a ${applied.kind}: nothing applied`,
    );
  }
}

/** The balance, as `account` was read, after a top-up already applied: refused where the entry applied is not this top-up (another amount, or no top-up). */
function appliedBalance(applied: LedgerEntry, entry: LedgerEntry, account: Account | undefined): number {
  if (applied.kind !== 'topup' || applied.amountMicro !== entry.amountMicro) throw new TopUpEntryTakenError(entry, applied);
  if (!account) throw new ConditionFailedError(`Entry ${entry.entryId} was applied, but account ${entry.accountId} is gone`);
  return account.balanceMicro;
}

/** A top-up's balance after it, and whether the run applied it or found it applied (a run again of one whose first write had landed). */
export interface TopUpOutcome {
  balanceMicro: number;
  applied: 'now' | 'already';
}

/** When a top-up named by `entryId` may be run again: once no attempt of its first run's write can still land. */
export function topUpRunnableAt(entryId: string): number {
  return ulidTime(entryId) + TOP_UP_ATTEMPTS_END_MS;
}

/** The settle entries whose loss this process has logged (a request settles once; a second settle of it logs nothing). */
const LOSSES_LOGGED_KEPT = 10_000;

/**
 * The money path on single-item conditional writes: reserve before a request runs,
 * settle from observed cost afterwards, post every change to the append-only ledger,
 * and let the reconciler heal what a crash left half done.
 */
export class CreditsService {
  private readonly lossesLogged = new BoundedMap<string, true>(LOSSES_LOGGED_KEPT);

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly ledger: LedgerRepository,
    private readonly log: Log = silentLog,
    private readonly now: () => number = Date.now,
  ) {}

  async openAccount(input: { balanceMicro: number; zeroDataRetention?: boolean; rateLimitRpm?: number; accountId?: string }): Promise<Account> {
    const accountId = input.accountId ?? `acct_${ulid().toLowerCase()}`;
    const opening = this.topUpEntry(accountId, input.balanceMicro);
    const account = await this.accounts.create({ opening, zeroDataRetention: input.zeroDataRetention, rateLimitRpm: input.rateLimitRpm });
    await this.post([opening]);
    return account;
  }

  /**
   * Adds to the balance and puts the entry in the ledger; the entry stays in the account's
   * unposted set, marked posted, till the reconciler drops it POSTING_DELAY_MS later: dropped
   * at once, an attempt of the top-up's write that the SDK gave up on and that reached the
   * store after its retry landed would find the entry gone, and add it again.
   * `entryId` names the entry (the CLI names it in its answer, and in its error where the write went unanswered); `again`: a top-up of that
   * name run again, which applies it once at most (its first run's write unanswered). Answers
   * the balance, and whether this run applied the top-up (`now`) or found it applied (`already`).
   */
  async topUp(accountId: string, amountMicro: number, entryId?: string, again = false): Promise<TopUpOutcome> {
    const entry = this.topUpEntry(accountId, amountMicro, entryId);
    const rerun = again && entryId !== undefined;
    if (rerun) {
      // A top-up named again (its first run's write unanswered) runs once no attempt of that
      // write can still land: before, one could land after this run's check, be dropped by the
      // reconciler while an attempt of this run's write was still on its way, and that apply too.
      const runnable = topUpRunnableAt(entry.entryId);
      if (!(this.now() >= runnable)) throw new TopUpTooEarlyError(entry.entryId, runnable);
      // The account first, then the ledger: an entry leaves the account only once the ledger holds it.
      const account = await this.accounts.get(accountId);
      const applied = account?.unposted?.[entry.entryId] ?? (await this.ledger.get(accountId, entry.entryId));
      if (applied) return { balanceMicro: appliedBalance(applied, entry, account), applied: 'already' };
    }
    let balance: number;
    try {
      balance = await this.accounts.topUp(entry);
    } catch (error) {
      if (!rerun || !(error instanceof ConditionFailedError)) throw error;
      // Applied meanwhile, by another run of the same name.
      const account = await this.accounts.get(accountId);
      const held = account?.unposted?.[entry.entryId];
      if (!held) throw error;
      return { balanceMicro: appliedBalance(held, entry, account), applied: 'already' };
    }
    await this.post([entry], { keep: true });
    return { balanceMicro: balance, applied: 'now' };
  }

  /** A new top-up's entry ID, to name it before it is run (a run again with it applies it once at most). */
  topUpEntryId(): string {
    return `${ulid(this.now())}#topup`;
  }

  /**
   * Counts the request against the account's limits (a minute's requests, requests open at
   * once, where it counts `slots`: requestSlots) and holds the estimate, in one write: 429 or
   * 402 (nothing held or run) when one refuses. A request of more slots than the account may
   * hold at once counts that many: it runs alone. A 402 is counted in the minute's requests
   * (a second write): an account without credits sending without end meets its limit, and
   * past it its requests are refused before their bodies are read (refuseKnownOverLimit),
   * where each had been read, parsed and planned to be refused. A 429 is not counted.
   */
  async reserve(accountId: string, requestId: string, estimateMicro: number, limits: ReserveLimits, slots = 1): Promise<CountedRequest> {
    const open: CountedRequest = {
      accountId,
      requestId,
      reservation: { amountMicro: estimateMicro, at: this.now(), slots: Math.min(slots, limits.inFlight) },
    };
    try {
      const { reserveMayLandLate } = await busyAsUnavailable(this.accounts.reserve(open, limits));
      if (reserveMayLandLate) open.reserveMayLandLate = true;
    } catch (error) {
      if (error instanceof InsufficientCreditsError) {
        // The 402 stands whatever becomes of its count, but a window the count found full: the 429 a reserve would have had.
        await this.accounts.countRequest(accountId, open.reservation.at, limits).catch((countError: unknown) => {
          if (countError instanceof RateLimitedError) throw countError;
        });
      }
      throw error;
    }
    return open;
  }

  /**
   * Throws the 429 a request of the account would get from its reserve or count, without a
   * store call, where this process found its minute's window full at this limit or a higher
   * one (AccountsRepository.refuseKnownFull).
   */
  refuseKnownOverLimit(accountId: string, limitPerMinute: number): void {
    this.accounts.refuseKnownFull(accountId, this.now(), limitPerMinute);
  }

  /**
   * Counts a request that holds nothing (a replayed answer) in the account's minute of
   * requests, as the reserve counts one: 429 when the minute's limit is reached.
   */
  async countRequest(accountId: string, limits: Pick<ReserveLimits, 'limitPerMinute' | 'keyHash'>): Promise<void> {
    await busyAsUnavailable(this.accounts.countRequest(accountId, this.now(), limits));
  }

  /**
   * Charges what the request cost and returns the rest of the reservation, once: a
   * second settle of the same request changes nothing and reports the first charge.
   * The charge is never more than the reservation, so that concurrent requests can never
   * jointly spend more than the balance: a cost above it is charged up to it, and the entry
   * records the rest as uncollected (and `estimatedMicro`, the part estimated from text).
   *
   * What it returns is never less than what the account ends up charged, and it never
   * throws for the store. Once the settle entry is in the ledger the charge is decided:
   * should the close fail after that, the reconciler completes it. Should the entry's write
   * fail in a way that leaves unknown whether it landed, the cost is returned, `undecided`, and
   * the reconciler later completes it (that charge) or releases the reservation (nothing).
   */
  async settle(open: OpenRequest, costMicro: number, estimatedMicro = 0): Promise<{ chargedMicro: number; undecided?: true }> {
    const chargedMicro = chargeableMicro(open, costMicro);
    const settlement = {
      ...this.settlementEntry(open, 'settle', -chargedMicro),
      chargedMicro,
      ...(costMicro > chargedMicro ? { uncollectedMicro: costMicro - chargedMicro } : {}),
      ...(estimatedMicro > 0 ? { estimatedMicro: Math.min(estimatedMicro, chargedMicro) } : {}),
    };
    let applied: SettlementEntry;
    try {
      applied = await this.writeSettlement(open, settlement);
    } catch (error) {
      this.log.error('Settle entry may or may not be in the ledger; the reconciler completes or releases the reservation', {
        accountId: open.accountId,
        promptLogId: open.requestId,
        errorName: (error as Error).name,
      });
      // The operator paid its vendors whichever the reconciler does: at least this much is lost.
      this.logUncollected(settlement);
      return { chargedMicro, undecided: true };
    }
    this.logUncollected(applied);
    try {
      const listClosed = open.reserveMayLandLate === true;
      const { listed } = await this.accounts.closeReservation(applied, open.reservation, { listClosed });
      // An error line (LoggedErrors counts it): should an attempt of its reserve still land, the reconciler would charge it again.
      if (listClosed && !listed) {
        this.log.error('Closed a request without listing it: its account lists the most closed requests it may', {
          accountId: open.accountId,
          promptLogId: open.requestId,
          most: CLOSED_LISTED_MAX,
        });
      }
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) {
        this.log.warn('Settle left to the reconciler after its ledger entry was written', {
          accountId: open.accountId,
          promptLogId: open.requestId,
          errorName: (error as Error).name,
        });
      } else if (applied.kind === 'release') {
        // Only the reconciler releases, after RESERVATION_TIMEOUT_MS.
        this.log.error('Settle found the reservation released', { accountId: open.accountId, promptLogId: open.requestId });
      }
    }
    return { chargedMicro: applied.chargedMicro ?? 0 };
  }

  /**
   * Completes what requests left open: posts every unposted entry (once POSTING_DELAY_MS old), closes each
   * reservation older than the timeout with the settlement its request wrote before it
   * crashed, or else releases it, and drops closed requests' IDs kept past CLOSED_KEPT_MS. Safe to run at any time, concurrently with requests and
   * with itself. An account whose writes fail is logged and counted in `failed`, and the run
   * goes on with the next: one throttled account holds no other's credits; its work is left
   * for the next run. `posted` counts only entries the ledger took.
   */
  async reconcile(): Promise<ReconcileOutcome> {
    const now = this.now();
    const outcome: ReconcileOutcome = { accounts: 0, posted: 0, completed: 0, released: 0, failed: 0 };
    for await (const account of this.accounts.needingReconciliation()) {
      outcome.accounts++;
      let done = false;
      try {
        done = await this.reconcileAccount(account, now, outcome);
      } catch (error) {
        this.log.error('Reconcile of an account failed; the next run tries again', { accountId: account.accountId, errorName: (error as Error).name });
      }
      if (done) continue;
      outcome.failed++;
      outcome.failedAccounts ??= [];
      if (outcome.failedAccounts.length < FAILED_ACCOUNTS_NAMED) outcome.failedAccounts.push(account.accountId);
    }
    return outcome;
  }

  /** Reconciles one account, counting what it did in `outcome`; false when its entries could not be posted (logged by post). */
  private async reconcileAccount(account: Account, now: number, outcome: ReconcileOutcome): Promise<boolean> {
    // First, while the read is current: a count the open reservations do not add up to.
    const repaired = await this.accounts.repairInFlightSlots(account);
    if (repaired) this.log.warn('Set the count of requests at once to what its open reservations count', { accountId: account.accountId, ...repaired });
    const unposted = Object.values(account.unposted ?? {}).filter((entry) => now - entry.at >= POSTING_DELAY_MS);
    const took = await this.post(unposted);
    // Only those this run wrote: one marked posted is dropped, not posted again, and one another run (or the top-up) wrote meanwhile is not counted.
    if (took !== undefined) outcome.posted += took;
    for (const [requestId, reservation] of Object.entries(account.reservations ?? {})) {
      if (now - reservation.at < RESERVATION_TIMEOUT_MS) continue;
      const open = { accountId: account.accountId, requestId, reservation };
      const applied = await this.writeSettlement(open, await this.releaseEntry(open));
      try {
        // Not listed in closedRequests: no attempt of its reserve can still arrive (RESERVATION_TIMEOUT_MS).
        await this.accounts.closeReservation(applied, reservation);
      } catch (error) {
        if (error instanceof ConditionFailedError) continue; // closed meanwhile
        throw error;
      }
      if (applied.kind === 'settle') {
        outcome.completed++;
        this.log.warn('Completed a settle that its request left open', { accountId: account.accountId, promptLogId: requestId, chargedMicro: applied.chargedMicro });
      } else {
        outcome.released++;
        this.log.warn(RELEASED_LOG_MESSAGE, { accountId: account.accountId, promptLogId: requestId, amountMicro: reservation.amountMicro });
      }
    }
    // Not `age >= CLOSED_KEPT_MS`: an ID without a time (none the gateway makes) is dropped too.
    await this.accounts.dropClosed(
      account.accountId,
      [...(account.closedRequests ?? [])].filter((requestId) => !(now - ulidTime(requestId) < CLOSED_KEPT_MS)),
    );
    return took !== undefined;
  }

  /**
   * The release of a request that never settled: 0, its hold given back. Where the ledger
   * holds a `reserve` entry of the hold (posted by gateways that wrote one per request), the
   * release gives that back instead, as those gateways did.
   */
  private async releaseEntry(open: OpenRequest): Promise<SettlementEntry> {
    const posted = await this.ledger.get(open.accountId, requestEntryId(open.requestId, 'reserve'));
    if (posted) return this.requestEntry(open, 'release', open.reservation.amountMicro);
    return this.settlementEntry(open, 'release', 0);
  }

  /**
   * Write-ahead: the settlement entry (settle or release) goes to the ledger before the
   * balance changes. A request has one settlement: the first written wins, and is the one
   * returned, for the caller to apply to the balance. A failed write is tried once more:
   * should the first have landed, the second is refused and returns it.
   */
  private async writeSettlement(open: OpenRequest, settlement: SettlementEntry): Promise<SettlementEntry> {
    const applied = await this.ledger.putFirst(settlement).catch(() => this.ledger.putFirst(settlement));
    return { ...applied, requestId: open.requestId };
  }

  /**
   * The operator's loss, by the settle whose entry the ledger holds (this one, whichever of its
   * writes landed): once a request in this process (a second settle of it finds the same entry,
   * and logs nothing), and not by the reconciler, which completes what a settle wrote. Where
   * neither write of the entry answered, by the settle too, beside an error (LoggedErrors):
   * should the reconciler release the request instead, the whole cost is lost, more than the
   * line says. The stack's Uncollected alarm sums `uncollectedMicro` from this line.
   */
  private logUncollected(applied: SettlementEntry): void {
    if (applied.kind !== 'settle' || !applied.uncollectedMicro) return;
    if (this.lossesLogged.has(applied.entryId)) return;
    this.lossesLogged.set(applied.entryId, true);
    this.log.warn(UNCOLLECTED_LOG_MESSAGE, {
      accountId: applied.accountId,
      promptLogId: applied.requestId,
      costMicro: (applied.chargedMicro ?? 0) + applied.uncollectedMicro,
      reservedMicro: applied.reservedMicro,
      uncollectedMicro: applied.uncollectedMicro,
    });
  }

  async ledgerSum(accountId: string): Promise<number> {
    return (await this.ledger.list(accountId)).reduce((sum, entry) => sum + entry.amountMicro, 0);
  }

  /**
   * Copies entries of one account to the ledger, then drops them from its unposted set (`keep`:
   * marks the one entry posted there instead, for the reconciler to drop); how many the ledger
   * took from this call (not those it held already), or undefined where a write failed.
   */
  private async post(entries: readonly LedgerEntry[], { keep = false } = {}): Promise<number | undefined> {
    const [first] = entries;
    if (!first) return 0;
    let took: number;
    try {
      // One PutItem each: the ledger's role may put, never delete, and BatchWriteItem would allow both.
      // One marked posted in the account's set is in the ledger already: only dropped.
      const wrote = await Promise.all(entries.filter((entry: LedgerEntry & { posted?: true }) => entry.posted !== true).map((entry) => this.ledger.put(entry)));
      took = wrote.filter(Boolean).length;
      if (keep) await this.accounts.markPosted(first.accountId, first.entryId);
      else
        await this.accounts.dropUnposted(
          first.accountId,
          entries.map((entry) => entry.entryId),
        );
    } catch (error) {
      // The balance already changed; the reconciler posts the entries later.
      this.log.warn('Ledger posting deferred to the reconciler', { accountId: first.accountId, entries: entries.length, errorName: (error as Error).name });
      return undefined;
    }
    return took;
  }

  /** The entry that closes a reservation, settle or release, with the hold it gives back. */
  private settlementEntry(open: OpenRequest, kind: 'settle' | 'release', amountMicro: number): SettlementEntry {
    return { ...this.requestEntry(open, kind, amountMicro), reservedMicro: open.reservation.amountMicro };
  }

  /** A request's one entry, settle or release, whichever is written first (`<ULID>#settlement`). */
  private requestEntry(open: OpenRequest, kind: 'settle' | 'release', amountMicro: number): SettlementEntry {
    const { accountId, requestId } = open;
    return { accountId, entryId: requestEntryId(requestId, 'settlement'), kind, amountMicro, at: this.now(), requestId };
  }

  /** A top-up's entry (it belongs to no request), dated now (so that late attempts of its write are waited out from now), under `entryId` where it was named before. */
  private topUpEntry(accountId: string, amountMicro: number, entryId?: string): LedgerEntry {
    const at = this.now();
    return { accountId, entryId: entryId ?? `${ulid(at)}#topup`, kind: 'topup', amountMicro, at };
  }
}

/** A request's entries are named by its ID's ULID, so they sort with it. */
function requestEntryId(requestId: string, name: 'settlement' | 'reserve'): string {
  return `${requestId.replace(/^pl_/, '')}#${name}`;
}

/** An account that concurrent requests kept changing through every attempt: 503, retry shortly. */
async function busyAsUnavailable<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof AccountContendedError)
      throw new ServiceUnavailableError('The account is busy with concurrent requests; retry shortly. Nothing was charged', 1, { cause: error });
    throw error;
  }
}
