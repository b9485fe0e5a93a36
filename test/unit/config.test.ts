import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODELS } from '../../shared/catalog/models.js';
import { ConfigError, loadConfig, MAX_CREDIT_RATE, MAX_REQUEST_USD, shownUrl } from '../../shared/config.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { MAX_SEARCH_QUERIES_CHARGED } from '../../shared/pricing/bound.js';
import { MAX_BALANCE_MICRO, MICRO_PER_CREDIT } from '../../shared/pricing/micro-credits.js';
import { startTestHost } from '../support/local.js';

describe('Function: loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, dynamodbPort: 8000, creditsPerUsd: 100, markup: 1, simulateProviders: false, requestDeadlineMs: 25_000 });
    expect(config.providers.openai).toEqual({ apiKey: undefined, baseUrl: undefined });
  });

  it("takes AWS credentials as at hand (Bedrock real on a local host) from a profile's, keys' or container's variable, not from nothing", () => {
    for (const name of ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI']) expect(loadConfig({ [name]: 'x' }).awsCredentials, name).toBe(true);
    expect(loadConfig({ AWS_REGION: 'eu-west-1' }).awsCredentials).toBe(false);
  });

  it.each([
    ['AWS_REGION', 'eu west 1'],
    ['AWS_REGION', 'EU-WEST-1'],
    ['AWS_DEFAULT_REGION', 'us-east-1 '],
    ['BEDROCK_REGION', 'us-west-2/'],
    ['BEDROCK_REGION', '-us-west-2'],
  ])('refuses %s=%j, which no SDK call could make a host of, naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      new ConfigError(`${name} must be an AWS region's name, lower-case letters, digits and hyphens (us-east-1), got ${JSON.stringify(value)}`),
    );
  });

  it.each([
    [{ LEDGER_TABLE: 'gateway-accounts' }, 'ACCOUNTS_TABLE and LEDGER_TABLE name the same table, "gateway-accounts"'],
    [{ API_KEYS_TABLE: 'keys', PROMPT_LOGS_TABLE: 'keys' }, 'API_KEYS_TABLE and PROMPT_LOGS_TABLE name the same table, "keys"'],
  ])('refuses two tables of one name (%j): an admin command had written ledger entries over accounts', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('takes the regions of every partition', () => {
    expect(loadConfig({ AWS_REGION: 'us-gov-west-1', BEDROCK_REGION: 'eu-isoe-west-1' })).toMatchObject({ region: 'us-gov-west-1', bedrockRegion: 'eu-isoe-west-1' });
    expect(loadConfig({ AWS_DEFAULT_REGION: 'cn-north-1' })).toMatchObject({ region: 'cn-north-1', regionSource: 'AWS_DEFAULT_REGION', bedrockRegion: 'cn-north-1' });
  });

  it('reads provider keys and base URLs', () => {
    const config = loadConfig({ GROQ_API_KEY: 'k', GROQ_BASE_URL: 'https://example.test/openai/v1/', SIMULATE_PROVIDERS: '1' });
    expect(config.providers.groq).toEqual({ apiKey: 'k', baseUrl: 'https://example.test/openai/v1' });
    expect(config.simulateProviders).toBe(true);
  });

  it('trims a provider key, and refuses one no vendor can be sent by name, never quoting it (its calls had all failed as the vendor out of reach)', () => {
    expect(loadConfig({ GROQ_API_KEY: ' gsk_1\n' }).providers.groq.apiKey).toBe('gsk_1');
    expect(loadConfig({ GROQ_API_KEY: '  ' }).providers.groq.apiKey).toBeUndefined();
    for (const key of ['gsk_SECRET\u200bKEY', 'gsk_SECRET KEY', 'gsk_SECRET\nKEY']) {
      expect(() => loadConfig({ GROQ_API_KEY: key })).toThrow(ConfigError);
      expect(() => loadConfig({ GROQ_API_KEY: key })).toThrow(/^GROQ_API_KEY is not a key a vendor can be sent/);
      expect(() => loadConfig({ GROQ_API_KEY: key })).not.toThrow(/SECRET/);
    }
  });

  it.each([
    ['PORT', 'abc'],
    ['MARKUP', '0'],
    ['REQUEST_DEADLINE_MS', '5'],
    // Past the longest deployed integration, and near the 18 minutes after which the reconciler releases a running request's hold.
    ['REQUEST_DEADLINE_MS', '296001'],
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
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: value })).toThrow(/^REQUEST_DEADLINE_MS must be an integer from 10000 to 296000 .*reserve/);
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

  it.each([
    ['OPENAI_BASE_URL', 'proxyuser:KCANSTARTPW110@proxy.internal/v1', '[redacted]@proxy.internal/v1'],
    ['DYNAMODB_ENDPOINT', 'ftp://ops:KCANSTARTPW110@127.0.0.1:8000', 'ftp://[redacted]@127.0.0.1:8000'],
    ['AWS_ENDPOINT_URL', 'KCANSTARTPW110@localstack', '[redacted]@localstack'],
  ])('refuses %s without showing the credentials in it', (name, value, shown) => {
    expect(() => loadConfig({ [name]: value })).toThrow(`got "${shown}"`);
    expect(() => loadConfig({ [name]: value })).not.toThrow(/KCANSTARTPW110/);
  });

  it('refuses a provider base URL with a query or fragment, the query not shown (a key in it stays out of the message)', () => {
    const refusal = (value: string) => {
      try {
        loadConfig({ OPENAI_BASE_URL: value });
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('https://proxy.example.com/v1?api_key=sk-KCANQUERY110')).toBe(
      `OPENAI_BASE_URL must have no query or fragment (the gateway appends each call's path to it), got "https://proxy.example.com/v1?[redacted]"`,
    );
    expect(refusal('https://proxy.example.com:99999/v1?api_key=sk-KCANQUERY110')).toMatch(
      /must be an http\(s\) URL .*got "https:\/\/proxy\.example\.com:99999\/v1\?\[redacted\]"$/,
    );
    expect(refusal('https://proxy.example.com/v1#sk-KCANQUERY110')).toMatch(/got "https:\/\/proxy\.example\.com\/v1#\[redacted\]"$/);
  });

  it('shows a URL setting without the user and password of its authority, an @ of its path left alone', () => {
    expect(shownUrl('http://ops:pw@127.0.0.1:8000/x')).toBe('http://[redacted]@127.0.0.1:8000/x');
    expect(shownUrl('ops:pw@proxy.internal/v1')).toBe('[redacted]@proxy.internal/v1');
    expect(shownUrl('https://proxy.internal/users/me@example.com')).toBe('https://proxy.internal/users/me@example.com');
    expect(shownUrl('proxy.internal/users/me@example.com')).toBe('proxy.internal/users/me@example.com');
    expect(shownUrl('http://ops:pw@127.0.0.1:8000/x?token=t@k#f')).toBe('http://[redacted]@127.0.0.1:8000/x?[redacted]');
    expect(shownUrl('ops@proxy.internal?key=k')).toBe('[redacted]@proxy.internal?[redacted]');
  });

  it("gives each vendor's own base URL as the example: Bedrock's has no version segment", () => {
    expect(() => loadConfig({ ANTHROPIC_BASE_URL: 'api.anthropic.com' })).toThrow(/with the version segment, like https:\/\/api\.anthropic\.com\/v1, got/);
    expect(() => loadConfig({ BEDROCK_BASE_URL: 'bedrock-runtime.eu-west-1.amazonaws.com' })).toThrow(
      /^BEDROCK_BASE_URL must be an http\(s\) URL, like https:\/\/bedrock-runtime\.us-east-1\.amazonaws\.com, got/,
    );
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

  it.each([
    ['PORT', '0x10'],
    ['PORT', '1e3'],
    ['PORT', ' 80'],
    ['PORT', '+80'],
    ['DYNAMODB_PORT', '0b11'],
    ['RATE_LIMIT_RPM', '1e3'],
    ['MAX_REQUESTS_IN_FLIGHT', '8.0'],
    ['AUTHORIZER_CACHE_SECONDS', '0o17'],
    ['SSE_KEEPALIVE_MS', '15e3'],
  ])('refuses %s=%j, an integer not in plain decimal digits (PORT=0x10 listened on port 16), naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      new RegExp(`^${name} must be an integer >= \\d+.*, in decimal digits only \\(not 1e3 or 0x10\\), got "${value.replace('+', '\\+')}"$`),
    );
  });

  it("refuses MAX_REQUESTS_IN_FLIGHT past 2000: each request running is a reservation in its account's item, which DynamoDB holds to 400 KB", () => {
    expect(loadConfig({ MAX_REQUESTS_IN_FLIGHT: '2000' }).maxInFlight).toBe(2000);
    expect(() => loadConfig({ MAX_REQUESTS_IN_FLIGHT: '100000' })).toThrow(/^MAX_REQUESTS_IN_FLIGHT must be an integer >= 1 and <= 2000, got "100000"$/);
  });

  it("refuses AUTHORIZER_CACHE_SECONDS past API Gateway's most, 3600 s, which the stack holds its cache to", () => {
    expect(loadConfig({ AUTHORIZER_CACHE_SECONDS: '3600' }).authorizerCacheSeconds).toBe(3600);
    expect(() => loadConfig({ AUTHORIZER_CACHE_SECONDS: '99999999999' })).toThrow(/^AUTHORIZER_CACHE_SECONDS must be an integer >= 0 and <= 3600, got "99999999999"$/);
  });

  it.each(['1e4', '0x2710', '10000.0'])('refuses REQUEST_DEADLINE_MS=%j, not in plain decimal digits', (value) => {
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: value })).toThrow(/^REQUEST_DEADLINE_MS must be an integer from 10000 to 296000 \(ms\), in decimal digits only/);
  });

  it("refuses REQUEST_DEADLINE_MS above its maximum with why it is the maximum, not the lower bound's reason", () => {
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: '296001' })).toThrow(
      /^REQUEST_DEADLINE_MS must be an integer from 10000 to 296000 \(ms\), got "296001": the stack's longest integration is 300 s, a request's deadline 4 s shorter/,
    );
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: '296001' })).not.toThrow(/reserve/);
  });

  it.each(['3000000000', '2147483648', '300001'])('refuses SSE_KEEPALIVE_MS=%s, past the longest request (past 2^31 - 1 ms, Node fires the timer every millisecond)', (value) => {
    expect(() => loadConfig({ SSE_KEEPALIVE_MS: value })).toThrow(new RegExp(`^SSE_KEEPALIVE_MS must be an integer >= 1 and <= 300000, got "${value}"$`));
  });

  it.each([
    ['MARKUP', '1e10', /^MARKUP must be a positive decimal number of at most 10000, got "1e10"$/],
    ['CREDITS_PER_USD', '100000', /^CREDITS_PER_USD must be a positive decimal number of at most 10000, got "100000"$/],
    ['MARKUP', '0x10', /^MARKUP must be a positive decimal number/],
    ['CREDITS_PER_USD', 'Infinity', /^CREDITS_PER_USD must be a positive decimal number/],
  ])('refuses %s=%s, past what an estimate can be charged in (MARKUP=1e10 failed every prompt as internal_error), or not a decimal number', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('refuses CREDITS_PER_USD x MARKUP past MAX_CREDIT_RATE, naming both, and takes it at the maximum', () => {
    expect(() => loadConfig({ MARKUP: '101' })).toThrow(/^CREDITS_PER_USD x MARKUP must be at most 10000, got 100 x 101: a request can cost up to \$100000/);
    expect(() => loadConfig({ CREDITS_PER_USD: '1000', MARKUP: '10.5' })).toThrow(ConfigError);
    expect(loadConfig({ MARKUP: '100' })).toMatchObject({ creditsPerUsd: 100, markup: 100 });
    expect(loadConfig({ CREDITS_PER_USD: '10000', MARKUP: '1' })).toMatchObject({ creditsPerUsd: 10_000, markup: 1 });
    expect(loadConfig({ CREDITS_PER_USD: '1e-7', MARKUP: '1.2' })).toMatchObject({ creditsPerUsd: 1e-7, markup: 1.2 });
  });

  it('keeps the costliest request the catalog allows, at the highest credit rate, within the balance an account holds', () => {
    // Every call at most its model's whole context at the highest input rate, and more output than it can bill at the highest output rate.
    const callUsd = (model: (typeof MODELS)[number]) => {
      const { prices } = model;
      const rates = [prices, ...(prices.longContext ? [prices.longContext] : [])];
      const input = Math.max(...rates.flatMap((r) => [r.input, r.cachedInput ?? 0, r.cacheWrite ?? 0]));
      const output = Math.max(...rates.map((r) => r.output));
      const outputTokens = LIMITS.maxTokens + 2 * model.maxOutputTokens + (model.capabilities.tuning.thinkingBudget?.max ?? 0);
      return (model.contextWindow * input + outputTokens * output) / 1e6 + MAX_SEARCH_QUERIES_CHARGED * (prices.searchQueryUsd ?? 0);
    };
    const costliestCall = Math.max(...MODELS.map(callUsd));
    expect(costliestCall * (LIMITS.models + LIMITS.judgeCalls)).toBeLessThanOrEqual(MAX_REQUEST_USD);
    expect(MAX_REQUEST_USD * MAX_CREDIT_RATE * MICRO_PER_CREDIT).toBeLessThanOrEqual(MAX_BALANCE_MICRO);
  });

  it('takes the largest values it allows', () => {
    expect(loadConfig({ REQUEST_DEADLINE_MS: '296000', DEMO_CREDITS: '1e9', PORT: '65535', DYNAMODB_PORT: '65534', SSE_KEEPALIVE_MS: '300000' })).toMatchObject({
      requestDeadlineMs: 296_000,
      demoCredits: 1e9,
      port: 65_535,
      dynamodbPort: 65_534,
      sseKeepAliveMs: 300_000,
    });
  });

  it('refuses PORT and DYNAMODB_PORT alike, naming both (it had been "port in use", the store holding it), but for 0, any free port', () => {
    expect(() => loadConfig({ PORT: '7981', DYNAMODB_PORT: '7981' })).toThrow(
      new ConfigError('PORT and DYNAMODB_PORT must differ (the API and the embedded store each listen on one), both are 7981'),
    );
    expect(loadConfig({ PORT: '0', DYNAMODB_PORT: '0' })).toMatchObject({ port: 0, dynamodbPort: 0 });
  });

  it.each([' ', ' /tmp/data', '/tmp/data '])(
    'refuses GATEWAY_DATA_DIR=%j, blank or with spaces around it (a pasted space had put the store elsewhere, without a word)',
    (value) => {
      expect(() => loadConfig({ GATEWAY_DATA_DIR: value })).toThrow(/^GATEWAY_DATA_DIR must be a directory's path without spaces around it/);
    },
  );

  it('reads GATEWAY_DATA_DIR as an absolute path, as the banner then prints it', () => {
    expect(loadConfig({ GATEWAY_DATA_DIR: 'data/store' }).dataDir).toBe(resolve('data/store'));
    expect(loadConfig({ GATEWAY_DATA_DIR: '/tmp/a b' }).dataDir).toBe('/tmp/a b');
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
