import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { startSimulator, type Simulator } from '../../infra/local/simulator/server.js';
import { generateApiKey } from '../../shared/auth/keys.js';
import { PROVIDERS, type ProviderId } from '../../shared/catalog/types.js';
import type { Log } from '../../shared/log.js';
import { startLocalHost } from '../../infra/local/host.js';
import { chatCompletionAnswer } from '../support/fixtures.js';
import { post, testConfig, type Answer } from '../support/local.js';

/**
 * Issue 8, "No API key, provider key or Authorization value appears in any log line or
 * error body, in success or failure paths". The host runs as with real vendors:
 * SIMULATE_PROVIDERS=0, every provider configured with a key and a base URL, the base
 * URLs pointing at a separate simulator (the vendors' stand-in), Bedrock signing with
 * static AWS credentials from the environment. The vendors then answer errors whose body
 * echoes the key the gateway sent, and the gateway is made to fail; every answer body
 * and every log line is searched for every secret.
 */

const secret = (prefix: string, bytes = 16) => `${prefix}${randomBytes(bytes).toString('hex')}`;

/** Each provider's key, shaped like the vendor's own. */
const PROVIDER_KEYS: Record<Exclude<ProviderId, 'bedrock'>, string> = {
  openai: secret('sk-proj-'),
  anthropic: secret('sk-ant-api03-'),
  google: secret('AIzaSy'),
  xai: secret('xai-'),
  cerebras: secret('csk-'),
  deepseek: secret('sk-'),
  mistral: secret(''),
  groq: secret('gsk_'),
};
const AWS_ACCESS_KEY_ID = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
const AWS_SECRET_ACCESS_KEY = secret('aws/', 20);

/** One model per provider (every wire protocol is among them). */
const MODELS: Record<ProviderId, string> = {
  openai: 'fam_c-5.4',
  anthropic: 'fam_a-haiku-4-5',
  google: 'fam_b-3.1-flash-lite',
  xai: 'fam_d-4.3',
  cerebras: 'fam_e-gpt-oss-120b',
  deepseek: 'fam_f-v4-flash',
  mistral: 'fam_g-small',
  groq: 'fam_i-4-scout',
  bedrock: 'fam_h-micro',
};

const logLines: string[] = [];
const written: string[] = [];
let vendors: Simulator;
let host: LocalHost;
let restore: () => void = () => undefined;

/** Every secret of this test, and the part of each that identifies it (a vendor may echo a fragment). */
function secrets(): string[] {
  const all = [...Object.values(PROVIDER_KEYS), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, host.demo.apiKey];
  // The random tail of each: what makes a key a key, whatever prefix or mask a vendor adds.
  return [...all, ...all.map((key) => key.slice(-16))];
}

function leaks(where: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [name, text] of Object.entries(where)) for (const s of secrets()) if (text.includes(s)) found.push(`${name} holds ${s.slice(0, 6)}…`);
  return found;
}

const everyLog = () => ({ log: logLines.join('\n'), stdio: written.join('') });

beforeAll(async () => {
  const env = { ...process.env };
  process.env.AWS_ACCESS_KEY_ID = AWS_ACCESS_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = AWS_SECRET_ACCESS_KEY;
  const writes = [process.stdout.write, process.stderr.write] as const;
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
  }
  restore = () => {
    process.stdout.write = writes[0];
    process.stderr.write = writes[1];
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) {
      if (env[name] === undefined) delete process.env[name];
      else process.env[name] = env[name];
    }
  };

  vendors = await startSimulator();
  const providerEnv: Record<string, string> = { SIMULATE_PROVIDERS: '0', DEMO_CREDITS: '1000', BEDROCK_BASE_URL: vendors.baseUrl('bedrock') };
  for (const [provider, key] of Object.entries(PROVIDER_KEYS)) {
    providerEnv[`${provider.toUpperCase()}_API_KEY`] = key;
    providerEnv[`${provider.toUpperCase()}_BASE_URL`] = vendors.baseUrl(provider);
  }
  const record =
    (level: string) =>
    (message: string, ...extra: Record<string, unknown>[]) => {
      logLines.push(JSON.stringify({ level, message, extra }, (_k, v) => (v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v)));
    };
  const log: Log = { info: record('info'), warn: record('warn'), error: record('error') };
  host = await startLocalHost(testConfig(providerEnv), { log });
});
afterAll(async () => {
  restore();
  await host?.close();
  await vendors?.close();
});

