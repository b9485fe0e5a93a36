import { ConditionalCheckFailedException, DynamoDBClient, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { HttpHandler } from '@smithy/core/protocols';
import { withFastConfig } from '../aws-client-config.js';
import { STORE_ATTEMPTS, STORE_TIMEOUTS } from '../deadlines.js';
import { awsRequestHandler, type AwsTimeouts } from '../http/aws-handler.js';
import { StoreUnavailableError, isStoreUnavailable } from './errors.js';

/** A stored item: plain JavaScript values, as the document client marshalls them. */
// biome-ignore lint/suspicious/noExplicitAny: items are read by each repository, which knows its own item's shape
export type Item = Record<string, any>;

/** Wraps each store call, e.g. in a trace subsegment named after the operation (`DynamoDB.UpdateItem`). */
export type CallHook = <T>(operation: string, call: () => Promise<T>) => Promise<T>;

export interface StoreOptions {
  region: string;
  /**
   * Where DynamoDB is: a local store (`DYNAMODB_ENDPOINT`), LocalStack (`AWS_ENDPOINT_URL`,
   * `AWS_ENDPOINT_URL_DYNAMODB`); unset, the SDK resolves the region's endpoint, with its
   * partition's suffix (`amazonaws.com.cn` in `cn-north-1`).
   */
  endpoint?: string;
  /** Whether `endpoint` is a local store, which takes any credentials: fixed ones then, instead of the credential chain. */
  local?: boolean;
  /** How requests reach the store; by default HTTP with keep-alive (the SDK's Node handler). */
  requestHandler?: HttpHandler;
  /** Per attempt, with the default handler: STORE_TIMEOUTS unless a test shortens them. */
  timeouts?: AwsTimeouts;
}

/*
 * A connection or an answer that hangs fails the attempt, STORE_ATTEMPTS in all, and then
 * the call (a 503) after STORE_WORST_CALL_MS (7 s) at most; shared/deadlines.ts holds the
 * numbers. Each function's timeout covers that for every store call it makes one after
 * another before it answers: the authorizer's two (the key, then its account: 15 s,
 * infra/stack/gateway-stack.ts AUTHORIZER_TIMEOUT), the api's reserve before its models
 * (MIN_REQUEST_DEADLINE_MS; an Idempotency-Key's claim and completion come on top, and at the
 * shortest integration timeout API Gateway's 504 and the reconciler cover their worst case),
 * the reconciler's per account. test/infra/stack.test.ts checks them at the default and at
 * the shortest integration timeout.
 */

/** What a local store is signed with: it checks the signature's shape, never its keys. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The store's two SDK clients, over one connection pool and one configuration:
 * - `items`, DynamoDB's own client with each command's middleware stack resolved once and
 *   reused (`cacheMiddleware`), for the writes every request makes (the reserve, the
 *   ledger entries, the close, the prompt log: the repositories of accounts, the ledger and
 *   prompt logs), which marshall their own items (`toAttributes`, `fromAttributes`). The
 *   stack resolved anew on each call was a third of an SDK call's CPU here; the document
 *   client cannot cache it, as its commands carry their input in their middleware.
 * - `documents`, the document client (plain values, `undefined` members left out), for the
 *   rest: API keys, idempotency records, the tools.
 * Each SDK client signs, resolves the endpoint, refreshes credentials, retries throttling
 * and transient failures (3 attempts in all) and parses error answers; neither has the
 * SDK steps that do nothing for the store (`withoutIdleSteps`). `items` marks a command whose
 * attempt may still land after the call has ended (attemptMayLandLate).
 */
export interface StoreClient {
  items: DynamoDBClient;
  documents: DynamoDBDocumentClient;
  /** Closes the connections. */
  destroy(): void;
}

/** Created once per process (per Lambda container), its connections kept alive. */
export function createStoreClient({ region, endpoint, local = false, requestHandler, timeouts = STORE_TIMEOUTS }: StoreOptions): StoreClient {
  // Keep-alive HTTPS (the SDK's default agent), one pool for both clients.
  const handler = requestHandler ?? awsRequestHandler(timeouts);
  const settings = {
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(local ? { credentials: LOCAL_CREDENTIALS } : {}),
    requestHandler: handler,
    maxAttempts: STORE_ATTEMPTS,
  };
  const items = refusingDocumentCommands(markingAttemptsThatMayLand(withoutIdleSteps(new DynamoDBClient({ ...settings, cacheMiddleware: true }))));
  const documents = DynamoDBDocumentClient.from(withoutIdleSteps(new DynamoDBClient(settings)), {
    // Its own copy: the document client sets options of its own in the object it is given.
    marshallOptions: { ...MARSHALL_OPTIONS },
    // A stored number beyond what a JavaScript number holds exactly is refused, never rounded (the SDK throws).
    unmarshallOptions: {},
  });
  return {
    items,
    documents,
    destroy: () => {
      items.destroy();
      documents.destroy();
    },
  };
}

/**
 * The SDK steps that do nothing for a store call, taken out of each client's stack: every
 * step is an async layer that each call runs through, whatever it does. Measured on an
 * UpdateItem with a stubbed request handler, the two build steps were 18 µs of about
 * 145 µs of an SDK call's CPU here, the logger step 4 to 8 % of it.
 * - `loggerMiddleware` hands each call's whole input and output (items: prompts, outputs,
 *   stored answers) to the client's logger, and filters them for it even when that logger
 *   is the default no-op one. The gateway logs its store calls itself, never their items.
 * - `getUserAgentMiddleware` rebuilds and escapes the SDK's user-agent header on every
 *   call: DynamoDB answers the same without it.
 * - `recursionDetectionMiddleware` reads the environment on every call to copy a Lambda's
 *   trace ID into the request, for Lambda's detection of recursive loops, which covers
 *   SQS, SNS and S3, not DynamoDB; DynamoDB continues no X-Ray trace. The api function
 *   traces its store calls with `instrumentStore`.
 */
function withoutIdleSteps(client: DynamoDBClient): DynamoDBClient {
  for (const step of IDLE_STEPS) client.middlewareStack.remove(step);
  return withFastConfig(client);
}

export const IDLE_STEPS = ['loggerMiddleware', 'getUserAgentMiddleware', 'recursionDetectionMiddleware'] as const;

const MARSHALL_OPTIONS = Object.freeze({ removeUndefinedValues: true });

/** Plain values as DynamoDB attribute values, as the document client marshalls them: for commands sent through `items`. */
export function toAttributes(values: Item): Record<string, AttributeValue> {
  return marshall(values, MARSHALL_OPTIONS);
}

/** An item read through `items` as plain values (a number a JavaScript number cannot hold exactly is refused, never rounded). */
export function fromAttributes<T = Item>(attributes: Record<string, AttributeValue> | undefined): T | undefined {
  return attributes ? (unmarshall(attributes) as T) : undefined;
}

/**
 * The time by the store's clock, as its client last heard it (ms since the epoch): the SDK
 * sets `systemClockOffset` from the `Date` of every answer it signs for, so that its
 * signatures stay valid from a machine whose clock is off. Before the client's first answer,
 * this machine's time. The admin CLI, run from an operator's machine, dates the entries it
 * writes and judges the ages it reconciles by it (see CreditsService's POSTING_DELAY_MS).
 */
export function storeNow(client: StoreClient): number {
  return Date.now() + (client.items.config.systemClockOffset ?? 0);
}

/**
 * Sends every later call of `client` through `hook` (tracing in AWS), named after the
 * DynamoDB operation. A step of the SDK's own middleware stack: it sees each call once,
 * retries included.
 */
export function instrumentStore(client: StoreClient, hook: CallHook): void {
  // Before the first call: `items` resolves each command's stack once, on its first call.
  for (const sdk of [client.items, client.documents]) {
    sdk.middlewareStack.add((next, context) => (args) => hook(`DynamoDB.${String(context.commandName ?? '').replace(/Command$/, '')}`, () => next(args)), {
      step: 'initialize',
      name: 'gatewayStoreHook',
      override: true,
    });
  }
}

/**
 * A store call at the store edge: throttling that outlasted the SDK's retries, network
 * failures and service errors come back as StoreUnavailableError (a 503, nothing
 * charged); a refused condition and anything unknown are rethrown as they are, for the
 * repository to translate or to fail loudly.
 */
export async function storeCall<T>(operation: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (isStoreUnavailable(error)) throw new StoreUnavailableError(operation, error);
    throw error;
  }
}

