import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PROVIDERS, type ProviderId } from '../catalog/types.js';
import { KEY_TEXT, providerKeyName, type GatewayConfig } from '../config.js';
import { silentLog, type Log } from '../log.js';
import { awsRequestHandler, type AwsTimeouts } from '../http/aws-handler.js';
import { redactSecrets } from '../http/redact.js';

/**
 * Provider keys in AWS: one Secrets Manager secret, a JSON object with the names of the
 * local variables (`{"OPENAI_API_KEY": "...", "ANTHROPIC_API_KEY": "..."}`), read once per
 * cold start. Neither a key nor any part of the secret's text reaches an error message
 * or a log line; only field names that look like variable names are ever reported.
 */
export type ProviderKeys = Partial<Record<ProviderId, string>>;

/** The secret could not be read or is not a JSON object. Its message never quotes the secret. */
export class ProviderSecretError extends Error {
  override name = 'ProviderSecretError';
}

export interface ProviderSecretOptions {
  /** The client to read with; by default one for the config's region and Secrets Manager endpoint, closed after the read. */
  client?: SecretsManagerClient;
  log?: Log;
  /** Per attempt, for the default client: SECRET_TIMEOUTS unless a test shortens them. */
  timeouts?: AwsTimeouts;
}

/**
 * A read that hangs fails its attempt (the SDK's 3 in all): the api's first request reads
 * while its reservation is held, and answers 503 when the read fails.
 */
export const SECRET_TIMEOUTS = Object.freeze({ connectMs: 1_000, answerMs: 3_000 });

const KEY_NAMES: ReadonlyMap<string, ProviderId> = new Map(PROVIDERS.map((provider) => [providerKeyName(provider), provider]));

/** A field name safe to log: the shape of a variable name, so that a key pasted as a name is never printed. */
const VARIABLE_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * The keys in the secret's JSON text. Unknown fields and fields whose value is not a
 * string are ignored with a warning naming them; an empty or blank value counts as no key,
 * and so does one no vendor can be sent (KEY_TEXT), with an error naming its field.
 */
export function parseProviderKeys(secretString: string, log: Log = silentLog): ProviderKeys {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    // No cause: V8's SyntaxError quotes the text around the error, which is the secret.
    throw new ProviderSecretError('The provider secret is not valid JSON; expected {"OPENAI_API_KEY": "...", ...}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ProviderSecretError('The provider secret must be a JSON object: {"OPENAI_API_KEY": "...", ...}');
  }

  const keys: ProviderKeys = {};
  const ignored: string[] = [];
  const unsendable: string[] = [];
  let unnamed = 0;
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    const provider = KEY_NAMES.get(name);
    if (provider === undefined || typeof value !== 'string') {
      // A name shaped like a key (an operator who pasted one as a field's name) is counted, not named.
      if (VARIABLE_NAME.test(name) && redactSecrets(name) === name) ignored.push(name);
      else unnamed += 1;
      continue;
    }
    // Keys pasted with a trailing newline are common; a blank value means "not configured".
    const key = value.trim();
    if (key === '') continue;
    if (KEY_TEXT.test(key)) keys[provider] = key;
    else unsendable.push(name);
  }
  if (unsendable.length > 0) {
    // Sent, Node refuses the header before it leaves (ERR_INVALID_CHAR): every call had failed as the vendor out of reach, retried, counted against the vendor.
    log.error('Provider keys ignored: not text a vendor can be sent (printable ASCII, no spaces inside); their providers are not configured', { fields: unsendable });
  }
  if (ignored.length > 0 || unnamed > 0) {
    log.warn('Provider secret fields ignored: only <PROVIDER>_API_KEY string fields are read', {
      ignoredFields: ignored,
      otherIgnoredFields: unnamed,
      expectedFields: [...KEY_NAMES.keys()],
    });
  }
  return keys;
}

/**
 * Reads and parses the secret with the function's credentials (the SDK's credential
 * chain), from the region's Secrets Manager or the configured endpoint
 * (`AWS_ENDPOINT_URL_SECRETS_MANAGER`, `AWS_ENDPOINT_URL`). Read once per container: the
 * client it makes is closed afterwards.
 */
export async function readProviderKeys(config: GatewayConfig & { providerSecretArn: string }, options: ProviderSecretOptions = {}): Promise<ProviderKeys> {
  // Loaded with the first read: the api's cold start does not compile it (its first request reads while its reserve is in flight).
  const { GetSecretValueCommand, SecretsManagerClient } = await import('./secrets-manager.js');
  const client =
    options.client ??
    new SecretsManagerClient({
      region: config.region,
      ...(config.awsEndpoints.secretsManager ? { endpoint: config.awsEndpoints.secretsManager } : {}),
      requestHandler: awsRequestHandler(options.timeouts ?? SECRET_TIMEOUTS),
    });
  try {
    let secretString: unknown;
    try {
      ({ SecretString: secretString } = await client.send(new GetSecretValueCommand({ SecretId: config.providerSecretArn })));
    } catch (error) {
      // Error answers name the secret and the role, never its value; only the error type is kept.
      const code = (error as NodeJS.ErrnoException).code;
      throw new ProviderSecretError(`Reading the provider secret failed: ${(error as Error).name}${typeof code === 'string' ? ` (${code})` : ''}`, { cause: error });
    }
    if (typeof secretString !== 'string') throw new ProviderSecretError('The provider secret has no string value; store the keys as a JSON string');
    return parseProviderKeys(secretString, options.log);
  } finally {
    if (!options.client) client.destroy();
  }
}

/** The config with the keys merged in: a key in the secret replaces one from the environment. */
export function withProviderKeys(config: GatewayConfig, keys: ProviderKeys): GatewayConfig {
  const providers = { ...config.providers };
  for (const provider of PROVIDERS) {
    const apiKey = keys[provider];
    if (apiKey !== undefined) providers[provider] = { ...providers[provider], apiKey };
  }
  return { ...config, providers };
}

/**
 * The config as the `api` function runs with it: unchanged without PROVIDER_SECRET_ARN
 * (local mode, keys from the environment); otherwise with the secret's keys. A provider
 * that has no key after this fails its models with `provider_not_configured` (router).
 */
export async function withProviderSecret(config: GatewayConfig, options: ProviderSecretOptions = {}): Promise<GatewayConfig> {
  if (config.providerSecretArn === undefined) return config;
  const log = options.log ?? silentLog;
  let keys: ProviderKeys;
  try {
    keys = await readProviderKeys({ ...config, providerSecretArn: config.providerSecretArn }, options);
  } catch (error) {
    // Said by name (and a ProviderSecretError's message, which never quotes the secret), by
    // every function that reads it: the workflow's tasks had said nothing of why.
    log.error('Provider keys not available', {
      errorName: (error as Error)?.name,
      ...(error instanceof ProviderSecretError ? { errorMessage: error.message } : {}),
    });
    throw error;
  }
  log.info('Provider keys loaded', { providers: PROVIDERS.filter((p) => keys[p] !== undefined) });
  return withProviderKeys(config, keys);
}
