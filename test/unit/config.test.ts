import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { startTestHost } from '../support/local.js';

describe('Function: loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, dynamodbPort: 8000, creditsPerUsd: 100, markup: 1, simulateProviders: false, requestDeadlineMs: 25_000 });
    expect(config.providers.openai).toEqual({ apiKey: undefined, baseUrl: undefined });
  });

  it('reads provider keys and base URLs', () => {
    const config = loadConfig({ GROQ_API_KEY: 'k', GROQ_BASE_URL: 'https://example.test/openai/v1/', SIMULATE_PROVIDERS: '1' });
    expect(config.providers.groq).toEqual({ apiKey: 'k', baseUrl: 'https://example.test/openai/v1' });
    expect(config.simulateProviders).toBe(true);
  });

  it.each([
    ['PORT', 'abc'],
    ['MARKUP', '0'],
    ['REQUEST_DEADLINE_MS', '5'],
    // Past the longest deployed integration, and near the 15 minutes after which the reconciler releases a running request's hold.
    ['REQUEST_DEADLINE_MS', '300001'],
    ['CREDITS_PER_USD', '-1'],
    // Past what an account's one-minute rate window can ever count.
    ['RATE_LIMIT_RPM', '1000001'],
    // A balance past a billion credits would be read back by DynamoDB's clients as a BigInt.
    ['DEMO_CREDITS', '1e10'],
  ])('rejects %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });

  it.each(['100', '1000', '9999'])('refuses REQUEST_DEADLINE_MS=%s, which could leave the models no time after the reserve, naming it and why', (value) => {
    // The models stop 1 s before the deadline and are sent once the reserve (one store call, 7 s at worst) holds.
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: value })).toThrow(/^REQUEST_DEADLINE_MS must be an integer from 10000 to 300000 .*reserve/);
  });

  it('takes the smallest deadline that leaves the models 2 s after a reserve that took the store worst case', () => {
    expect(loadConfig({ REQUEST_DEADLINE_MS: '10000' }).requestDeadlineMs).toBe(10_000);
  });

  it.each([
    ['OPENAI_BASE_URL', 'api.openai.com/v1'],
    ['ANTHROPIC_BASE_URL', 'ftp://api.anthropic.com/v1'],
    ['GROQ_BASE_URL', 'https://'],
    ['BEDROCK_BASE_URL', 'bedrock-runtime.eu-west-1.amazonaws.com'],
  ])('refuses %s=%s, which every call to that vendor would fail on, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be an http\\(s\\) URL`));
  });

  it.each(['127.0.0.1:8000', 'localhost', 'tcp://127.0.0.1:8000'])(
    'refuses DYNAMODB_ENDPOINT=%s, on which every store call failed as an internal error, naming the variable',
    (value) => {
      expect(() => loadConfig({ DYNAMODB_ENDPOINT: value })).toThrow(/^DYNAMODB_ENDPOINT must be an http\(s\) URL/);
      expect(loadConfig({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }).dynamodbEndpoint).toBe('http://127.0.0.1:8000');
    },
  );

  it('takes http and https base URLs, and an empty one as unset', () => {
    const config = loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:4010/openai/v1', MISTRAL_BASE_URL: 'HTTPS://api.mistral.ai/v1/', XAI_BASE_URL: '' });
    expect(config.providers.openai.baseUrl).toBe('http://127.0.0.1:4010/openai/v1');
    expect(config.providers.mistral.baseUrl).toBe('HTTPS://api.mistral.ai/v1');
    expect(config.providers.xai.baseUrl).toBeUndefined();
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', '65536'],
    ['DYNAMODB_PORT', '65536'],
  ])('refuses %s=%s, past the highest TCP port', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be an integer >= 0 and <= 65535`));
  });

  it.each(['yes', 'TRUE', 'True', 'on', '2', ' 1'])('refuses SIMULATE_PROVIDERS=%j, which was read as false (with keys set: the real, paid vendors)', (value) => {
    expect(() => loadConfig({ SIMULATE_PROVIDERS: value })).toThrow(/^SIMULATE_PROVIDERS must be 1 or true/);
  });

  it.each([
    ['1', true],
    ['true', true],
    ['0', false],
    ['false', false],
    ['', false],
  ])('takes SIMULATE_PROVIDERS=%j as %s', (value, simulate) => {
    expect(loadConfig({ SIMULATE_PROVIDERS: value }).simulateProviders).toBe(simulate);
  });

  it('refuses DEMO_CREDITS finer than a micro-credit, which opened the demo account with 0, and takes one micro-credit', () => {
    expect(() => loadConfig({ DEMO_CREDITS: '0.0000001' })).toThrow(/^DEMO_CREDITS must have at most 6 decimals/);
    expect(() => loadConfig({ DEMO_CREDITS: '12.3456789' })).toThrow(ConfigError);
    expect(loadConfig({ DEMO_CREDITS: '0.000001' }).demoCredits).toBe(0.000001);
    expect(loadConfig({ DEMO_CREDITS: '12.5' }).demoCredits).toBe(12.5);
  });

  it('takes the largest values it allows', () => {
    expect(loadConfig({ REQUEST_DEADLINE_MS: '300000', DEMO_CREDITS: '1e9', PORT: '65535', DYNAMODB_PORT: '65535' })).toMatchObject({
      requestDeadlineMs: 300_000,
      demoCredits: 1e9,
      port: 65_535,
      dynamodbPort: 65_535,
    });
  });
});

describe('Function: startLocalHost, DEMO_API_KEY', () => {
  it.each(['demo', 'my-local-key', 'local key with spaces', 'sk_demo!12345678901'])(
    'refuses %j, which the gateway would never accept as a key, before it starts anything',
    async (key) => {
      await expect(startTestHost({ DEMO_API_KEY: key })).rejects.toThrow(/^DEMO_API_KEY must be 16 to 256 characters/);
    },
  );
});