/** Set on a command's input by markAttemptsThatMayLand. */
const MAY_LAND_LATE = Symbol('attemptMayLandLate');

/**
 * Whether an attempt of the command that was sent (`items` only) ended without an answer that
 * says the store did not apply it: no answer (a deadline, a reset connection), a 5xx, or a 2xx
 * whose body never came whole (it applied). The SDK sends another attempt, or gives up, but
 * such an attempt may still reach the store and apply later. An attempt refused with a 4xx (a
 * throttle, a failed condition) did not apply.
 */
export function attemptMayLandLate(input: object): boolean {
  return (input as Record<symbol, unknown>)[MAY_LAND_LATE] === true;
}

/**
 * `items` refuses the document client's commands (lib-dynamodb's PutCommand, UpdateCommand,
 * …), which it would accept and get wrong without a word: with its stack cached per command
 * class, every such command after the first of its class is sent with the first one's input,
 * which their marshalling middleware holds (a test wrote to another account so). Those go
 * through `documents`.
 */
function refusingDocumentCommands(client: DynamoDBClient): DynamoDBClient {
  client.send = function (this: DynamoDBClient, command: object, ...rest: unknown[]) {
    if ('clientCommand' in command) {
      throw new TypeError(`${command.constructor.name} is a document client command: send it through the store's documents client, not items`);
    }
    // The class's send as it is at the call (a test's mock replaces it there).
    return (Object.getPrototypeOf(this).send as (...args: unknown[]) => unknown).call(this, command, ...rest);
  } as typeof client.send;
  return client;
}

