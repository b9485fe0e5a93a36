import { resolve as resolvePath } from 'node:path';
import { PROVIDERS, type ProviderId } from './catalog/types.js';
import { exampleBaseUrl } from './catalog/base-urls.js';
import { withoutTrailingSlashes } from './text/trailing-slashes.js';
import {
  FUNCTION_MARGIN_MS,
  MAX_FUNCTION_TIMEOUT_MS,
  MAX_REQUEST_DEADLINE_MS,
  MIN_MODEL_TIME_MS,
  MIN_REQUEST_DEADLINE_MS,
  SETTLE_MARGIN_MS,
  STORE_WORST_CALL_MS,
} from './deadlines.js';

export { MAX_REQUEST_DEADLINE_MS, MIN_REQUEST_DEADLINE_MS };

/**
 * The one place that reads process.env. Everything else receives a GatewayConfig.
 * Names are a stable interface (DESIGN.md, "Interfaces that stay stable").
 */
export interface ProviderSettings {
  apiKey?: string;
  baseUrl?: string;
}

export interface GatewayConfig {
  port: number;
  dynamodbPort: number;
  /** Local store endpoint (DYNAMODB_ENDPOINT): the embedded store, which takes any credentials. Unset in AWS. */
  dynamodbEndpoint?: string;
  /**
   * Endpoints the AWS clients use instead of the region's (LocalStack, a VPC endpoint):
   * `AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`, as the AWS SDKs and CLI read
   * them; none when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`. Unset, each client
   * resolves its region's endpoint, with the partition's suffix.
   */
  awsEndpoints: AwsEndpoints;
  region: string;
  /**
   * Where `region` came from: AWS_REGION, AWS_DEFAULT_REGION, or neither (`default`,
   * us-east-1). In Lambda AWS_REGION is always set; the admin CLI then looks in the AWS
   * profile's configuration, as the SDK does (infra/admin/region.ts).
   */
  regionSource: 'AWS_REGION' | 'AWS_DEFAULT_REGION' | 'default';
  dataDir?: string;
  demoApiKey?: string;
  demoCredits: number;
  tables: TableNames;
  providers: Record<ProviderId, ProviderSettings>;
  bedrockRegion: string;
  /** Whether the AWS credential chain has something to find (Bedrock needs no API key). */
  awsCredentials: boolean;
  simulateProviders: boolean;
  rateLimitRpm: number;
  /** What one account's running requests may count at once (their reservations' slots: requestSlots): one tenant's slow requests may not take every instance. */
  maxInFlight: number;
  creditsPerUsd: number;
  markup: number;
  requestDeadlineMs: number;
  /** How long an event stream (Accept: text/event-stream) may stay silent before a keep-alive comment is sent. */
  sseKeepAliveMs: number;
  /** Local host only: how long an Allow decision of the authorizer is reused (API Gateway's cache in AWS). */
  authorizerCacheSeconds: number;
  /** AWS only: the Secrets Manager secret holding the provider keys (PROVIDER_SECRET_ARN, set by the stack). */
  providerSecretArn?: string;
  /**
   * AWS only: the judge workflow's Express state machine, which the `api` function starts
   * for judged requests (JUDGE_WORKFLOW_ARN, set by the stack on the `api` function).
   */
  judgeWorkflowArn?: string;
  /**
   * AWS only: the claim-check bucket of the judge workflow (CLAIM_CHECK_BUCKET, set by the
   * stack on the `api`, `generate` and `judge` functions).
   */
  claimCheckBucket?: string;
  /** Admin CLI: the deployed stack whose outputs name the tables (GATEWAY_STACK_NAME). */
  stackName?: string;
  /** Whether any `*_TABLE` variable was set; without one, the admin CLI asks the deployed stack. */
  tablesFromEnv: boolean;
}

/** The AWS services the gateway and its admin CLI call, by their SDK clients. */
export interface AwsEndpoints {
  dynamodb?: string;
  secretsManager?: string;
  s3?: string;
  sfn?: string;
  cloudformation?: string;
}

/** `AWS_ENDPOINT_URL_<SERVICE>`: the service ID upper-cased, spaces as underscores (AWS's shared configuration). */
const ENDPOINT_VARIABLES: Record<keyof AwsEndpoints, string> = {
  dynamodb: 'AWS_ENDPOINT_URL_DYNAMODB',
  secretsManager: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  s3: 'AWS_ENDPOINT_URL_S3',
  sfn: 'AWS_ENDPOINT_URL_SFN',
  cloudformation: 'AWS_ENDPOINT_URL_CLOUDFORMATION',
};

