import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';

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
    ['CREDITS_PER_USD', '-1'],
  ])('rejects %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });
});
