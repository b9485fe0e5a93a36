/**
 * Domain errors. Each carries its HTTP status and a stable machine code; one error
 * handler (shared/http/error-response.ts) turns them into the one error body shape:
 * {"error": {"code", "message", "details"?}} plus any top-level extras (402).
 */
export interface FieldError {
  /** JSON pointer into the request body, e.g. `/model_tuning/fam_a-opus-4-6/thinkingBudget`. */
  field: string;
  message: string;
}

export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  /** Top-level fields added beside `error` in the body. */
  extras(): Record<string, unknown> {
    return {};
  }
  headers(): Record<string, string> {
    return {};
  }
}

/** Failing fields an answer lists at most: a body of thousands of bad fields gets a count, not an echo of each. */
export const MAX_FIELD_ERRORS = 100;

export class ValidationError extends GatewayError {
  override name = 'ValidationError';
  readonly details: FieldError[];
  /** `count`: how many fields failed where `details` lists fewer (the repeated members' pointers, cut at their characters' limit). */
  constructor(details: FieldError[], count = details.length) {
    const first = details[0];
    const failed = Math.max(count, details.length);
    const listed = Math.min(details.length, MAX_FIELD_ERRORS);
    super(
      400,
      'invalid_request',
      failed === 1 && first
        ? `${first.field || '/'}: ${first.message}`
        : `${failed} fields are invalid${failed > listed ? (listed === 1 ? '; the first is listed' : `; the first ${listed} are listed`) : ''}`,
    );
    this.details = details.slice(0, MAX_FIELD_ERRORS);
    this.every = details;
    this.failed = failed;
  }

  /** Every failing field kept, the listed ones and those past MAX_FIELD_ERRORS. */
  private readonly every: FieldError[];
  /** How many fields failed, those not kept included. */
  private readonly failed: number;

  /** This error with one more failing field, listed whatever the count (first where the list is full). */
  adding(detail: FieldError): ValidationError {
    return new ValidationError(this.every.length >= MAX_FIELD_ERRORS ? [detail, ...this.every] : [...this.every, detail], this.failed + 1);
  }
}

export class MalformedJsonError extends GatewayError {
  override name = 'MalformedJsonError';
  constructor(cause: unknown) {
    super(400, 'malformed_json', 'The request body is not valid JSON', { cause });
  }
}

/** A request the HTTP edge refuses before any route sees it (not valid HTTP, or asking what the edge does not do). */
export class BadRequestError extends GatewayError {
  override name = 'BadRequestError';
  constructor(message: string, status = 400) {
    super(status, 'bad_request', message);
  }
}

export class UnsupportedMediaTypeError extends GatewayError {
  override name = 'UnsupportedMediaTypeError';
  constructor(contentType: string, message = `Content-Type "${contentType.slice(0, 100)}" is not accepted; send application/json`) {
    super(415, 'unsupported_media_type', message);
  }
}

export class PayloadTooLargeError extends GatewayError {
  override name = 'PayloadTooLargeError';
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `The request body exceeds ${limitBytes} bytes`);
  }
}

/** What a 401 names as the way to authenticate (RFC 9110 11.6.1: every 401 carries it). */
export const WWW_AUTHENTICATE = 'Bearer';

export class UnauthorizedError extends GatewayError {
  override name = 'UnauthorizedError';
  constructor(message = 'A valid API key is required: Authorization: Bearer <API_KEY>') {
    super(401, 'unauthorized', message);
  }

  override headers(): Record<string, string> {
    return { 'WWW-Authenticate': WWW_AUTHENTICATE };
  }
}

/** The routes a 404 names: the local host's and the stack's (its gateway response) say the same. */
export const API_ROUTES = 'POST /api/v1/prompt, GET /api/v1/models and GET /api/v1/openapi.json';