export interface TableNames {
  accounts: string;
  apiKeys: string;
  ledger: string;
  idempotency: string;
  promptLogs: string;
}

const ENV_PREFIX: Record<ProviderId, string> = {
  openai: 'OPENAI',
  anthropic: 'ANTHROPIC',
  google: 'GOOGLE',
  xai: 'XAI',
  cerebras: 'CEREBRAS',
  deepseek: 'DEEPSEEK',
  mistral: 'MISTRAL',
  groq: 'GROQ',
  bedrock: 'BEDROCK',
};

/** The variable (and provider-secret JSON field) that holds a provider's key: `OPENAI_API_KEY`. */
export function providerKeyName(provider: ProviderId): string {
  return `${ENV_PREFIX[provider]}_API_KEY`;
}

/** The variable that holds a provider's base URL: `OPENAI_BASE_URL`. */
export function providerBaseUrlName(provider: ProviderId): string {
  return `${ENV_PREFIX[provider]}_BASE_URL`;
}

/**
 * The variables that name the judge workflow's resources in AWS; the stack sets them
 * (infra/stack/gateway-stack.ts reads the names from here).
 */
export const WORKFLOW_ENV = {
  stateMachineArn: 'JUDGE_WORKFLOW_ARN',
  claimCheckBucket: 'CLAIM_CHECK_BUCKET',
} as const;

/** An account's requests a minute: its own limit (create-account --rpm, set-rate-limit), else the gateway's (RATE_LIMIT_RPM). */
export function accountRateLimit(account: { rateLimitRpm?: number }, config: Pick<GatewayConfig, 'rateLimitRpm'>): number {
  return account.rateLimitRpm ?? config.rateLimitRpm;
}

/**
 * The variable by which the stack tells the `api` function how API Gateway integrates it:
 * `false` when it was synthesized with `-c gateway:responseStreaming=false` (buffered, for
 * LocalStack and sam-local); unset or anything else streams.
 */
export const RESPONSE_STREAMING_ENV = 'RESPONSE_STREAMING';

/** Whether the `api` function answers through Lambda response streaming (read once, at cold start; never throws). */
export function responseStreaming(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[RESPONSE_STREAMING_ENV] !== 'false';
}

/** The variable that names each table. */
export const TABLE_VARIABLES: Readonly<Record<keyof TableNames, string>> = {
  accounts: 'ACCOUNTS_TABLE',
  apiKeys: 'API_KEYS_TABLE',
  ledger: 'LEDGER_TABLE',
  idempotency: 'IDEMPOTENCY_TABLE',
  promptLogs: 'PROMPT_LOGS_TABLE',
};

/** Each table's name where its variable is unset: the tables npm start makes. */
const DEFAULT_TABLES: Readonly<TableNames> = {
  accounts: 'gateway-accounts',
  apiKeys: 'gateway-api-keys',
  ledger: 'gateway-ledger',
  idempotency: 'gateway-idempotency',
  promptLogs: 'gateway-prompt-logs',
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Integers are plain decimal digits, as the admin CLI's `--rpm` takes them: Number() alone
 * would take `0x10` as 16 (PORT=0x10 listened on port 16), `1e3` as 1000, `0b11` as 3 and
 * ` 5 ` as 5. The stack's context integers are read so too (infra/stack/context.ts).
 */
export const DIGITS = /^\d+$/;

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = DIGITS.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = `>= ${min}${max < Number.MAX_SAFE_INTEGER ? ` and <= ${max}` : ''}`;
    throw new ConfigError(
      DIGITS.test(raw) ? `${name} must be an integer ${range}, got "${raw}"` : `${name} must be an integer ${range}, in decimal digits only (not 1e3 or 0x10), got "${raw}"`,
    );
  }
  return value;
}

/**
 * A decimal number, with an optional exponent (the stack writes a cdk.json number such as
 * 1e-7 into the functions' environment so): not hex, binary, octal, signed, padded or Infinity.
 * The stack's context numbers are read so too.
 */
