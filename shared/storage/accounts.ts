import { BoundedMap } from '../bounded-map.js';
import { GetItemCommand, PutItemCommand, UpdateItemCommand, paginateScan, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AccountNotFoundError, InsufficientCreditsError, RateLimitedError, UnauthorizedError } from '../errors.js';
import { MAX_BALANCE_MICRO, microToCredits } from '../pricing/micro-credits.js';
import { attemptMayLandLate, fromAttributes, isConditionFailed, refusedOrRead, storeCall, storePages, toAttributes } from './dynamodb.js';
import { AccountContendedError, BalanceCeilingError, ConditionFailedError } from './errors.js';
import { balanceChangeAtClose, type LedgerEntry, type SettlementEntry } from './ledger.js';

/** An open reservation: credits held for a request that has not settled yet. */
export interface Reservation {
  amountMicro: number;
  /** Epoch ms when it was taken. */
  at: number;
  /**
   * What the request counts among the account's requests at once (`inFlightSlots`): 1, and a
   * judged request 1 more a model or judge, whichever are more (the tasks it runs at once). Absent on a reservation an
   * older gateway took, which counted nothing there.
   */
  slots?: number;
}

/** A request whose reservation is open, as the reserve took it. */
export interface OpenRequest {
  accountId: string;
  requestId: string;
  reservation: Reservation;
  /**
   * An attempt of the reserve's write ended without an answer that says it did not apply (a
   * deadline, a reset connection, a 5xx: attemptMayLandLate): it may still reach the store
   * after the request has closed, and hold its estimate again. Its close lists the request in
   * `closedRequests`, which refuses it.
   */
  reserveMayLandLate?: true;
}

/** A request as the reserve takes it now: its reservation counts its `slots` (one taken by an older gateway may not). */
export type CountedRequest = OpenRequest & { reservation: Required<Reservation> };

/** A reserve that holds: the balance after it, and whether an attempt of it may still land (OpenRequest's `reserveMayLandLate`). */
export interface Reserved {
  balanceMicro: number;
  reserveMayLandLate: boolean;
}

/**
 * The most requests `closedRequests` lists: each write of the account item costs a write unit
 * a KB of it, and the item may hold 400 KB. About 3 KB; a close past it is made unlisted
 * (CreditsService logs it). Attempts that may land late are rare, but come together when the
 * store is slow.
 */
export const CLOSED_LISTED_MAX = 100;

/**
 * What a reserve is held to beside the balance: requests a minute (the rate window), and
 * requests open at once (its reservations' `slots`, `inFlightSlots`): one tenant's slow
 * requests may not take every function instance the stage shares.
 */
export interface ReserveLimits {
  limitPerMinute: number;
  /** The most `inFlightSlots` may reach: a request whose `slots` are more runs alone (it counts this many). */
  inFlight: number;
  /**
   * The SHA-256 of the API key that made the request: refused (UnauthorizedError) once the
   * account lists it as revoked (`revokeKey`), whatever an authorizer's cached decision says.
   */
  keyHash?: string;
}

/**
 * Balances are integer micro-credits (1 credit = 1,000,000). A top-up changes the balance
 * together with its ledger entry in one single-item write: the entry goes to `unposted`,
 * is copied to the ledger and marked `posted` here, and the reconciler removes it once no
 * late attempt of the top-up's write can arrive (POSTING_DELAY_MS): removed at once, such an
 * attempt would find the entry gone and add it again. A reservation holds credits out of the
 * balance, recorded in `reservations` only; its request's one ledger entry, the settlement,
 * is written before the write that closes the reservation (write-ahead), and that write
 * gives the hold back and applies the settlement the ledger holds. So balance + open
 * holds = ledger sum + unposted entries not yet posted (pendingEntries): the ledger sum itself
 * once nothing is open or pending.
 */
