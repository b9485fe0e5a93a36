import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import { loadConfig } from '../../shared/config.js';
import type { Log } from '../../shared/log.js';
import { createRouter } from '../../shared/providers/router.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import { ProviderSecretError, parseProviderKeys, withProviderSecret } from '../../shared/secrets/provider-keys.js';
import { SHORT_TIMEOUTS, startFakeAws, startSilentAws, type AwsAnswer } from '../support/fake-aws.js';
import { recordingLog } from '../support/log.js';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:ProviderKeysSecret-AbCdEf';
const OPENAI_KEY = 'sk-openai-SECRET-0123456789';
const ANTHROPIC_KEY = 'sk-ant-SECRET-0123456789';

/** Secrets Manager on loopback (AWS_ENDPOINT_URL_SECRETS_MANAGER), reached by the real SDK client: every call answers with the scripted answer. */
let secrets: Awaited<ReturnType<typeof startFakeAws>>;
let answer: AwsAnswer;
const secretAnswers = (value: Record<string, unknown>) => (answer = { body: value });

/** The api function's environment as Lambda and the stack set it: credentials, region, secret ARN, no key variable. */
const LAMBDA_ENV = { AWS_LAMBDA_FUNCTION_NAME: 'api', AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' };
const awsConfig = (env: Record<string, string> = {}) => loadConfig({ ...LAMBDA_ENV, PROVIDER_SECRET_ARN: SECRET_ARN, AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint, ...env });
const read = (config = awsConfig(), log?: Log) => withProviderSecret(config, { log });

beforeEach(async () => {
  secrets = await startFakeAws(() => answer);
  // The SDK's credential chain reads the function's credentials from the environment itself, as in Lambda.
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const) vi.stubEnv(name, LAMBDA_ENV[name]);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await secrets.close();
});

describe('Function: withProviderSecret', () => {
  it('reads the secret named by PROVIDER_SECRET_ARN and puts its keys into the providers', async () => {
    // Prepare
    secretAnswers({ SecretString: JSON.stringify({ OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: `${ANTHROPIC_KEY}\n` }) });
    const log = recordingLog();

    // Act
    const config = await read(awsConfig(), log);

    // Assess: one call, signed with the function's credentials for the secret's region.
    expect(secrets.calls.map((call) => [call.operation, call.input])).toEqual([['GetSecretValue', { SecretId: SECRET_ARN }]]);
    expect(secrets.calls[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, /);
    expect(secrets.calls[0]!.headers['x-amz-security-token']).toBe('token');
    expect(config.providers.openai.apiKey).toBe(OPENAI_KEY);
    expect(config.providers.anthropic.apiKey).toBe(ANTHROPIC_KEY);
    expect(config.providers.google.apiKey).toBeUndefined();
    expect(log.lines.join('\n')).toContain('"openai","anthropic"');
    expect(log.lines.join('\n')).not.toContain('SECRET');
  });

  it('leaves the config alone and reads nothing without PROVIDER_SECRET_ARN (local mode)', async () => {
    const local = loadConfig({ OPENAI_API_KEY: 'from-env' });
    expect(await read(local)).toBe(local);
    expect(secrets.calls).toHaveLength(0);
  });

  it('lets a key in the secret replace one from the environment, and keeps the base URL', async () => {
    secretAnswers({ SecretString: JSON.stringify({ OPENAI_API_KEY: OPENAI_KEY }) });
    const env = awsConfig({ OPENAI_API_KEY: 'from-env', OPENAI_BASE_URL: 'https://proxy.example/v1/' });
    const config = await read(env);
    expect(config.providers.openai).toEqual({ apiKey: OPENAI_KEY, baseUrl: 'https://proxy.example/v1' });
  });

  it('leaves a provider the secret has no key for unconfigured: its models fail with provider_not_configured', async () => {
    // Prepare
    secretAnswers({ SecretString: JSON.stringify({ OPENAI_API_KEY: OPENAI_KEY, MISTRAL_API_KEY: '  ' }) });
    const route = createRouter(await read());

    // Act / Assess: routing in AWS has no simulator to fall back on.
    expect(route(resolveModel('fam_c-5.4')!).endpoint.apiKey).toBe(OPENAI_KEY);
    for (const id of ['fam_a-opus-4-6', 'fam_g-large']) {
      let error: unknown;
      try {
        route(resolveModel(id)!);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).code).toBe('provider_not_configured');
    }
  });

  it.each([
    ['an AccessDenied', 'AccessDeniedException', 'User: arn:aws:sts::1:assumed-role/x is not authorized'],
    ['a missing secret', 'ResourceNotFoundException', "Secrets Manager can't find the specified secret."],
  ])(
    "rejects with a ProviderSecretError on %s, naming the error type only, and logs why, as every function that reads it does (the judge workflow's tasks had logged nothing)",
    async (_, type, message) => {
      answer = { status: 400, body: { __type: type, message } };
      const log = recordingLog();
      const failure = read(awsConfig(), log);
      await expect(failure).rejects.toBeInstanceOf(ProviderSecretError);
      await expect(failure).rejects.toThrow(`Reading the provider secret failed: ${type}`);
      await expect(failure).rejects.not.toThrow(message);
      const errorLine = log.lines.find((line) => line.includes('Provider keys not available'));
      expect(errorLine).toContain(`Reading the provider secret failed: ${type}`);
      expect(log.lines.join('\n')).not.toContain(message);
    },
  );

  it('rejects a secret without a string value (binary)', async () => {
    secretAnswers({ SecretBinary: 'AQID' });
    await expect(read()).rejects.toThrow(/no string value/);
  });

  it('fails a read whose answer hangs once its attempts (3) have each waited their deadline, instead of waiting on', async () => {
    // Prepare: a Secrets Manager that takes every request and never answers.
    const silent = await startSilentAws();
    try {
      const config = awsConfig({ AWS_ENDPOINT_URL_SECRETS_MANAGER: silent.endpoint });

      // Act
      const failure = withProviderSecret(config, { timeouts: SHORT_TIMEOUTS });

      // Assess
      await expect(failure).rejects.toThrow('Reading the provider secret failed: TimeoutError');
      expect(silent.calls.map((call) => call.operation)).toEqual(['GetSecretValue', 'GetSecretValue', 'GetSecretValue']);
    } finally {
      await silent.close();
    }
  });
});