export const DECIMAL = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, max = Number.MAX_VALUE): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = DECIMAL.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw new ConfigError(`${name} must be a positive decimal number${max < Number.MAX_VALUE ? ` of at most ${max}` : ''}, got "${raw}"`);
  }
  return value;
}

/**
 * REQUEST_DEADLINE_MS, from MIN_REQUEST_DEADLINE_MS (shorter could leave the models no time:
 * shared/deadlines.ts) to MAX_REQUEST_DEADLINE_MS.
 */
function requestDeadline(env: NodeJS.ProcessEnv): number {
  const raw = env.REQUEST_DEADLINE_MS;
  if (raw === undefined || raw === '') return 25_000;
  const value = DIGITS.test(raw) ? Number(raw) : Number.NaN;
  const range = `REQUEST_DEADLINE_MS must be an integer from ${MIN_REQUEST_DEADLINE_MS} to ${MAX_REQUEST_DEADLINE_MS} (ms)`;
  if (!Number.isSafeInteger(value)) throw new ConfigError(`${range}, in decimal digits only (not 1e4 or 0x2710), got "${raw}"`);
  if (value < MIN_REQUEST_DEADLINE_MS) {
    throw new ConfigError(
      `${range}, got "${raw}": ` +
        `the models stop ${SETTLE_MARGIN_MS} ms before it and start once the reserve holds (up to ${STORE_WORST_CALL_MS} ms), ` +
        `so less could leave them under ${MIN_MODEL_TIME_MS} ms`,
    );
  }
  if (value > MAX_REQUEST_DEADLINE_MS) {
    throw new ConfigError(
      `${range}, got "${raw}": the stack's longest integration is ${MAX_FUNCTION_TIMEOUT_MS / 1000} s, a request's deadline ${FUNCTION_MARGIN_MS / 1000} s shorter, and a request must end well before the reconciler releases its hold as abandoned`,
    );
  }
  return value;
}

/**
 * The most requests a minute an account may be allowed (RATE_LIMIT_RPM, `--rpm`), counted in
 * its fixed one-minute rate window: a million, above the 600,000 a minute that API Gateway's
 * default account throttle (10,000 a second) can bring, so a larger limit could never refuse
 * a request, while a count of it stays a small integer (1e16 could not even be written: the
 * SDK refuses numbers past 2^53).
 */
export const MAX_RATE_LIMIT_RPM = 1_000_000;

/** The values SIMULATE_PROVIDERS takes; anything else (`yes`, `TRUE`) is refused, not read as false, which with keys set would call the real, paid vendors. */
const SIMULATE_VALUES: Record<string, boolean> = { '1': true, true: true, '0': false, false: false };

function simulateProviders(env: NodeJS.ProcessEnv): boolean {
  const raw = env.SIMULATE_PROVIDERS;
  if (raw === undefined || raw === '') return false;
  const value = SIMULATE_VALUES[raw];
  if (value === undefined) throw new ConfigError(`SIMULATE_PROVIDERS must be 1 or true (simulate every provider), 0 or false (the default), got "${raw}"`);
  return value;
}

/**
 * DEMO_CREDITS: a positive number of credits, at most the balance an account holds
 * (MAX_BALANCE_MICRO of pricing/micro-credits.ts, a layer above this one), in whole
 * micro-credits, the unit balances are kept in: 0.0000001 would open the account with 0.
 */
function demoCredits(env: NodeJS.ProcessEnv): number {
  const credits = positive(env, 'DEMO_CREDITS', 1000, 1e9);
  if (Math.round(credits * 1e6) / 1e6 !== credits) {
    throw new ConfigError(`DEMO_CREDITS must have at most 6 decimals (balances are kept in millionths of a credit), got "${env.DEMO_CREDITS}"`);
  }
  return credits;
}

/** CREDITS_PER_USD and MARKUP unset (also the stack's, when its context leaves them unset). */
export const DEFAULT_CREDITS_PER_USD = 100;
export const DEFAULT_MARKUP = 1;

/**
 * The most a request's upstream calls can cost, in USD, with room to spare: at most 32
 * model calls and 120 judge calls (LIMITS of contract/limits.ts), each at most its model's
 * whole context window at the catalog's highest input rate and more output than it can bill
 * at its highest output rate: under $200 a call with today's catalog, under $30,000 a
 * request. test/unit/config.test.ts keeps the catalog under it.
 */
export const MAX_REQUEST_USD = 100_000;