export interface Account {
  accountId: string;
  balanceMicro: number;
  /** Default for `zero_data_retention` when a request does not set it. */
  zeroDataRetention: boolean;
  /** Requests per minute; unset means the gateway default (RATE_LIMIT_RPM). */
  rateLimitRpm?: number;
  createdAt: string;
  reservations: Record<string, Reservation>;
  /**
   * Requests closed whose reserve may still land late (OpenRequest's `reserveMayLandLate`): the
   * reserve refuses their IDs, so that an attempt of their write arriving late holds nothing
   * again (the reconciler would otherwise find the hold, and the request's settlement in the
   * ledger, and charge it a second time). Dropped by the reconciler once no attempt can still
   * arrive (CLOSED_KEPT_MS); at most CLOSED_LISTED_MAX. Absent when empty.
   */
  closedRequests?: Set<string>;
  /** Entries whose balance change is made; `posted` once the ledger holds them too, until the reconciler drops them. */
  unposted: Record<string, LedgerEntry & { posted?: true }>;
  /** The fixed one-minute rate window: its start (epoch ms) and the requests counted in it. */
  rateWindow?: { start: number; count: number };
  /**
   * What the open reservations count among requests at once, their `slots` added up: changed
   * in the very writes that open and close them, so it is always their sum (but for any an
   * older gateway took, which count 0). Absent until the first reserve that counts.
   */
  inFlightSlots?: number;
  /**
   * The account's keys revoked within REVOKED_KEYS_KEPT_MS (SHA-256 → when, epoch ms): an
   * authorizer's cached Allow still lets such a key in (30 s by default), and the reserve,
   * the one write before any model is called, refuses it.
   */
  revokedKeys?: Record<string, number>;
}

/** How long a revoked key stays listed on its account: past API Gateway's longest authorizer cache (1 hour). */
export const REVOKED_KEYS_KEPT_MS = 2 * 60 * 60_000;

const RATE_WINDOW_MS = 60_000;
/** Accounts whose last rate window a process remembers (AccountsRepository.reserve). */
const WINDOWS_REMEMBERED = 10_000;

/** Reserve writes tried before giving up on an account that concurrent requests keep changing. */
const RESERVE_ATTEMPTS = 8;
/** Writes of a key's revocation tried before giving up on an account whose list keeps changing. */
const REVOKE_ATTEMPTS = 3;

function rateWindowStart(at: number): number {
  return Math.floor(at / RATE_WINDOW_MS) * RATE_WINDOW_MS;
}

/**
 * The rate window's part of a write that counts a request in it: opening the minute's window
 * (no window, or an earlier one), or adding one to it while it is below the limit.
 */
function windowWrite(opensWindow: boolean, windowStart: number, limitPerMinute: number) {
  return {
    update: opensWindow ? 'rateWindow = :window' : 'rateWindow.#count = rateWindow.#count + :one',
    // The window admits at most `limitPerMinute` requests, however many arrive at once.
    condition: opensWindow ? '(attribute_not_exists(rateWindow) OR rateWindow.#start < :start)' : 'rateWindow.#start = :start AND rateWindow.#count < :limit',
    names: { '#start': 'start', ...(opensWindow ? {} : { '#count': 'count' }) },
    values: { ':start': windowStart, ...(opensWindow ? { ':window': { start: windowStart, count: 1 } } : { ':one': 1, ':limit': limitPerMinute }) },
  };
}

/**
 * After a write the window refused (or may have): the window the account holds, where a
 * function whose clock runs ahead opened it (it counts as the current one), whether it is the
 * one the next attempt counts in, and whether it is full (the refusal a 429).
 */
function windowAfterRefusal(account: Account, windowStart: number, limitPerMinute: number): { windowStart: number; current: boolean; full: boolean } {
  const window = account.rateWindow;
  const start = window && window.start > windowStart ? window.start : windowStart;
  const current = window !== undefined && window.start === start;
  return { windowStart: start, current, full: current && window.count >= limitPerMinute };
}

/** The 429 of a request at `at` in the full window that began at `start`. */
function rateLimited(start: number, at: number, limitPerMinute: number): RateLimitedError {
  return new RateLimitedError(Math.max(1, Math.ceil((start + RATE_WINDOW_MS - at) / 1000)), limitPerMinute);
}