/**
 * An error body in every vendor's shape at once, each message echoing what the gateway
 * sent: the key (whole, after "Bearer", and masked as OpenAI masks it). Bedrock's request
 * carries only the access key ID (SigV4 never sends the secret), so that is what it echoes.
 */
function echoingBody(provider: ProviderId): Record<string, unknown> {
  const key = provider === 'bedrock' ? AWS_ACCESS_KEY_ID : PROVIDER_KEYS[provider];
  const sent = provider === 'bedrock' ? `AWS4-HMAC-SHA256 Credential=${key}/20260101/us-east-1/bedrock/aws4_request` : `Bearer ${key}`;
  const message = `Incorrect API key provided: ${key}. You sent Authorization: ${sent}; masked: ${key.slice(0, 3)}***${key.slice(-4)}`;
  return {
    type: 'error',
    error: { type: 'authentication_error', message, code: 401, status: 'UNAUTHENTICATED' },
    message,
    detail: [{ loc: ['header', 'authorization'], msg: message, input: key }],
  };
}

describe('Secrets in answers and logs', () => {
  it('runs every provider against the stand-in vendors with its key (nothing simulated in-process)', async () => {
    expect(host.simulatedProviders).toEqual([]);
    const answer = await post(host, { prompt: 'Say hello', models: Object.values(MODELS) });
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((r: any) => [r.modelId, r.status])).toEqual(Object.values(MODELS).map((m) => [m, 'completed']));
    // Each vendor was called with credentials (recorded redacted by the simulator).
    const providers = new Set(vendors.calls().map((c) => c.provider));
    expect([...providers].sort()).toEqual([...PROVIDERS].sort());
    for (const call of vendors.calls()) {
      const credential = call.headers.authorization ?? call.headers['x-api-key'] ?? call.headers['x-goog-api-key'];
      expect(credential, call.provider).toBe('[redacted]');
    }
    expect(leaks({ body: JSON.stringify(answer.body), ...everyLog() })).toEqual([]);
  });

  it.each([401, 403, 500])('keeps keys out of failed results when a vendor echoes them (%i)', async (status) => {
    vendors.reset();
    for (const provider of PROVIDERS) vendors.setFault({ kind: 'status', status, provider, body: echoingBody(provider) });
    const answer: Answer = await post(host, { prompt: 'Say hello', models: Object.values(MODELS) });
    expect(answer.status).toBe(200);
    for (const result of answer.body.results) {
      expect(result, result.modelId).toMatchObject({ status: 'failed', error: { upstreamStatus: status } });
      // The vendor's words stay (they help), the key does not; a refused key is the operator's to replace, in the gateway's words.
      if (status === 401) expect(result.error.message, result.modelId).toBe("The provider refused the gateway's key for this model: the gateway's operator must replace it");
      else expect(result.error.message, result.modelId).toMatch(/Incorrect API key provided/);
    }
    expect(leaks({ body: JSON.stringify(answer.body), ...everyLog() })).toEqual([]);
    vendors.reset();
  });

  it('keeps no start of a key in a failed result when the vendor message quoting it is cut short', async () => {
    vendors.reset();
    const keyOf = (provider: ProviderId) => (provider === 'bedrock' ? AWS_ACCESS_KEY_ID : PROVIDER_KEYS[provider]);
    for (const provider of PROVIDERS) {
      // Cut at 500 characters, the message would end 20 characters into the key.
      const message = `${'x'.repeat(480)}${keyOf(provider)} is not a valid key`;
      vendors.setFault({
        kind: 'status',
        status: 403,
        provider,
        body: { type: 'error', error: { type: 'permission_error', message, code: 403, status: 'PERMISSION_DENIED' }, message },
      });
    }
    const answer: Answer = await post(host, { prompt: 'Say hello', models: Object.values(MODELS) });
    expect(answer.status).toBe(200);
    for (const [provider, modelId] of Object.entries(MODELS) as [ProviderId, string][]) {
      const result = answer.body.results.find((r: any) => r.modelId === modelId);
      expect(result, modelId).toMatchObject({ status: 'failed', error: { upstreamStatus: 403 } });
      expect(result.error.message, modelId).not.toContain(keyOf(provider).slice(0, 10));
    }
    vendors.reset();
  });

  it("keeps the operator's accounts with its vendors, and what every tenant together uses of them, out of failed results", async () => {
    vendors.reset();
    const org = 'org-OPERATORorg1234567890ab';
    const usage = 'Limit 30000, Used 29412, Requested 1850';
    // Each vendor's words for its limits, naming the operator's organisation and every tenant's use of it.
    const limited = `Rate limit reached in organization ${org} on tokens per min (TPM): ${usage}.`;
    for (const provider of PROVIDERS) {
      vendors.setFault({
        kind: 'status',
        status: 429,
        provider,
        retryAfter: '0',
        body: { type: 'error', error: { type: 'rate_limit_error', message: limited, code: 429 }, message: limited },
      });
    }
    const answer: Answer = await post(host, { prompt: 'Say hello', models: Object.values(MODELS) });
    expect(answer.status).toBe(200);
    for (const result of answer.body.results) {
      expect(result, result.modelId).toMatchObject({
        status: 'failed',
        error: { code: 'upstream_rate_limited', upstreamStatus: 429, message: "The provider is limiting the gateway's calls to this model just now; retry later" },
      });
    }

    // Any other refusal keeps the vendor's words, less the accounts they name.
    vendors.reset();
    const named = [
      'Project proj_OPERATORproj1234567890ab',
      org,
      'organization 4c5d1a2e-0000-4000-8000-0123456789ab',
      'User: arn:aws:sts::123456789012:assumed-role/ModelCompareGateway-ApiFunctionServiceRole/fn',
      'account 123456789012',
      'consumer projects/987654321098',
    ].join(', ');
    const denied = `${named} may not use this model`;
    for (const provider of PROVIDERS)
      vendors.setFault({ kind: 'status', status: 403, provider, body: { type: 'error', error: { type: 'permission_error', message: denied, code: 403 }, message: denied } });
    const refused: Answer = await post(host, { prompt: 'Say hello', models: Object.values(MODELS) });
    for (const result of refused.body.results) {
      expect(result.error.message, result.modelId).toBe(
        'Project [redacted], [redacted], organization [redacted], User: [redacted], account [redacted], consumer projects/[redacted] may not use this model',
      );
    }
    for (const body of [answer.body, refused.body]) {
      for (const part of ['OPERATOR', '29412', '4c5d1a2e', '123456789012', '987654321098', 'ModelCompareGateway']) expect(JSON.stringify(body)).not.toContain(part);
    }
    vendors.reset();
  });

  it('keeps no start of a key in a failed result when the vendor puts the key in a field the message names', async () => {
    vendors.reset();
    const key = PROVIDER_KEYS.openai;
    // A response status of 30 characters, then the key: cut at 40, the message would hold the key's first 10.
    const answer = { id: 'resp_x', object: 'response', status: `${'x'.repeat(30)}${key}`, output: [], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
    vendors.setFault({ kind: 'status', status: 200, provider: 'openai', body: answer });
    const response: Answer = await post(host, { prompt: 'Say hello', models: [MODELS.openai] });
    const [result] = response.body.results;
    expect(result).toMatchObject({ status: 'failed', error: { message: "The provider answered with response status 'unrecognised'" } });
    expect(leaks({ body: JSON.stringify(response.body), ...everyLog() })).toEqual([]);
    expect(JSON.stringify(response.body)).not.toContain(key.slice(0, 10));
    vendors.reset();
  });

  it("keeps the key out of an output and a judge's reasoning when the vendor echoes it there", async () => {
    vendors.reset();
    const key = PROVIDER_KEYS.cerebras;
    const verdict = JSON.stringify({ reasoning: `My key is ${key}, as sent.`, scoreA: 7, scoreB: 5, winner: 'A' });
    const usage = { prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 };
    // The contestant's call comes first: its output echoes the key in prose (an output holding the judges' very verdict would make theirs its own, quoted).
    vendors.setFault({ kind: 'status', status: 200, provider: 'cerebras', times: 1, body: chatCompletionAnswer(`My key is ${key}, as sent.`, usage) });
    vendors.setFault({ kind: 'status', status: 200, provider: 'cerebras', body: chatCompletionAnswer(verdict, usage) });

    const answer: Answer = await post(host, { prompt: 'Say hello', models: ['fam_e-gpt-oss-120b', 'fam_k-8b'], judges: ['fam_e-gpt-oss-120b'] });

    expect(answer.status).toBe(200);
    expect(answer.body.results[0].output).toContain('My key is [redacted], as sent.');
    const reasonings = answer.body.evaluations.flatMap((e: any) => e.orders.map((o: any) => o.verdict?.reasoning));
    expect(reasonings).toEqual(['My key is [redacted], as sent.', 'My key is [redacted], as sent.']);
    expect(leaks({ body: JSON.stringify(answer.body), ...everyLog() })).toEqual([]);
    vendors.reset();
  });

  it('keeps the Authorization value out of 401 bodies and logs', async () => {
    const unknown = generateApiKey();
    const answers = await Promise.all([
      post(host, { prompt: 'x', models: ['fam_c-5.4'] }, { authorization: `Bearer ${unknown}` }),
      post(host, { prompt: 'x', models: ['fam_c-5.4'] }, { authorization: `Basic ${unknown}` }),
      post(host, { prompt: 'x', models: ['fam_c-5.4'] }, { authorization: `Bearer ${unknown} ${host.demo.apiKey}` }),
      post(host, { prompt: 'x', models: ['fam_c-5.4'] }, { authorization: host.demo.apiKey }),
      post(host, '{not json', { authorization: `Bearer ${unknown}` }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(JSON.stringify(answer.body)).not.toContain(unknown);
      expect(JSON.stringify(answer.body)).not.toContain(host.demo.apiKey);
    }
    expect(leaks({ ...everyLog(), bodies: JSON.stringify(answers.map((a) => a.body)) })).toEqual([]);
    expect(everyLog().log + everyLog().stdio).not.toContain(unknown);
  });

  it('keeps the Authorization value out of 5xx bodies and logs, even when the failing error quotes it', async () => {
    const accounts = host.gateway.accounts;
    const original = accounts.get.bind(accounts);
    accounts.get = async () => {
      // A store fault whose message quotes the request (as some library errors do).
      throw new Error(`Connection refused while sending Authorization: Bearer ${host.demo.apiKey} with ${PROVIDER_KEYS.openai}`);
    };
    try {
      const answer = await post(host, { prompt: 'x', models: ['fam_c-5.4'] });
      expect(answer.status).toBe(500);
      expect(answer.body.error.code).toBe('internal_error');
      expect(logLines.some((line) => line.includes('Unhandled error'))).toBe(true);
      expect(leaks({ body: JSON.stringify(answer.body), ...everyLog() })).toEqual([]);
    } finally {
      accounts.get = original;
    }
  });
});
