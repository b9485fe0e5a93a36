import { AccountNotFoundError, InsufficientCreditsError, RateLimitedError, ServiceUnavailableError } from '../errors.js';
import { ulid } from '../ids.js';
import { silentLog, type Log } from '../log.js';
import { AccountContendedError, AccountMissingError, BalanceTooLowError, ConditionFailedError, RateLimitExceededError, type Account, type AccountsRepository, type Reservation } from '../storage/accounts.js';
import type { LedgerEntry, LedgerKind, LedgerRepository } from '../storage/ledger.js';
import { microToCredits } from './credits.js';

/**
 * A reservation that its request never settled is released after this long: the
 * longest an AWS Lambda function can run, so no request can still settle it.
 */
export const RESERVATION_TIMEOUT_MS = 15 * 60 * 1000;

export interface OpenRequest {
  accountId: string;
  requestId: string;
  reservation: Reservation;
}

/**
 * The money path on single-item conditional writes: reserve before a request runs,
 * settle from observed cost afterwards, post every change to the append-only ledger,
 * and let the reconciler heal what a crash left half done.
 */
export class CreditsService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly ledger: LedgerRepository,
    private readonly log: Log = silentLog,
    private readonly now: () => number = Date.now,
  ) {}

  async openAccount(input: { balanceMicro: number; zeroDataRetention?: boolean; rateLimitRpm?: number; accountId?: string }): Promise<Account> {
    const accountId = input.accountId ?? `acct_${ulid().toLowerCase()}`;
    const opening = this.entry(accountId, 'topup', input.balanceMicro);
    const account = await this.accounts.create({ opening, zeroDataRetention: input.zeroDataRetention, rateLimitRpm: input.rateLimitRpm });
    await this.post(opening);
    return account;
  }

  async topUp(accountId: string, amountMicro: number): Promise<number> {
    const entry = this.entry(accountId, 'topup', amountMicro);
    const balance = await this.accounts.topUp(entry);
    await this.post(entry);
    return balance;
  }

  /**
   * Counts the request against the account's rate limit and holds the estimate, in one
   * write: 429 or 402 (nothing counted, held or run) when either refuses.
   */
  async reserve(accountId: string, requestId: string, estimateMicro: number, limitPerMinute: number): Promise<OpenRequest> {
    const entry = { ...this.entry(accountId, 'reserve', -estimateMicro, requestId), requestId };
    try {
      await this.accounts.reserve(entry, { limitPerMinute });
    } catch (error) {
      if (error instanceof RateLimitExceededError) throw new RateLimitedError(error.retryAfterSeconds, limitPerMinute);
      if (error instanceof AccountContendedError) throw new ServiceUnavailableError('The account is busy with concurrent requests; retry shortly. Nothing was charged', 1, { cause: error });
      if (error instanceof BalanceTooLowError) {
        throw new InsufficientCreditsError(microToCredits(estimateMicro), microToCredits(error.balanceMicro));
      }
      if (error instanceof AccountMissingError) throw new AccountNotFoundError();
      throw error;
    }
    // Its ledger entry is written when the reservation closes (settle or release).
    return { accountId, requestId, reservation: { amountMicro: estimateMicro, at: entry.at } };
  }

  /**
   * Charges what the request cost and returns the rest of the reservation, once: a
   * second settle of the same request changes nothing and reports the first charge.
   * A cost above the estimate is charged in full (the balance may go below zero by that
   * overrun; the entry records it).
   */
  async settle(open: OpenRequest, chargedMicro: number): Promise<{ chargedMicro: number }> {
    const held = open.reservation.amountMicro;
    const entry: LedgerEntry & { requestId: string } = {
      ...this.entry(open.accountId, 'settle', held - chargedMicro, open.requestId),
      requestId: open.requestId,
      chargedMicro,
      ...(chargedMicro > held ? { overrunMicro: chargedMicro - held } : {}),
    };
    const reserve = this.reserveEntry(open);
    try {
      await this.accounts.closeReservation(reserve, entry, open.reservation);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const previous = await this.findEntry(open.accountId, entry.entryId);
      if (previous) return { chargedMicro: previous.chargedMicro ?? 0 };
      // Only the reconciler closes a reservation otherwise, after RESERVATION_TIMEOUT_MS.
      this.log.error('Settle found the reservation released', { accountId: open.accountId, requestId: open.requestId });
      return { chargedMicro: 0 };
    }
    await this.post(reserve, entry);
    return { chargedMicro };
  }

  /**
   * Posts every unposted entry and releases reservations older than the timeout.
   * Safe to run at any time, concurrently with requests and with itself.
   */
  async reconcile(): Promise<{ accounts: number; posted: number; released: number }> {
    const now = this.now();
    let accounts = 0;
    let posted = 0;
    let released = 0;
    for await (const account of this.accounts.needingReconciliation()) {
      accounts++;
      const unposted = Object.values(account.unposted ?? {});
      await this.post(...unposted);
      posted += unposted.length;
      for (const [requestId, reservation] of Object.entries(account.reservations ?? {})) {
        if (now - reservation.at < RESERVATION_TIMEOUT_MS) continue;
        const entry = { ...this.entry(account.accountId, 'release', reservation.amountMicro, requestId), requestId };
        const reserve = this.reserveEntry({ accountId: account.accountId, requestId, reservation });
        try {
          await this.accounts.closeReservation(reserve, entry, reservation);
        } catch (error) {
          if (error instanceof ConditionFailedError) continue; // settled meanwhile
          throw error;
        }
        await this.post(reserve, entry);
        released++;
        this.log.warn('Released an abandoned reservation', { accountId: account.accountId, requestId, amountMicro: reservation.amountMicro });
      }
    }
    return { accounts, posted, released };
  }

  async ledgerSum(accountId: string): Promise<number> {
    return (await this.ledger.list(accountId)).reduce((sum, entry) => sum + entry.amountMicro, 0);
  }

  /** Copies entries of one account to the ledger, then drops them from its unposted set. */
  private async post(...entries: LedgerEntry[]): Promise<void> {
    const [first] = entries;
    if (!first) return;
    try {
      // One PutItem each: the ledger's role may put, never delete, and BatchWriteItem would allow both.
      await Promise.all(entries.map((entry) => this.ledger.put(entry)));
      await this.accounts.markPosted(first.accountId, entries.map((entry) => entry.entryId));
    } catch (error) {
      // The balance already changed; the reconciler posts the entries later.
      this.log.warn('Ledger posting deferred to the reconciler', { accountId: first.accountId, entries: entries.length, errorName: (error as Error).name });
    }
  }

  /** The reserve entry an open reservation stands for. */
  private reserveEntry(open: OpenRequest): LedgerEntry {
    return { ...this.entryAt(open.accountId, 'reserve', -open.reservation.amountMicro, open.reservation.at, open.requestId) };
  }

  private async findEntry(accountId: string, entryId: string): Promise<LedgerEntry | undefined> {
    const account = await this.accounts.get(accountId);
    return account?.unposted?.[entryId] ?? (await this.ledger.get(accountId, entryId));
  }

  private entry(accountId: string, kind: LedgerKind, amountMicro: number, requestId?: string): LedgerEntry {
    return this.entryAt(accountId, kind, amountMicro, this.now(), requestId);
  }

  private entryAt(accountId: string, kind: LedgerKind, amountMicro: number, at: number, requestId?: string): LedgerEntry {
    // A request's entries share its ID's ULID, so they sort together and are named by it.
    const id = requestId ? requestId.replace(/^pl_/, '') : ulid(at);
    return { accountId, entryId: `${id}#${kind}`, kind, amountMicro, at, ...(requestId ? { requestId } : {}) };
  }
}