/** A rate window an account had in this process: when it began, and the limit it was found full at (none: not seen full). */
interface SeenWindow {
  start: number;
  fullAt?: number;
}

/** What a write that counts a request in the rate window adds to it, and how its outcomes read (AccountsRepository.countedWrite). */
interface CountedWrite<T> {
  operation: 'accounts.reserve' | 'accounts.countRequest';
  /** SET actions beside the window's. */
  update?: string;
  /** ADD actions (a number added, from 0 where the attribute is missing). */
  add?: string;
  conditions?: readonly string[];
  names?: Record<string, string>;
  values?: Record<string, unknown>;
  /** Its answer, from the attributes the write returned, and whether an attempt of it may still land. */
  landed(attributes: Record<string, AttributeValue> | undefined, mayLandLate: boolean): T;
  /** A refusal the item explains before the key and the window: an answer, a throw, or undefined to read on. */
  refusedBefore?(account: Account): T | undefined;
  /** A refusal the item explains after the window's: a throw, or nothing to try again. */
  refusedAfter?(account: Account): void;
}

/** Over the store's `items` client (StoreClient): its items marshalled here. */
export class AccountsRepository {
  /**
   * The start of the rate window each account last had in this process, most recent last (at
   * most WINDOWS_REMEMBERED accounts, the least recent dropped first). A reserve in a later
   * minute opens that minute's window at once, rather than count in it, be refused and write
   * again: an account's first request of each minute takes one store round trip, not two.
   * A window seen full is refused without a store call until it ends (refuseKnownFull).
   */
  private readonly windows = new BoundedMap<string, SeenWindow>(WINDOWS_REMEMBERED);

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Creates an account whose opening balance is the amount of its first (top-up) entry. */
  async create(input: { opening: LedgerEntry; zeroDataRetention?: boolean; rateLimitRpm?: number }): Promise<Account> {
    const account: Account = {
      accountId: input.opening.accountId,
      balanceMicro: input.opening.amountMicro,
      zeroDataRetention: input.zeroDataRetention ?? false,
      rateLimitRpm: input.rateLimitRpm,
      createdAt: new Date(input.opening.at).toISOString(),
      reservations: {},
      unposted: { [input.opening.entryId]: input.opening },
    };
    try {
      await storeCall(
        'accounts.create',
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: toAttributes(account),
            // Never overwrite an account (and its balance) by reusing an ID.
            ConditionExpression: 'attribute_not_exists(accountId)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const existing = await refusedOrRead(error, () => this.get(account.accountId));
      // This very account: a write that landed but whose answer was lost, then retried.
      if (existing && holdsEntry(existing, input.opening)) return existing;
      throw new ConditionFailedError(`Account ${account.accountId} exists`, { cause: error });
    }
    return account;
  }

  async get(accountId: string): Promise<Account | undefined> {
    const { Item } = await storeCall('accounts.get', this.client.send(new GetItemCommand({ TableName: this.tableName, Key: toAttributes({ accountId }), ConsistentRead: true })));
    return fromAttributes<Account>(Item);
  }

  /** Adds a top-up entry's amount; returns the new balance. */
  async topUp(entry: LedgerEntry): Promise<number> {
    try {
      const { Attributes } = await storeCall(
        'accounts.topUp',
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: toAttributes({ accountId: entry.accountId }),
            UpdateExpression: 'SET balanceMicro = balanceMicro + :amount, unposted.#entry = :entry',
            // Top-ups go to existing accounts only, never past the ceiling; the same entry is never applied twice.
            ConditionExpression: 'attribute_exists(accountId) AND attribute_not_exists(unposted.#entry) AND balanceMicro <= :ceiling',
            ExpressionAttributeNames: { '#entry': entry.entryId },
            ExpressionAttributeValues: toAttributes({ ':amount': entry.amountMicro, ':entry': entry, ':ceiling': MAX_BALANCE_MICRO - entry.amountMicro }),
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return Number(fromAttributes(Attributes)?.balanceMicro);
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const account = await refusedOrRead(error, () => this.get(entry.accountId));
      if (!account) throw new AccountNotFoundError(entry.accountId, { cause: error });
      // This very entry: a write that landed but whose answer was lost, then retried. Its
      // caller must not hear "no account", or an operator would top up a second time.
      if (holdsEntry(account, entry)) return account.balanceMicro;
      if (account.balanceMicro > MAX_BALANCE_MICRO - entry.amountMicro) throw new BalanceCeilingError(entry.accountId, account.balanceMicro);
      // Another top-up under this entry's ID.
      if (account.unposted?.[entry.entryId] !== undefined) throw new ConditionFailedError(`Top-up entry ${entry.entryId} was already applied`, { cause: error });
      // Neither: the ceiling refused the write, and a request's hold lowered the balance before
      // the read (a store that gives no item with its refusal). Refused as the ceiling's (it had
      // been said to be applied already, nothing added); not tried again, as its attempts would
      // then be signed past the time the reconciler keeps its entry for (POSTING_DELAY_MS).
      throw new BalanceCeilingError(entry.accountId, account.balanceMicro);
    }
  }

  /**
   * Holds `reservation.amountMicro` credits for a request and counts it in the account's
   * one-minute rate window, in one conditional write: nothing changes when the window is
   * full (RateLimitedError) or the balance does not cover it (InsufficientCreditsError).
   * The first request of a minute opens a new window (a second write of the same kind).
   */
  async reserve(open: CountedRequest, rate: ReserveLimits): Promise<Reserved> {
    const { accountId, requestId, reservation } = open;
    const { amountMicro: amount, at, slots } = reservation;
    return this.countedWrite(accountId, at, rate, {
      operation: 'accounts.reserve',
      // A hold, kept in the item only: the request's one ledger entry, its settlement, is written when it closes.
      update: 'balanceMicro = balanceMicro - :amount, reservations.#request = :reservation',
      add: 'inFlightSlots :slots',
      conditions: [
        // Concurrent requests can never jointly hold more than the balance.
        'balanceMicro >= :amount',
        // One reservation per request, never held again once closed, and at most `inFlight` slots held at once
        // (a comparison with a missing attribute is false: NOT of it holds before the first count).
        'attribute_not_exists(reservations.#request)',
        'NOT contains(closedRequests, :request)',
        'NOT inFlightSlots > :slotsLeft',
      ],
      names: { '#request': requestId },
      values: { ':amount': amount, ':reservation': { amountMicro: amount, at, slots }, ':request': requestId, ':slots': slots, ':slotsLeft': rate.inFlight - slots },
      landed: (attributes, mayLandLate) => ({ balanceMicro: Number(fromAttributes(attributes)?.balanceMicro), reserveMayLandLate: mayLandLate }),
      refusedBefore: (account) => {
        const held = account.reservations?.[requestId];
        // This very reservation: a write that landed but whose answer was lost, then retried.
        if (held && held.amountMicro === amount && held.at === at) return { balanceMicro: account.balanceMicro, reserveMayLandLate: true };
        if (held) throw new ConditionFailedError(`Request ${requestId} is already reserved`);
        if (account.closedRequests?.has(requestId)) throw new ConditionFailedError(`Request ${requestId} is closed`);
        return undefined;
      },
      refusedAfter: (account) => {
        const held = account.inFlightSlots ?? 0;
        if (held + slots > rate.inFlight) {
          const running = Object.keys(account.reservations ?? {}).length;
          const requests = running === 1 ? '1 request of this account is' : `${running} requests of this account are`;
          throw new RateLimitedError(
            1,
            rate.limitPerMinute,
            `${requests} still running, counting ${held} of the ${rate.inFlight} it may run at once (a judged request counts 1, and 1 a model or judge, whichever are more)${
              slots > 1 ? `; this one counts ${slots}` : ''
            }; retry when one has ended`,
          );
        }
        if (account.balanceMicro < amount) throw new InsufficientCreditsError(microToCredits(amount), microToCredits(account.balanceMicro));
      },
    });
  }

  /**
   * Counts a request that reserves nothing (a replay of an idempotent answer) in the
   * account's rate window, as a reserve counts one: RateLimitedError when the window is full,
   * UnauthorizedError for a key the account lists as revoked. A write whose answer was lost
   * but which landed counts again when the SDK retries it: a slow store may count a replay
   * twice, never not at all.
   */
  async countRequest(accountId: string, at: number, rate: Pick<ReserveLimits, 'limitPerMinute' | 'keyHash'>): Promise<void> {
    return this.countedWrite(accountId, at, rate, { operation: 'accounts.countRequest', landed: () => undefined });
  }

  /**
   * Throws the 429 a request of the account at `at` would get from its counted write, without
   * the write, where this process found the account's window full and it has not ended: a
   * window's count only grows. Not where the limit is now above the one it was found full at
   * (raised since). So that an account past its limit costs no store call, nor the reading of
   * its request's body (functions/api-handler.ts).
   */
  refuseKnownFull(accountId: string, at: number, limitPerMinute: number): void {
    const seen = this.windows.get(accountId);
    if (seen?.fullAt !== undefined && limitPerMinute <= seen.fullAt && at < seen.start + RATE_WINDOW_MS) throw rateLimited(seen.start, at, limitPerMinute);
  }

  /**
   * The write that counts a request in the account's one-minute rate window, with what `write`
   * adds to it (its update, conditions, names and values), in one conditional UpdateItem; a
   * key the account lists as revoked is refused (a key revoked since the authorizer cached its
   * decision spends nothing). It counts in the minute's window, unless this process last saw
   * the account in an earlier minute: then no request here has opened this one yet, and this
   * one most likely opens it (should another process have, the refusal says so and the next
   * attempt counts in it). A refusal is read from the item: `refusedBefore` may answer or
   * throw first, then a revoked key is a 401 and a full window a 429, then `refusedAfter`
   * may throw; where nothing in the item refuses the write (the window was not the one the
   * attempt assumed, or concurrent requests changed the item), it is tried again.
   */
  private async countedWrite<T>(accountId: string, at: number, rate: Pick<ReserveLimits, 'limitPerMinute' | 'keyHash'>, write: CountedWrite<T>): Promise<T> {
    let windowStart = rateWindowStart(at);
    const seen = this.windows.get(accountId)?.start;
    let opensWindow = seen !== undefined && seen < windowStart;
    // Whether an attempt of any of these writes may still land, refused writes included:
    // an attempt of an earlier write may land once the window it assumed is the current one.
    let mayLandLate = false;
    const { keyHash } = rate;
    for (let attempt = 1; attempt <= RESERVE_ATTEMPTS; attempt++) {
      const window = windowWrite(opensWindow, windowStart, rate.limitPerMinute);
      const command = new UpdateItemCommand({
        TableName: this.tableName,
        Key: toAttributes({ accountId }),
        UpdateExpression: `SET ${write.update ? `${write.update}, ` : ''}${window.update}${write.add ? ` ADD ${write.add}` : ''}`,
        ConditionExpression: [
          'attribute_exists(accountId)',
          ...(write.conditions ?? []),
          window.condition,
          ...(keyHash === undefined ? [] : ['attribute_not_exists(revokedKeys.#key)']),
        ].join(' AND '),
        ExpressionAttributeNames: { ...write.names, ...window.names, ...(keyHash === undefined ? {} : { '#key': keyHash }) },
        ExpressionAttributeValues: toAttributes({ ...write.values, ...window.values }),
        ...(write.update ? { ReturnValues: 'UPDATED_NEW' as const } : {}),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      try {
        const written = await storeCall(write.operation, this.client.send(command));
        this.windows.set(accountId, { start: windowStart });
        return write.landed(written.Attributes, mayLandLate || attemptMayLandLate(command.input));
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
        mayLandLate ||= attemptMayLandLate(command.input);
        const account = await refusedOrRead(error, () => this.get(accountId));
        if (!account) throw new AccountNotFoundError(accountId);
        const answered = write.refusedBefore?.(account);
        if (answered !== undefined) return answered;
        if (keyHash !== undefined && account.revokedKeys?.[keyHash] !== undefined) throw new UnauthorizedError();
        const counted = windowAfterRefusal(account, windowStart, rate.limitPerMinute);
        if (counted.full) {
          this.windows.set(accountId, { start: counted.windowStart, fullAt: rate.limitPerMinute });
          throw rateLimited(counted.windowStart, at, rate.limitPerMinute);
        }
        windowStart = counted.windowStart;
        write.refusedAfter?.(account);
        opensWindow = !counted.current;
      }
    }
    throw new AccountContendedError(accountId);
  }

  /**
   * Closes a request's reservation by applying its settlement entry, which the ledger
   * already holds: the hold comes back and the entry's amount applies (settle: minus the
   * charge; release: nothing). Throws ConditionFailedError when the reservation is no
   * longer open, or no longer the one given: it was closed already. `listClosed`: the request
   * goes into `closedRequests` in the same write, so that a late attempt of its reserve is
   * refused, unless the set is full (CLOSED_LISTED_MAX): then it is closed unlisted, and
   * `listed` says so.
   */
  async closeReservation(settlement: SettlementEntry, reservation: Reservation, { listClosed = false } = {}): Promise<{ listed: boolean }> {
    if (listClosed) {
      try {
        await this.close(settlement, reservation, true);
        return { listed: true };
      } catch (error) {
        // The set full, or the reservation closed already: the next write tells which.
        if (!(error instanceof ConditionFailedError)) throw error;
      }
    }
    await this.close(settlement, reservation, false);
    return { listed: false };
  }

  private async close(settlement: SettlementEntry, reservation: Reservation, listed: boolean): Promise<void> {
    const { slots } = reservation;
    // Its slots given back in the same write: `inFlightSlots` stays the sum of the open reservations'.
    const adds = [...(slots === undefined ? [] : ['inFlightSlots :freed']), ...(listed ? ['closedRequests :closed'] : [])];
    try {
      await storeCall(
        'accounts.closeReservation',
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: toAttributes({ accountId: settlement.accountId }),
            UpdateExpression: `SET balanceMicro = balanceMicro + :amount REMOVE reservations.#request${adds.length > 0 ? ` ADD ${adds.join(', ')}` : ''}`,
            // Closing is idempotent: only the open reservation taken at `at` can be closed, once, and it gives back the slots it took.
            ConditionExpression: `reservations.#request.amountMicro = :held AND reservations.#request.#at = :at AND ${
              slots === undefined ? 'attribute_not_exists(reservations.#request.slots)' : 'reservations.#request.slots = :slots'
            }${listed ? ' AND (attribute_not_exists(closedRequests) OR size(closedRequests) < :most)' : ''}`,
            ExpressionAttributeNames: { '#request': settlement.requestId, '#at': 'at' },
            ExpressionAttributeValues: toAttributes({
              ':amount': balanceChangeAtClose(settlement),
              ':held': reservation.amountMicro,
              ':at': reservation.at,
              ...(slots === undefined ? {} : { ':slots': slots, ':freed': -slots }),
              ...(listed ? { ':closed': new Set([settlement.requestId]), ':most': CLOSED_LISTED_MAX } : {}),
            }),
          }),
        ),
      );
    } catch (error) {
      if (isConditionFailed(error)) throw new ConditionFailedError(`Reservation of ${settlement.requestId} is not open`, { cause: error });
      throw error;
    }
  }

  /**
   * Marks an entry of `unposted` as held by the ledger, leaving it in the set (its write's late
   * attempts find it there and are refused); nothing when it is gone already.
   */
  async markPosted(accountId: string, entryId: string): Promise<void> {
    try {
      await storeCall(
        'accounts.markPosted',
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: toAttributes({ accountId }),
            UpdateExpression: 'SET unposted.#entry.posted = :posted',
            ConditionExpression: 'attribute_exists(unposted.#entry)',
            ExpressionAttributeNames: { '#entry': entryId },
            ExpressionAttributeValues: toAttributes({ ':posted': true }),
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
    }
  }

  /** Drops entries from `unposted` once the ledger holds them (removing one already gone is a no-op). */
  async dropUnposted(accountId: string, entryIds: readonly string[]): Promise<void> {
    if (entryIds.length === 0) return;
    const names = Object.fromEntries(entryIds.map((id, i) => [`#e${i}`, id]));
    await storeCall(
      'accounts.dropUnposted',
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: toAttributes({ accountId }),
          UpdateExpression: `REMOVE ${Object.keys(names)
            .map((name) => `unposted.${name}`)
            .join(', ')}`,
          // Never recreate a deleted account as an empty item.
          ConditionExpression: 'attribute_exists(accountId)',
          ExpressionAttributeNames: names,
        }),
      ),
    );
  }

  /** Drops requests from `closedRequests` once no late attempt of their reserve can arrive (dropping one already gone is a no-op). */
  async dropClosed(accountId: string, requestIds: readonly string[]): Promise<void> {
    if (requestIds.length === 0) return;
    await storeCall(
      'accounts.dropClosed',
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: toAttributes({ accountId }),
          UpdateExpression: 'DELETE closedRequests :ids',
          // Never recreate a deleted account as an empty item.
          ConditionExpression: 'attribute_exists(accountId)',
          ExpressionAttributeValues: toAttributes({ ':ids': new Set(requestIds) }),
        }),
      ),
    );
  }

  /**
   * Lists a key of the account as revoked from `at` (epoch ms), so that the reserve refuses
   * it at once, and drops the keys listed longer than REVOKED_KEYS_KEPT_MS. The key's own
   * record (ApiKeysRepository.revoke) is what the authorizer reads when its cache misses.
   * Listing a key again keeps its first time. An account that no longer exists has nothing
   * to refuse.
   */
  async revokeKey(accountId: string, keyHash: string, at: number): Promise<void> {
    for (let attempt = 1; attempt <= REVOKE_ATTEMPTS; attempt++) {
      const account = await this.get(accountId);
      if (!account) return;
      const listed = account.revokedKeys;
      const expired = Object.keys(listed ?? {}).filter((hash) => hash !== keyHash && listed![hash]! < at - REVOKED_KEYS_KEPT_MS);
      const removed = Object.fromEntries(expired.map((hash, i) => [`#old${i}`, hash]));
      try {
        await storeCall(
          'accounts.revokeKey',
          this.client.send(
            new UpdateItemCommand({
              TableName: this.tableName,
              Key: toAttributes({ accountId }),
              ...(listed === undefined
                ? {
                    UpdateExpression: 'SET revokedKeys = :keys',
                    ConditionExpression: 'attribute_exists(accountId) AND attribute_not_exists(revokedKeys)',
                    ExpressionAttributeValues: toAttributes({ ':keys': { [keyHash]: at } }),
                  }
                : {
                    UpdateExpression: `SET revokedKeys.#key = if_not_exists(revokedKeys.#key, :at)${
                      expired.length > 0
                        ? ` REMOVE ${Object.keys(removed)
                            .map((name) => `revokedKeys.${name}`)
                            .join(', ')}`
                        : ''
                    }`,
                    ConditionExpression: 'attribute_exists(revokedKeys)',
                    ExpressionAttributeNames: { '#key': keyHash, ...removed },
                    ExpressionAttributeValues: toAttributes({ ':at': at }),
                  }),
            }),
          ),
        );
        return;
      } catch (error) {
        // Another revocation created or the account's deletion removed the list meanwhile: read again.
        if (!isConditionFailed(error)) throw error;
      }
    }
    throw new AccountContendedError(accountId);
  }

  /**
   * Changes an account's settings (the admin CLI's set-rate-limit and set-zdr): each given is
   * set; a rate limit of `null` is removed, the account then following the gateway's default.
   */
  async setSettings(accountId: string, settings: { rateLimitRpm?: number | null; zeroDataRetention?: boolean }): Promise<void> {
    const set: string[] = [];
    const values: Record<string, unknown> = {};
    if (typeof settings.rateLimitRpm === 'number') {
      set.push('rateLimitRpm = :rpm');
      values[':rpm'] = settings.rateLimitRpm;
    }
    if (settings.zeroDataRetention !== undefined) {
      set.push('zeroDataRetention = :zdr');
      values[':zdr'] = settings.zeroDataRetention;
    }
    const update = [...(set.length > 0 ? [`SET ${set.join(', ')}`] : []), ...(settings.rateLimitRpm === null ? ['REMOVE rateLimitRpm'] : [])].join(' ');
    if (update === '') return;
    try {
      await storeCall(
        'accounts.setSettings',
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: toAttributes({ accountId }),
            UpdateExpression: update,
            ConditionExpression: 'attribute_exists(accountId)',
            ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: toAttributes(values) } : {}),
          }),
        ),
      );
    } catch (error) {
      if (isConditionFailed(error)) throw new AccountNotFoundError(accountId, { cause: error });
      throw error;
    }
  }

  /**
   * Sets `inFlightSlots` to what the open reservations read in `account` count, where it says
   * otherwise (inFlightSlotsDrift). Reserves and closes change both in one write, so they agree
   * in any read; they part only where something closed a reservation without giving its slots
   * back (a gateway older than the count, run again after it), which would hold the account at
   * its limit for good. Written only while the count and the number of reservations are as
   * read (else nothing: the next run reads again). Reserves and closes that left both as they
   * were between the read and the write left the reservations' sum as it was too, unless one
   * of them was such a close, which only lowers it: the count written is never below the sum,
   * so no request is ever admitted past the limit, and the next run takes off the rest.
   * Returns the count as read and as written when it wrote.
   */
  async repairInFlightSlots(account: Account): Promise<{ seen: number; counted: number } | undefined> {
    const drift = inFlightSlotsDrift(account);
    if (drift === undefined) return undefined;
    try {
      await storeCall(
        'accounts.repairInFlightSlots',
        this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: toAttributes({ accountId: account.accountId }),
            UpdateExpression: 'SET inFlightSlots = :counted',
            ConditionExpression: 'inFlightSlots = :seen AND size(reservations) = :open',
            ExpressionAttributeValues: toAttributes({ ':counted': drift.counted, ':seen': drift.seen, ':open': Object.keys(account.reservations ?? {}).length }),
          }),
        ),
      );
      return drift;
    } catch (error) {
      if (isConditionFailed(error)) return undefined;
      throw error;
    }
  }

  /** Accounts with open reservations, requests counted at once, unposted entries or closed requests listed: the reconciler's work list. */
  async *needingReconciliation(): AsyncGenerator<Account> {
    const pages = paginateScan(
      { client: this.client },
      {
        TableName: this.tableName,
        FilterExpression: 'size(reservations) > :zero OR inFlightSlots > :zero OR size(unposted) > :zero OR size(closedRequests) > :zero',
        ExpressionAttributeValues: toAttributes({ ':zero': 0 }),
        ConsistentRead: true,
      },
    );
    for await (const page of storePages('accounts.needingReconciliation', pages)) for (const item of page.Items ?? []) yield fromAttributes<Account>(item)!;
  }
}

/** `inFlightSlots` as read, and what the open reservations read with it count, where the two differ (AccountsRepository.repairInFlightSlots). */
function inFlightSlotsDrift(account: Pick<Account, 'reservations' | 'inFlightSlots'>): { seen: number; counted: number } | undefined {
  if (account.inFlightSlots === undefined) return undefined;
  let counted = 0;
  for (const reservation of Object.values(account.reservations ?? {})) counted += reservation.slots ?? 0;
  return counted === account.inFlightSlots ? undefined : { seen: account.inFlightSlots, counted };
}

/** The account's entries whose balance change is made and that the ledger does not hold yet. */
export function pendingEntries(account: Pick<Account, 'unposted'>): LedgerEntry[] {
  return Object.values(account.unposted ?? {}).filter((entry) => entry.posted !== true);
}

/** Whether the account holds this very entry, unposted: a write that added it landed. */
function holdsEntry(account: Account, entry: LedgerEntry): boolean {
  const held = account.unposted?.[entry.entryId];
  return held !== undefined && held.amountMicro === entry.amountMicro && held.at === entry.at;
}
