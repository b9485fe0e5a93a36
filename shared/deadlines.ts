/**
 * The time budgets that the store, the request path, the configuration and the stack must
 * agree on, in one place of the lowest layer so that each of them derives its numbers from
 * these instead of repeating them.
 */

/**
 * The store client's deadlines per attempt (shared/storage/dynamodb.ts): to connect, and from
 * the request's start to the answer's last byte (shared/http/aws-handler.ts). DynamoDB answers a single-item call in
 * milliseconds: 2 s is a hung attempt, not a slow one.
 */
export const STORE_TIMEOUTS = Object.freeze({ connectMs: 1_000, answerMs: 2_000 });
/** Attempts of one store call, the first included. */
export const STORE_ATTEMPTS = 3;
/**
 * The longest one store call takes before it fails (a 503): every attempt waits at most
 * `answerMs` (the connection included), and the SDK's backoff between attempts stays under a
 * second in all: 3 × 2 s + 1 s = 7 s.
 */
export const STORE_WORST_CALL_MS = STORE_ATTEMPTS * STORE_TIMEOUTS.answerMs + 1_000;

/** Time kept back from the request deadline for settling and logging after the models answered. */
export const SETTLE_MARGIN_MS = 1_000;

/**
 * How much longer than REQUEST_DEADLINE_MS the `api` function runs (its timeout, and API
 * Gateway's integration timeout; the local host's `api` context too): time to settle credits
 * and answer once the deadline has stopped the models.
 */
export const FUNCTION_MARGIN_MS = 4_000;

/** The least time the models are left once a reserve that took the store's worst case holds. */
export const MIN_MODEL_TIME_MS = 2_000;

/**
 * The shortest REQUEST_DEADLINE_MS: the models stop SETTLE_MARGIN_MS before the deadline,
 * counted from when the request was received, and no model is sent before the reserve (one
 * store call) holds, which may take STORE_WORST_CALL_MS. Anything shorter could leave the
 * models no time at all (10 s: 1 + 7 + 2).
 */
export const MIN_REQUEST_DEADLINE_MS = SETTLE_MARGIN_MS + STORE_WORST_CALL_MS + MIN_MODEL_TIME_MS;

/** The longest the functions run: the longest integration the stack deploys, an Express workflow's most (300 s). */
export const MAX_FUNCTION_TIMEOUT_MS = 300_000;

/**
 * The longest REQUEST_DEADLINE_MS: the stack's, FUNCTION_MARGIN_MS short of its longest
 * integration (296 s; the local host's too: a longer one had left its `api` less than the
 * margin), far below the 18 minutes after which the reconciler releases a reservation as abandoned.
 */
export const MAX_REQUEST_DEADLINE_MS = MAX_FUNCTION_TIMEOUT_MS - FUNCTION_MARGIN_MS;