/**
 * The most CREDITS_PER_USD x MARKUP may be (10,000): a request's estimate, in credits, is its
 * cost in USD times both, and must stay within the most an account holds (a billion credits,
 * MAX_BALANCE_MICRO of pricing/micro-credits.ts, a layer above this one) for MAX_REQUEST_USD.
 * Past it, estimates leave the range balances and the store's numbers are kept in
 * (MARKUP=1e10 failed every prompt as internal_error). 100 credits a USD leaves a markup of
 * up to 100; a markup of 1, up to 10,000 credits a USD (a credit of a hundredth of a cent).
 */
export const MAX_CREDIT_RATE = 1e9 / MAX_REQUEST_USD;

/**
 * Why CREDITS_PER_USD x MARKUP (by the names given: the variables, or the stack's context
 * keys) cannot be taken, or undefined when it can.
 */
export function creditRateProblem(creditsPerUsd: number, markup: number, names: { creditsPerUsd: string; markup: string }): string | undefined {
  if (creditsPerUsd * markup <= MAX_CREDIT_RATE) return undefined;
  return (
    `${names.creditsPerUsd} x ${names.markup} must be at most ${MAX_CREDIT_RATE}, got ${creditsPerUsd} x ${markup}: ` +
    `a request can cost up to $${MAX_REQUEST_USD} upstream, and its estimate must stay within the ${1e9} credits an account holds at most`
  );
}

function creditRates(env: NodeJS.ProcessEnv): { creditsPerUsd: number; markup: number } {
  const creditsPerUsd = positive(env, 'CREDITS_PER_USD', DEFAULT_CREDITS_PER_USD, MAX_CREDIT_RATE);
  const markup = positive(env, 'MARKUP', DEFAULT_MARKUP, MAX_CREDIT_RATE);
  const problem = creditRateProblem(creditsPerUsd, markup, { creditsPerUsd: 'CREDITS_PER_USD', markup: 'MARKUP' });
  if (problem) throw new ConfigError(problem);
  return { creditsPerUsd, markup };
}

/**
 * The longest SSE_KEEPALIVE_MS: the longest a function runs, past which a stream has ended
 * before its first keep-alive was due. Node's timers take at most 2^31 - 1 ms; past that one
 * fires every millisecond (3000000000 flooded the stream with keep-alives).
 */
export const MAX_SSE_KEEPALIVE_MS = MAX_FUNCTION_TIMEOUT_MS;

/**
 * The most requests of one account that may run at once (MAX_REQUESTS_IN_FLIGHT): each open
 * one is a reservation in the account's item (about 70 bytes: its ID, amount and time), which
 * DynamoDB holds to 400 KB; 2,000 of them are about 140 KB, room left for the rest of the item.
 */
export const MAX_REQUESTS_IN_FLIGHT = 2_000;

/** The longest an authorizer decision is reused: API Gateway's most (3600 s), the stack's bound too, so that the local host caches no longer than AWS can. */
export const MAX_AUTHORIZER_CACHE_SECONDS = 3600;

/** The highest TCP port. */
const MAX_PORT = 65_535;

/** An AWS region's name: lower-case letters and digits in hyphenated parts (us-east-1, us-gov-west-1). */
const REGION_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * A region setting, checked at start: one the SDK cannot make a host name of (a space, a
 * capital) had every call of its clients fail as a network error, Bedrock's models each
 * `upstream_unreachable`, the admin CLI's an internal error.
 */
function regionName(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && (raw.length > 64 || !REGION_NAME.test(raw))) {
    throw new ConfigError(`${name} must be an AWS region's name, lower-case letters, digits and hyphens (us-east-1), got ${JSON.stringify(raw.slice(0, 64))}`);
  }
  return raw;
}

/**
 * Each table's name, no two the same: a variable that named another's table (LEDGER_TABLE set to
 * the accounts table's name) had the admin CLI write ledger entries over accounts.
 */