export class NotFoundError extends GatewayError {
  override name = 'NotFoundError';
  constructor(path: string) {
    super(404, 'not_found', `No route for ${path.slice(0, 200)}; the API is ${API_ROUTES}`);
  }
}

/** The methods a route of `method` takes: a GET route takes HEAD too (RFC 9110 9.1). The local host, the stack and a 405's Allow read them here. */
export function routeMethods(method: 'GET' | 'POST'): readonly string[] {
  return method === 'GET' ? ['GET', 'HEAD'] : [method];
}

export class MethodNotAllowedError extends GatewayError {
  override name = 'MethodNotAllowedError';
  constructor(
    method: string,
    readonly allow: 'GET' | 'POST' = 'POST',
  ) {
    super(405, 'method_not_allowed', `Method ${method.slice(0, 20)} is not allowed; use ${allow}`);
  }
  override headers(): Record<string, string> {
    return { Allow: routeMethods(this.allow).join(', ') };
  }
}

/** The estimate of a refused request, part by part, in credits. */
export interface CreditsEstimate {
  /**
   * Each model's call: its credits, the input tokens held, the tokens held for a Gemini
   * `cachedContent` (as many as its model's context leaves), the part of the credits both are,
   * the output tokens held, and the search queries held for a Gemini `webSearch` (or
   * `cachedContent`, which may turn it on) with their part of the credits.
   */
  models: {
    modelId: string;
    credits: number;
    inputTokens: number;
    cachedContentTokens?: number;
    inputCredits: number;
    outputTokens: number;
    searchQueries?: number;
    searchCredits?: number;
  }[];
  judgeCalls: { calls: number; credits: number };
  /** The PDFs whose pages could not be counted, by pointer: each held at every model's whole context. */
  uncountedPdfs?: string[];
}

/**
 * What the estimate is and what lowers it: `maxTokens` bounds the models' outputs, and so the
 * answers a judge is shown, but not a judge's own output; where the models' input is most of
 * their part (a long prompt, an attachment held at its most), that instead; where judge calls
 * are in the estimate, what they hold is said and what lowers it.
 */
function whatLowersIt(estimate: CreditsEstimate | undefined): string {
  const { models, lower } = modelsPart(estimate);
  const judged = estimate?.judgeCalls;
  if (!judged || judged.calls === 0) return `${models}. ${lower}`;
  return (
    `${models}, and each of the ${judged.calls} judge calls its judge's (${judged.credits} of the credits: a judge's output limit is its model's own, ` +
    `for its reasoning and verdict). ${lower}, and the judge calls' input (the answers they are shown); fewer models or judges, or a cheaper judge, lowers the judge calls' part`
  );
}

/**
 * What the models' part of an estimate is, and what lowers it: their output limits, or their
 * input or their search queries where that is most of it.
 */
function modelsPart(estimate: CreditsEstimate | undefined): { models: string; lower: string } {
  const input = estimate?.models.reduce((sum, model) => sum + model.inputCredits, 0) ?? 0;
  const search = estimate?.models.reduce((sum, model) => sum + (model.searchCredits ?? 0), 0) ?? 0;
  const all = estimate?.models.reduce((sum, model) => sum + model.credits, 0) ?? 0;
  if (estimate && search * 2 > all) {
    const searching = estimate.models.filter((model) => (model.searchQueries ?? 0) > 0);
    return {
      models: `The estimate is the worst case: every model writing its whole output limit, and the most search queries a model may be charged, most of the models' part those queries: ${searching.map((model) => `${model.searchQueries} for ${model.modelId}`).join(', ')} (its model_tuning.webSearch, or a cachedContent, which may turn it on)`,
      lower: 'No webSearch (and no cachedContent) on those models lowers it; a lower generation_settings.maxTokens hardly does',
    };
  }
  if (!estimate || input * 2 <= all)
    return { models: 'The estimate is the worst case: every model writing its whole output limit', lower: 'A lower generation_settings.maxTokens lowers it' };
  const uncounted = estimate.uncountedPdfs ?? [];
  const cached = estimate.models.filter((model) => (model.cachedContentTokens ?? 0) > 0).map((model) => model.modelId);
  const held = [
    ...(uncounted.length > 0
      ? [`the pages of the PDF at ${uncounted.join(', ')} could not be counted (encrypted, or unreadable), so each model holds it at its whole context window`]
      : []),
    ...(cached.length > 0
      ? [`the model_tuning.cachedContent of ${cached.join(', ')} is held at all the context its model's input leaves (the request does not say what it holds)`]
      : []),
  ];
  const lowers = [
    ...(uncounted.length > 0 ? ['a PDF whose pages can be read (held at what they count)'] : []),
    ...(cached.length > 0 ? ['no cachedContent'] : []),
    'a shorter input, fewer attachments or fewer models',
  ].join(', ');
  return {
    models: `The estimate is the worst case: every model reading its whole input and writing its whole output limit, most of the models' part their input${held.length > 0 ? `: ${held.join('; ')}` : ''}`,
    lower: `${lowers[0]!.toUpperCase()}${lowers.slice(1)} lower it`,
  };
}

