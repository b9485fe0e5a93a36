import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS, ContextError, settingsFromContext } from '../../infra/stack/context.js';
import { DEFAULT_SETTINGS, resolveSettings } from '../../infra/stack/gateway-stack.js';

const settingsOf = (context: Record<string, unknown>) => settingsFromContext(new App({ context }).node);

describe('Function: settingsFromContext', () => {
  it('leaves every setting to the stack default when no context is given', () => {
    expect(resolveSettings(settingsOf({}))).toEqual(DEFAULT_SETTINGS);
  });

  it('reads `-c key=value` strings and cdk.json values alike', () => {
    // Act
    const settings = settingsOf({
      [CONTEXT_KEYS.authorizerCacheTtlSeconds]: '0',
      [CONTEXT_KEYS.integrationTimeoutSeconds]: 90,
      [CONTEXT_KEYS.throttlingRateLimit]: '12.5',
      [CONTEXT_KEYS.throttlingBurstLimit]: '25',
      [CONTEXT_KEYS.logRetentionDays]: '7',
      [CONTEXT_KEYS.stageName]: 'live',
      [CONTEXT_KEYS.apiGatewayCloudWatchRole]: 'false',
      [CONTEXT_KEYS.rateLimitRpm]: '60',
      [CONTEXT_KEYS.maxRequestsInFlight]: '16',
      [CONTEXT_KEYS.creditsPerUsd]: 200,
      [CONTEXT_KEYS.markup]: '1.2',
      [CONTEXT_KEYS.responseStreaming]: 'false',
      [CONTEXT_KEYS.alarmEmail]: 'ops@example.com',
    });

    // Assess
    expect(settings.authorizerCacheTtl?.toSeconds()).toBe(0);
    expect(settings.integrationTimeout?.toSeconds()).toBe(90);
    expect(settings).toMatchObject({
      throttlingRateLimit: 12.5,
      throttlingBurstLimit: 25,
      logRetention: RetentionDays.ONE_WEEK,
      stageName: 'live',
      apiGatewayCloudWatchRole: false,
      rateLimitRpm: 60,
      maxRequestsInFlight: 16,
      creditsPerUsd: 200,
      markup: 1.2,
      responseStreaming: false,
      alarmEmail: 'ops@example.com',
    });
  });

  it.each<[string, unknown]>([
    [CONTEXT_KEYS.authorizerCacheTtlSeconds, '3601'],
    [CONTEXT_KEYS.integrationTimeoutSeconds, '2'],
    // REQUEST_DEADLINE_MS 1000 ms: every model would time out at once.
    [CONTEXT_KEYS.integrationTimeoutSeconds, '5'],
    [CONTEXT_KEYS.integrationTimeoutSeconds, 13],
    [CONTEXT_KEYS.integrationTimeoutSeconds, '29.5'],
    [CONTEXT_KEYS.integrationTimeoutSeconds, '301'],
    [CONTEXT_KEYS.throttlingRateLimit, 'fast'],
    [CONTEXT_KEYS.throttlingBurstLimit, '-1'],
    // API Gateway would throttle every request.
    [CONTEXT_KEYS.throttlingBurstLimit, '0'],
    [CONTEXT_KEYS.logRetentionDays, '8'],
    [CONTEXT_KEYS.stageName, 'my stage'],
    [CONTEXT_KEYS.apiGatewayCloudWatchRole, 'yes'],
    [CONTEXT_KEYS.markup, '0'],
    [CONTEXT_KEYS.rateLimitRpm, '1000001'],
    // Past what an account's item holds as open reservations: every function would refuse its configuration.
    [CONTEXT_KEYS.maxRequestsInFlight, '2001'],
    // Hex, exponents and padding, which Number() would read, as the environment's settings refuse them.
    [CONTEXT_KEYS.rateLimitRpm, '0x10'],
    [CONTEXT_KEYS.throttlingBurstLimit, '1e3'],
    [CONTEXT_KEYS.integrationTimeoutSeconds, ' 60'],
    [CONTEXT_KEYS.markup, '0x2'],
    [CONTEXT_KEYS.responseStreaming, 'no'],
    [CONTEXT_KEYS.alarmEmail, 'ops at example'],
  ])('rejects %s = %j', (key, value) => {
    expect(() => settingsOf({ [key]: value })).toThrow(ContextError);
  });

  it.each([
    ['gateway:integrationTimeoutSecond', 'gateway:integrationTimeoutSeconds'],
    ['gateway:RateLimitRpm', 'gateway:rateLimitRpm'],
    ['gateway:logRetention', 'gateway:logRetentionDays'],
    ['gateway:alarmMail', 'gateway:alarmEmail'],
  ])('refuses the unknown key %s, which would be ignored, naming it and the nearest known key', (key, nearest) => {
    expect(() => settingsOf({ [key]: '5' })).toThrow(ContextError);
    expect(() => settingsOf({ [key]: '5' })).toThrow(new RegExp(`^Unknown context key ${key}: did you mean ${nearest}\\?`));
  });

  it("leaves other apps' and the CDK's own context keys alone", () => {
    expect(() => settingsOf({ '@aws-cdk/core:newStyleStackSynthesis': true, 'other:integrationTimeoutSecond': '5', 'aws:cdk:bundling-stacks': [] })).not.toThrow();
  });

  it.each<[Record<string, unknown>, RegExp]>([
    [{ [CONTEXT_KEYS.markup]: '1e10' }, /^gateway:markup must be a positive number of at most 10000, got "1e10"$/],
    [{ [CONTEXT_KEYS.creditsPerUsd]: 100_000 }, /^gateway:creditsPerUsd must be a positive number of at most 10000, got 100000$/],
    // With the other left to its default (100 credits a USD).
    [{ [CONTEXT_KEYS.markup]: '101' }, /^gateway:creditsPerUsd x gateway:markup must be at most 10000, got 100 x 101: a request can cost up to \$100000/],
    [{ [CONTEXT_KEYS.creditsPerUsd]: '1000', [CONTEXT_KEYS.markup]: 10.5 }, /^gateway:creditsPerUsd x gateway:markup must be at most 10000, got 1000 x 10.5/],
  ])('refuses credit rates whose estimates would leave the balance range (MARKUP=1e10 failed every prompt): %j', (context, message) => {
    expect(() => settingsOf(context)).toThrow(ContextError);
    expect(() => settingsOf(context)).toThrow(message);
  });

  it('takes credit rates whose product is at most 10000', () => {
    expect(settingsOf({ [CONTEXT_KEYS.markup]: '100' })).toMatchObject({ markup: 100 });
    expect(settingsOf({ [CONTEXT_KEYS.creditsPerUsd]: 10_000, [CONTEXT_KEYS.markup]: '1' })).toMatchObject({ creditsPerUsd: 10_000, markup: 1 });
  });

  it('names the integration timeout, its range and why when it is too short to leave the models time', () => {
    expect(() => settingsOf({ [CONTEXT_KEYS.integrationTimeoutSeconds]: '5' })).toThrow(
      /^gateway:integrationTimeoutSeconds must be an integer from 14 to 300, got "5": REQUEST_DEADLINE_MS is 4 s less, and below 10000 ms/,
    );
    expect(settingsOf({ [CONTEXT_KEYS.integrationTimeoutSeconds]: '14' }).integrationTimeout?.toSeconds()).toBe(14);
  });
});