describe('Function: parseProviderKeys', () => {
  it('reads every <PROVIDER>_API_KEY name of shared/config.ts', () => {
    const names = ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'XAI', 'CEREBRAS', 'DEEPSEEK', 'MISTRAL', 'GROQ'];
    const keys = parseProviderKeys(JSON.stringify(Object.fromEntries(names.map((n) => [`${n}_API_KEY`, `key-${n}`]))));
    expect(keys).toEqual({
      openai: 'key-OPENAI',
      anthropic: 'key-ANTHROPIC',
      google: 'key-GOOGLE',
      xai: 'key-XAI',
      cerebras: 'key-CEREBRAS',
      deepseek: 'key-DEEPSEEK',
      mistral: 'key-MISTRAL',
      groq: 'key-GROQ',
    });
  });

  it('leaves unconfigured, with an error naming the field and never the value, a key no vendor can be sent (it had failed every call as the vendor out of reach, ERR_INVALID_CHAR)', () => {
    const log = recordingLog();
    const secret = JSON.stringify({
      GROQ_API_KEY: 'gsk_SECRET\u200bKEY0123',
      OPENAI_API_KEY: 'sk-SECRET\nKEY0123',
      XAI_API_KEY: 'xai-SECRET KEY',
      MISTRAL_API_KEY: ' mistral-1\n',
    });

    const keys = parseProviderKeys(secret, log);

    expect(keys).toEqual({ mistral: 'mistral-1' });
    expect(log.lines).toHaveLength(1);
    const [message, fields] = JSON.parse(log.lines[0]!) as [string, { fields: string[] }];
    expect(message).toMatch(/^Provider keys ignored: not text a vendor can be sent/);
    expect(fields.fields).toEqual(['GROQ_API_KEY', 'OPENAI_API_KEY', 'XAI_API_KEY']);
    expect(log.lines[0]).not.toContain('SECRET');
  });

  it('ignores unknown fields and non-string values with a warning that names the fields, never a value', () => {
    // Prepare: a typo, a number, and keys pasted as field names.
    const log = recordingLog();
    // An access key ID's shape, built here so that no key-like literal sits in the source.
    const pastedKeyId = `AKIA${'TESTFIELD'.padEnd(16, '0')}`;
    const secret = JSON.stringify({ OPENAI_KEY: OPENAI_KEY, GROQ_API_KEY: 42, 'sk-ant-pasted-name': '', [pastedKeyId]: 'x', XAI_API_KEY: 'xai-1' });

    // Act
    const keys = parseProviderKeys(secret, log);

    // Assess
    expect(keys).toEqual({ xai: 'xai-1' });
    expect(log.lines).toHaveLength(1);
    const [, fields] = JSON.parse(log.lines[0]!) as [string, { ignoredFields: string[]; otherIgnoredFields: number }];
    expect(fields.ignoredFields).toEqual(['OPENAI_KEY', 'GROQ_API_KEY']);
    // The pasted key and the AWS access key ID, shaped like a variable's name, counted and not named.
    expect(fields.otherIgnoredFields).toBe(2);
    expect(log.lines[0]).not.toContain(pastedKeyId);
    expect(log.lines[0]).not.toContain('AKIA');
    expect(log.lines[0]).not.toContain('SECRET');
    expect(log.lines[0]).not.toContain('xai-1');
  });

  it.each([
    ['not JSON', `{"OPENAI_API_KEY": "${OPENAI_KEY}"`, /not valid JSON/],
    ['a JSON string', JSON.stringify(OPENAI_KEY), /must be a JSON object/],
    ['a JSON array', JSON.stringify([OPENAI_KEY]), /must be a JSON object/],
    ['null', 'null', /must be a JSON object/],
  ])('rejects a secret that is %s, without quoting it', (_, secret, pattern) => {
    let error: unknown;
    try {
      parseProviderKeys(secret);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderSecretError);
    expect((error as Error).message).toMatch(pattern);
    expect((error as Error).message).not.toContain('SECRET');
    expect((error as Error).cause).toBeUndefined();
  });
});