export class InsufficientCreditsError extends GatewayError {
  override name = 'InsufficientCreditsError';
  constructor(
    readonly estimatedCreditsRequired: number,
    readonly balance: number,
    readonly estimate?: CreditsEstimate,
  ) {
    super(402, 'insufficient_credits', `This request needs an estimated ${estimatedCreditsRequired} credits; the balance is ${balance}. ${whatLowersIt(estimate)}`);
  }
  override extras(): Record<string, unknown> {
    return { estimatedCreditsRequired: this.estimatedCreditsRequired, balance: this.balance, ...(this.estimate ? { estimate: this.estimate } : {}) };
  }
}

export class AccountNotFoundError extends GatewayError {
  override name = 'AccountNotFoundError';
  /** The account, where the failure knows it (the store does; the message never names it). */
  constructor(
    readonly accountId?: string,
    options?: { cause?: unknown },
  ) {
    super(401, 'unauthorized', 'The account of this API key no longer exists', options);
  }
}

export class ServiceUnavailableError extends GatewayError {
  override name = 'ServiceUnavailableError';
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
    options?: { cause?: unknown },
  ) {
    super(503, 'service_unavailable', message, options);
  }
  override headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/** How long a caller is told to wait when the gateway cannot read what it runs on (its configuration, its provider keys). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The provider keys could not be read (by the api, or by every task of a judged request's Generate step): nothing ran, nothing was charged. */
export class ProviderKeysUnavailableError extends ServiceUnavailableError {
  override name = 'ProviderKeysUnavailableError';
  constructor(options?: { cause?: unknown }) {
    super('The gateway could not read its provider keys; retry shortly. Nothing was charged', UNAVAILABLE_RETRY_AFTER_SECONDS, options);
  }
}

/**
 * The `api` function ran out of its time before its answer (Middy's early timeout, just
 * before Lambda's): a fault, since every wait of a request is bounded by its deadline, 4 s
 * sooner. Its run may still end and settle (in the local host; in Lambda, should the
 * container be thawed), so it does not say that nothing was charged.
 */
export class GatewayTimeoutError extends GatewayError {
  override name = 'GatewayTimeoutError';
  constructor() {
    super(504, 'gateway_timeout', "The gateway ran out of time before answering; what the request's models used may still be charged (the account's ledger says)");
  }
}

export class RateLimitedError extends GatewayError {
  override name = 'RateLimitedError';
  constructor(
    readonly retryAfterSeconds: number,
    limitPerMinute: number,
    message = `Rate limit of ${limitPerMinute} ${limitPerMinute === 1 ? 'request' : 'requests'} per minute exceeded; retry after ${retryAfterSeconds} s`,
  ) {
    super(429, 'rate_limited', message);
  }
  override headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}