function tableNames(env: NodeJS.ProcessEnv): TableNames {
  const tables = { ...DEFAULT_TABLES };
  const named = new Map<string, keyof TableNames>();
  for (const key of Object.keys(TABLE_VARIABLES) as (keyof TableNames)[]) {
    const name = optional(env, TABLE_VARIABLES[key]) ?? DEFAULT_TABLES[key];
    const other = named.get(name);
    if (other !== undefined) throw new ConfigError(`${TABLE_VARIABLES[other]} and ${TABLE_VARIABLES[key]} name the same table, "${name}": each table holds its own kind of item`);
    named.set(name, key);
    tables[key] = name;
  }
  return tables;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

/** What a provider key can be: printable ASCII without spaces, as an HTTP header carries it (a zero-width space or a line end inside a pasted key is not). */
export const KEY_TEXT = /^[\x21-\x7e]+$/;

/**
 * A provider key variable, its ends trimmed (a pasted line end); one no vendor can be sent is
 * refused by name, never quoting it: sent, Node refuses the header before it leaves, and every
 * call to the vendor had failed as the vendor out of reach.
 */
function providerKey(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const key = optional(env, name)?.trim();
  if (!key) return undefined;
  if (!KEY_TEXT.test(key)) throw new ConfigError(`${name} is not a key a vendor can be sent: printable ASCII without spaces inside (its value is not shown)`);
  return key;
}

/**
 * A URL setting as a message shows it: without the user and password its authority may
 * carry (`user:secret@host`, with or without a scheme; an `@` in its path is left alone), nor
 * its query and fragment (a proxy's `?api_key=`).
 */
export function shownUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? '';
  const afterScheme = url.slice(scheme.length);
  const queryAt = afterScheme.search(/[?#]/);
  const rest = queryAt < 0 ? afterScheme : `${afterScheme.slice(0, queryAt + 1)}[redacted]`;
  const authorityEnd = rest.search(/[/?#]/);
  const at = (authorityEnd < 0 ? rest : rest.slice(0, authorityEnd)).lastIndexOf('@');
  return at < 0 ? `${scheme}${rest}` : `${scheme}[redacted]${rest.slice(at)}`;
}

/** An http(s) URL that parses, as the AWS endpoints and the providers' base URLs must be. */
function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url) && URL.canParse(url);
}

/**
 * A provider's base URL (`OPENAI_BASE_URL`), without trailing slashes. One without a scheme
 * (`api.openai.com/v1`) would be taken, and every call to that vendor fail as internal_error.
 */
function baseUrl(env: NodeJS.ProcessEnv, provider: ProviderId): string | undefined {
  const name = providerBaseUrlName(provider);
  const url = optional(env, name);
  if (url === undefined) return undefined;
  const shape = provider === 'bedrock' ? 'an http(s) URL' : 'an http(s) URL with the version segment';
  if (!isHttpUrl(url)) throw new ConfigError(`${name} must be ${shape}, like ${exampleBaseUrl(provider)}, got "${shownUrl(url)}"`);
  // The gateway appends each call's path to it: after a query, the path would be part of the query.
  if (/[?#]/.test(url)) throw new ConfigError(`${name} must have no query or fragment (the gateway appends each call's path to it), got "${shownUrl(url)}"`);
  return withoutTrailingSlashes(url);
}

/**
 * The variables that say AWS credentials are at hand (keys, a named profile, Lambda's, a
 * container's, a web identity's), which make Bedrock real on a local host as a key makes
 * another vendor real; a default profile in ~/.aws alone does not.
 */
const AWS_CREDENTIAL_VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_PROFILE',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
] as const;

/**
 * GATEWAY_DATA_DIR, as an absolute path (a relative one is read from where `npm start` runs, the
 * repository, not the caller's directory: the banner says which). A blank one, or one with
 * spaces around it, is refused: a pasted trailing space had put the store in another directory
 * (" "), and the next start without it found none of its balances and keys.
 */
function dataDir(env: NodeJS.ProcessEnv): string | undefined {
  const raw = optional(env, 'GATEWAY_DATA_DIR');
  if (raw === undefined) return undefined;
  if (raw.trim() !== raw) throw new ConfigError(`GATEWAY_DATA_DIR must be a directory's path without spaces around it, got "${raw}"`);
  return resolvePath(raw);
}

/** DYNAMODB_ENDPOINT: one without a scheme (`127.0.0.1:8000`) failed every store call as an internal error, `Invalid URL`. */
function storeEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  const url = optional(env, 'DYNAMODB_ENDPOINT');
  if (url !== undefined && !isHttpUrl(url))
    throw new ConfigError(`DYNAMODB_ENDPOINT must be an http(s) URL, like http://127.0.0.1:8000 (the one npm start prints), got "${shownUrl(url)}"`);
  return url;
}

function awsEndpoints(env: NodeJS.ProcessEnv): AwsEndpoints {
  const endpoints: AwsEndpoints = {};
  if (optional(env, 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS')?.toLowerCase() === 'true') return endpoints;
  const global = optional(env, 'AWS_ENDPOINT_URL');
  for (const [service, name] of Object.entries(ENDPOINT_VARIABLES) as [keyof AwsEndpoints, string][]) {
    const url = optional(env, name) ?? global;
    if (url === undefined) continue;
    if (!isHttpUrl(url)) {
      throw new ConfigError(`${optional(env, name) === undefined ? 'AWS_ENDPOINT_URL' : name} must be an http(s) URL, got "${shownUrl(url)}"`);
    }
    endpoints[service] = url;
  }
  return endpoints;
}

/** The variables that say which store and tables to use: AWS's own, DYNAMODB_ENDPOINT, each `*_TABLE`, GATEWAY_STACK_NAME. */
const STORE_VARIABLE = /^AWS_|^DYNAMODB_ENDPOINT$|^GATEWAY_STACK_NAME$|_TABLE$/;

/**
 * `env` with only the variables that say which store to use (STORE_VARIABLE): what the admin
 * CLI reads, so that a gateway setting it has no use for (a `PORT` set for something else, a
 * provider's base URL) neither stops it nor reaches it.
 */
export function storeEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => STORE_VARIABLE.test(name)));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const providers = {} as Record<ProviderId, ProviderSettings>;
  for (const provider of PROVIDERS) {
    providers[provider] = {
      apiKey: providerKey(env, providerKeyName(provider)),
      baseUrl: baseUrl(env, provider),
    };
  }
  const regionSource = optional(env, 'AWS_REGION') !== undefined ? 'AWS_REGION' : optional(env, 'AWS_DEFAULT_REGION') !== undefined ? 'AWS_DEFAULT_REGION' : 'default';
  const region = regionSource === 'default' ? 'us-east-1' : regionName(env, regionSource)!;
  const port = int(env, 'PORT', 3000, 0, MAX_PORT);
  const dynamodbPort = int(env, 'DYNAMODB_PORT', 8000, 0, MAX_PORT);
  // The store listens first: the API's port taken by it had been said to be "in use" by something else.
  if (port !== 0 && port === dynamodbPort) throw new ConfigError(`PORT and DYNAMODB_PORT must differ (the API and the embedded store each listen on one), both are ${port}`);
  return {
    port,
    dynamodbPort,
    dynamodbEndpoint: storeEndpoint(env),
    awsEndpoints: awsEndpoints(env),
    region,
    regionSource,
    dataDir: dataDir(env),
    demoApiKey: optional(env, 'DEMO_API_KEY'),
    demoCredits: demoCredits(env),
    tables: tableNames(env),
    providers,
    // Bedrock is called in the function's own region unless BEDROCK_REGION says otherwise.
    bedrockRegion: regionName(env, 'BEDROCK_REGION') ?? region,
    awsCredentials: AWS_CREDENTIAL_VARIABLES.some((name) => optional(env, name) !== undefined),
    simulateProviders: simulateProviders(env),
    rateLimitRpm: int(env, 'RATE_LIMIT_RPM', 600, 1, MAX_RATE_LIMIT_RPM),
    maxInFlight: int(env, 'MAX_REQUESTS_IN_FLIGHT', 64, 1, MAX_REQUESTS_IN_FLIGHT),
    ...creditRates(env),
    requestDeadlineMs: requestDeadline(env),
    sseKeepAliveMs: int(env, 'SSE_KEEPALIVE_MS', 15_000, 1, MAX_SSE_KEEPALIVE_MS),
    authorizerCacheSeconds: int(env, 'AUTHORIZER_CACHE_SECONDS', 30, 0, MAX_AUTHORIZER_CACHE_SECONDS),
    providerSecretArn: optional(env, 'PROVIDER_SECRET_ARN'),
    judgeWorkflowArn: optional(env, WORKFLOW_ENV.stateMachineArn),
    claimCheckBucket: optional(env, WORKFLOW_ENV.claimCheckBucket),
    stackName: optional(env, 'GATEWAY_STACK_NAME'),
    tablesFromEnv: Object.values(TABLE_VARIABLES).some((name) => optional(env, name) !== undefined),
  };
}
