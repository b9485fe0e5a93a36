import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { loadConfig, type GatewayConfig } from '../../shared/config.js';
import { startLocalHost, type LocalHost } from '../../infra/local/host.js';
import { assertMatchesOpenApi } from './openapi-validator.js';

/** A configuration for tests: free ports, in-memory store, every provider simulated. */
export function testConfig(env: Record<string, string> = {}): GatewayConfig {
  return loadConfig({ PORT: '0', DYNAMODB_PORT: '0', SIMULATE_PROVIDERS: '1', AUTHORIZER_CACHE_SECONDS: '0', ...env });
}

/**
 * A host as `npm start` runs it, but for its close: a connection a test left unread (a reader it
 * stopped) is closed once it has moved nothing for 2 s, not the minute a user's reader gets.
 */
export async function startTestHost(env: Record<string, string> = {}): Promise<LocalHost> {
  return startLocalHost(testConfig(env), { closeStalledMs: 2_000 });
}

/**
 * One host for the test file: started before its tests, closed after them, its simulator
 * reset and mocks restored around each test. Returns the host's getter.
 */
export function useTestHost(env: Record<string, string> = {}): () => LocalHost {
  let host: LocalHost | undefined;
  beforeAll(async () => {
    host = await startTestHost(env);
  });
  afterAll(async () => {
    await host?.close();
  });
  beforeEach(() => host?.simulator.reset());
  afterEach(() => vi.restoreAllMocks());
  return () => {
    if (!host) throw new Error('the test host is not started yet');
    return host;
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * POSTs to the prompt endpoint of a host; the body is JSON-encoded unless it is a string.
 * Every answer is checked against the OpenAPI document (status, content type, headers,
 * body) before it is returned: a test that gets an answer gets a documented one. It
 * returns once the host has also written what follows the answer (settle, ledger, prompt
 * log, claim-check deletes), so that what a test reads next is final.
 */
export async function post(host: LocalHost, payload: unknown, headers: Record<string, string> = {}, path = '/api/v1/prompt'): Promise<Answer> {
  const answer = await postAnswered(host, payload, headers, path);
  await host.settled();
  return answer;
}

/** `post`, returning as soon as the answer is in: what follows it may still be running (`host.settled()` waits for it). */
export async function postAnswered(host: LocalHost, payload: unknown, headers: Record<string, string> = {}, path = '/api/v1/prompt'): Promise<Answer> {
  const response = await fetch(`${host.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json', ...headers },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const text = await response.text();
  const answer = { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  assertMatchesOpenApi(answer);
  return answer;
}