describe('Function: resolveSettings', () => {
  it('rejects an integration timeout whose request deadline could leave the models no time', () => {
    expect(() => resolveSettings({ integrationTimeout: Duration.seconds(4) })).toThrow(/at least 14 s/);
    expect(() => resolveSettings({ integrationTimeout: Duration.seconds(13) })).toThrow(/integrationTimeout \(gateway:integrationTimeoutSeconds\) must be at least 14 s, got 13 s/);
    expect(resolveSettings({ integrationTimeout: Duration.seconds(14) }).integrationTimeout.toSeconds()).toBe(14);
  });

  it("rejects an integration timeout past API Gateway's 5-minute idle limit for a streamed answer, which is written only once whole", () => {
    expect(() => resolveSettings({ integrationTimeout: Duration.seconds(301) })).toThrow(/cannot exceed 300 s/);
    expect(resolveSettings({ integrationTimeout: Duration.seconds(300) }).integrationTimeout.toSeconds()).toBe(300);
  });

  it('caps the integration timeout at 29 s without response streaming (buffered: the regional quota applies)', () => {
    expect(() => resolveSettings({ responseStreaming: false, integrationTimeout: Duration.seconds(30) })).toThrow(/cannot exceed 29 s without response streaming/);
    expect(resolveSettings({ responseStreaming: false }).integrationTimeout.toSeconds()).toBe(29);
    expect(resolveSettings({ responseStreaming: true, integrationTimeout: Duration.seconds(30) }).integrationTimeout.toSeconds()).toBe(30);
  });
});

describe('The CDK app (infra/app.ts)', () => {
  it.each([
    [{ 'gateway:stageName': 'a-b' }, 'gateway:stageName must be letters, digits or underscores, got "a-b"'],
    [
      { 'gateway:integrationTimeoutSeconds': 31, 'gateway:responseStreaming': false },
      'integrationTimeout (gateway:integrationTimeoutSeconds) cannot exceed 29 s without response streaming (gateway:responseStreaming false;',
    ],
  ])(
    'says a setting out of its range in one line and exits 1, no stack trace: %j',
    (context, said) => {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
        cwd: fileURLToPath(new URL('../../', import.meta.url)),
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify(context),
          CDK_OUTDIR: mkdtempSync(join(tmpdir(), 'cdk-out-')),
          // The SDK's notice that its releases after January 2027 need Node 22 (reference.md, Configuration).
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        encoding: 'utf8',
      });
      expect(run.status).toBe(1);
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(said);
    },
    60_000,
  );
});