/**
 * Each attempt of a call, inside the SDK's retry step, marks the command's input (the object
 * every attempt is given) when it ended without a refusal (attemptMayLandLate). The input, not
 * the handler's context: with `cacheMiddleware` one context serves every call of a command.
 */
function markingAttemptsThatMayLand(client: DynamoDBClient): DynamoDBClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
        // Only a 4xx says the store did not apply it; a 2xx whose body never came whole says it did.
        if (status === undefined || status < 400 || status >= 500) (args.input as Record<symbol, unknown>)[MAY_LAND_LATE] = true;
        throw error;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'markAttemptsThatMayLand' },
  );
  return client;
}

/** Whether a write was refused by its condition. */
export function isConditionFailed(error: unknown): error is ConditionalCheckFailedException {
  return error instanceof ConditionalCheckFailedException || (error as Error | undefined)?.name === 'ConditionalCheckFailedException';
}

/** The item as it was when a write asking for it (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`) was refused. */
export function refusedItem(error: ConditionalCheckFailedException): Item | undefined {
  return fromAttributes(error.Item);
}

/** The item that refused a write: as DynamoDB returns it with the refusal (refusedItem), or as `read` finds it from a store that returns none. */
export async function refusedOrRead<T>(error: ConditionalCheckFailedException, read: () => Promise<T | undefined>): Promise<T | undefined> {
  return (refusedItem(error) as T | undefined) ?? (await read());
}

/** The pages of a paginated query or scan, each page's call at the store edge (storeCall). */
export async function* storePages<T>(operation: string, pages: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = pages[Symbol.asyncIterator]();
  for (;;) {
    const page = await storeCall(operation, iterator.next());
    if (page.done) return;
    yield page.value;
  }
}
