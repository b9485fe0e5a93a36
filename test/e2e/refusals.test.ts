import { TOO_MANY_FIELDS } from '../../shared/contract/json-fields.js';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalHost } from '../../infra/local/host.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';
import { revokeApiKey } from '../../shared/auth/revoke.js';
import { LIMITS } from '../../shared/contract/limits.js';
import { PREPARE_EARLY_BYTES } from '../../shared/orchestrator/prompt-service.js';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import { body } from '../support/fixtures.js';
import { post, startTestHost, type Answer } from '../support/local.js';

let host: LocalHost;
let balanceBefore: number;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(async () => {
  await host?.close();
});
beforeEach(async () => {
  host.simulator.reset();
  balanceBefore = (await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro;
});

/** Every refusal: the error body, no provider call, no change to the balance. */
async function expectRefused(answer: Answer, status: number, code: string): Promise<void> {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body).toMatchObject({ error: { code, message: expect.any(String) } });
  expect(host.simulator.calls()).toHaveLength(0);
  expect((await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro).toBe(balanceBefore);
}

async function raw(method: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${host.url}${path}`, { method, ...init });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe('Authentication', () => {
  it.each([
    ['no Authorization header', {}],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['a malformed key', { authorization: 'Bearer not a key' }],
    ['a key that is too short', { authorization: 'Bearer abc' }],
    ['an unknown key', { authorization: `Bearer ${generateApiKey()}` }],
  ])('answers 401 for %s', async (_name, headers) => {
    const answer = await raw('POST', '/api/v1/prompt', { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body()) });
    await expectRefused(answer, 401, 'unauthorized');
    // RFC 9110 11.6.1: a 401 names the scheme it takes.
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 401 for a revoked key, which worked before', async () => {
    const key = generateApiKey();
    await host.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId: host.demo.accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
    expect((await post(host, body({ models: ['fam_k-8b'] }), { authorization: `Bearer ${key}` })).status).toBe(200);
    await host.gateway.apiKeys.revoke(hashApiKey(key));
    host.simulator.reset();
    balanceBefore = (await host.gateway.accounts.get(host.demo.accountId))!.balanceMicro;
    await expectRefused(await post(host, body(), { authorization: `Bearer ${key}` }), 401, 'unauthorized');
  });

  it("answers 401 for a key revoked while API Gateway's cache still allows it: its prompts, streamed or not, spend nothing from then on", async () => {
    // Prepare: a host whose authorizer decisions are cached, as a stage's are (30 s by default).
    const cached = await startTestHost({ AUTHORIZER_CACHE_SECONDS: '300' });
    try {
      const key = generateApiKey();
      const authorization = `Bearer ${key}`;
      await cached.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId: cached.demo.accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
      expect((await post(cached, body({ models: ['fam_k-8b'] }), { authorization })).status).toBe(200);
      const balance = (await cached.gateway.accounts.get(cached.demo.accountId))!.balanceMicro;
      cached.simulator.reset();

      // Act
      await revokeApiKey(cached.gateway, hashApiKey(key));
      const answers = [
        await post(cached, body({ models: ['fam_k-8b'] }), { authorization }),
        await post(cached, body({ models: ['fam_k-8b'] }), { authorization, accept: 'text/event-stream' }),
      ];
      const catalog = await fetch(`${cached.url}/api/v1/models`, { headers: { authorization } });

      // Assert
      for (const answer of answers) {
        expect(answer.status).toBe(401);
        expect(answer.body).toMatchObject({ error: { code: 'unauthorized' } });
      }
      expect(cached.simulator.calls()).toHaveLength(0);
      expect((await cached.gateway.accounts.get(cached.demo.accountId))!.balanceMicro).toBe(balance);
      // The catalog, which spends nothing, follows the cached decision until it expires.
      expect(catalog.status).toBe(200);
    } finally {
      await cached.close();
    }
  });

  it('checks the key before the body', async () => {
    await expectRefused(await post(host, '{not json', { authorization: 'Bearer nope' }), 401, 'unauthorized');
  });

  it('checks the key before reading a body over the limit whose length is not declared (chunked)', async () => {
    // 6 MiB in 64 KiB chunks, over the 5 MiB limit, without a key.
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 6 * 1024 * 1024) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const answer = await raw('POST', '/api/v1/prompt', { headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    await expectRefused(answer, 401, 'unauthorized');
  });

  it('accepts the scheme in any case', async () => {
    expect((await post(host, body({ models: ['fam_k-8b'] }), { authorization: `bearer ${host.demo.apiKey}` })).status).toBe(200);
  });
});

describe('Routes', () => {
  it.each([
    ['/api/v2/prompt', 'POST'],
    ['/api/v1/prompts', 'POST'],
    ['/api/v1', 'POST'],
    ['//api/v1/prompt', 'POST'],
  ])('answers 404 for %s, naming that path', async (path) => {
    const answer = await post(host, body(), {}, path);
    await expectRefused(answer, 404, 'not_found');
    expect(answer.body.error.message).toContain(`No route for ${path};`);
  });

  it('answers 404 for a path of 12,000 slashes and a letter, its trailing slashes found from its end', async () => {
    await expectRefused(await post(host, body(), {}, `/api/v1/${'/'.repeat(12_000)}x`), 404, 'not_found');
  });

  it('routes a path that ends in a slash as its route, as API Gateway does (reference.md, 404)', async () => {
    expect((await post(host, body({ models: ['fam_k-8b'] }), {}, '/api/v1/prompt/')).status).toBe(200);
    expect((await post(host, body({ models: ['fam_k-8b'] }), {}, '/api/v1/prompt///')).status).toBe(200);
  });

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('answers 405 with Allow for %s', async (method) => {
    const answer = await raw(method, '/api/v1/prompt', method === 'GET' ? {} : { body: '{}' });
    await expectRefused(answer, 405, 'method_not_allowed');
    expect(answer.headers.get('allow')).toBe('POST');
  });

  it("answers 405 with Allow: GET for a POST to the comparison page (GET /), as the stack's mock does", async () => {
    const answer = await post(host, body(), {}, '/');
    await expectRefused(answer, 405, 'method_not_allowed');
    expect(answer.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('Bodies', () => {
  it('answers 400 malformed_json for a body that is not JSON', async () => {
    await expectRefused(await post(host, '{"prompt": "x", '), 400, 'malformed_json');
  });

  it('answers 400 malformed_json for JSON that is not UTF-8 (RFC 8259), as its UTF-8 spelling would be answered 200', async () => {
    const text = JSON.stringify(body({ prompt: 'caf\u00e9', models: ['fam_k-8b'] }));
    const headers = { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json' };
    await expectRefused(await raw('POST', '/api/v1/prompt', { headers, body: Buffer.from(text, 'latin1') }), 400, 'malformed_json');
    expect((await raw('POST', '/api/v1/prompt', { headers, body: Buffer.from(text, 'utf8') })).status).toBe(200);
    await host.settled();
  });

  it('answers 400 naming the field for a string holding half of a surrogate pair (valid JSON escapes, not text), and takes a whole pair', async () => {
    const headers = { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json' };
    const lone = await raw('POST', '/api/v1/prompt', { headers, body: '{"prompt":"caf\\ud800e","models":["fam_k-8b"]}' });
    await expectRefused(lone, 400, 'invalid_request');
    expect(JSON.stringify(lone.body)).toContain('/prompt');
    // Nested as deep as the field cap allows: found all the same, named by its whole pointer.
    const deep = `${'{"a":'.repeat(4_000)}"\\udc00"${'}'.repeat(4_000)}`;
    const nested = await raw('POST', '/api/v1/prompt', { headers, body: `{"prompt":"x","models":["fam_k-8b"],"metadata":${deep}}` });
    expect(nested.status).toBe(400);
    expect(nested.body.error.details[0].field === `/metadata${'/a'.repeat(4_000)}`).toBe(true);
    // Deeper, it is more fields than a body may hold: refused before it is parsed or walked.
    const deeper = `${'{"a":'.repeat(50_000)}"\\udc00"${'}'.repeat(50_000)}`;
    const refused = await raw('POST', '/api/v1/prompt', { headers, body: `{"prompt":"x","models":["fam_k-8b"],"metadata":${deeper}}` });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ field: '', message: TOO_MANY_FIELDS }]);
    // Half a pair in a member name: named, as text (U+FFFD in its place), not sent back half a pair.
    for (const named of ['{"prompt":"x","models":["fam_k-8b"],"\\ud800x":1}', '{"prompt":"x","models":["fam_k-8b"],"metadata":{"a\\udc00":{"b":"\\ud800"}}}']) {
      const answer = await raw('POST', '/api/v1/prompt', { headers, body: named });
      expect(answer.status).toBe(400);
      const details = answer.body.error.details as { field: string; message: string }[];
      expect(details.length).toBeGreaterThan(0);
      for (const { field, message } of details) expect(field.isWellFormed() && message.isWellFormed(), field).toBe(true);
    }
    const pair = await raw('POST', '/api/v1/prompt', { headers, body: '{"prompt":"smile \\ud83d\\ude00","models":["fam_k-8b"]}' });
    expect(pair.status).toBe(200);
    await host.settled();
  });

  it('answers 400 for an empty body', async () => {
    await expectRefused(await post(host, ''), 400, 'malformed_json');
  });

  it('answers 413 for a body over the limit, sent whole without waiting (no Expect): the body is read on, never met by a reset', async () => {
    // Closed at once, the connection met the body's bytes still coming with a reset, which cut the 413 away about half the time.
    const oversized = JSON.stringify(body({ prompt: 'x'.repeat(LIMITS.bodyBytes) }));
    await expectRefused(await post(host, oversized), 413, 'payload_too_large');
    // A client that reads its answer once it has sent its whole body (its kernel drops what it
    // received when a reset arrives): the 413 is there to read, on a connection still open.
    const socket = connect(Number(new URL(host.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    const head = `POST /api/v1/prompt HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${host.demo.apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(oversized)}\r\n\r\n`;
    await new Promise<void>((resolve, reject) => socket.write(head + oversized, (error) => (error ? reject(error) : resolve())));
    socket.resume();
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    await new Promise<void>((resolve, reject) => {
      socket.on('data', () => text.includes('payload_too_large') && resolve());
      socket.once('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    socket.destroy();
    // Sent in chunks, without a length: refused once it passes the limit, the rest discarded.
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 6; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1024 * 1024)));
        controller.close();
      },
    });
    const headers = { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json' };
    const answer = await fetch(`${host.url}/api/v1/prompt`, { method: 'POST', headers, body: chunked, duplex: 'half' } as RequestInit);
    expect([answer.status, ((await answer.json()) as any).error.code]).toEqual([413, 'payload_too_large']);
  });

  it('answers 413 to a body over the limit sent with Expect: 100-continue (as curl sends it) before the body, and lets a body that fits go ahead', async () => {
    const ask = (length: number) =>
      new Promise<{ continued: boolean; status: number; body: any }>((resolve, reject) => {
        let continued = false;
        const request = httpRequest(`${host.url}/api/v1/prompt`, {
          method: 'POST',
          headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json', 'content-length': String(length), expect: '100-continue' },
        });
        const payload = JSON.stringify(body({ models: ['fam_k-8b'] })).padEnd(length, ' ');
        request.on('continue', () => {
          continued = true;
          request.end(payload);
        });
        request.on('response', (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk));
          response.on('end', () => resolve({ continued, status: response.statusCode ?? 0, body: JSON.parse(text) }));
        });
        request.on('error', reject);
      });
    const refused = await ask(LIMITS.bodyBytes + 1);
    expect(refused).toMatchObject({ continued: false, status: 413, body: { error: { code: 'payload_too_large' } } });
    const fits = await ask(1_000);
    expect(fits).toMatchObject({ continued: true, status: 200 });
    await host.settled();
  });

  it('answers 415 for a content type that is not JSON', async () => {
    await expectRefused(await post(host, JSON.stringify(body()), { 'content-type': 'text/xml' }), 415, 'unsupported_media_type');
  });

  it('answers 415 naming the header for a body declared in a charset other than UTF-8 (RFC 8259), never reading it as UTF-8', async () => {
    const text = JSON.stringify(body({ prompt: 'caf\u00e9', models: ['fam_k-8b'] }));
    const headers = { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json; charset=utf-16le' };
    const utf16 = await raw('POST', '/api/v1/prompt', { headers, body: Buffer.from(text, 'utf16le') });
    await expectRefused(utf16, 415, 'unsupported_media_type');
    expect(utf16.body.error.details).toEqual([{ field: 'header:Content-Type', message: expect.stringContaining('charset "utf-16le"') }]);
    // Bytes that are UTF-8 as well: as latin1 its sender meant "cafÃ©".
    await expectRefused(await post(host, text, { 'content-type': 'application/json; charset="ISO-8859-1"' }), 415, 'unsupported_media_type');
    expect((await post(host, text, { 'content-type': 'application/json; charset=UTF-8' })).status).toBe(200);
  });

  it('accepts what `curl -d` sends by default (form content type, JSON body)', async () => {
    const answer = await post(host, JSON.stringify(body({ models: ['fam_k-8b'] })), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(answer.status).toBe(200);
  });

  it('names the field and the model ID a newcomer probably meant', async () => {
    const answer = await post(host, {
      prompt: 'x',
      models: ['claude-opus-4.6'],
      generation_settings: { max_tokens: 5 },
      model_tuning: { 'claude-opus-4.6': { thinking_budget: 0 } },
    });
    await expectRefused(answer, 400, 'invalid_request');
    expect(answer.body.error.details).toContainEqual({ field: '/generation_settings/max_tokens', message: 'is not a known field; did you mean "maxTokens"?' });
    expect(answer.body.error.details).toContainEqual({ field: '/model_tuning/claude-opus-4.6/thinking_budget', message: 'is not a known field; did you mean "thinkingBudget"?' });
    const second = await post(host, { prompt: 'x', models: ['claude-opus-4.6'] });
    expect(second.body.error.details[0].message).toMatch(/^unknown model ID "claude-opus-4\.6"; did you mean "claude-opus-4-6" \(fam_a-opus-4-6\)/);
    expect(host.simulator.calls()).toHaveLength(0);
  });

  it('answers 400 with every failing field as a JSON pointer', async () => {
    const answer = await post(host, { prompt: 'x', models: ['fam_c-5.4', 'not-a-model'], generation_settings: { temperature: 3 }, colour: 'blue' });
    await expectRefused(answer, 400, 'invalid_request');
    expect(answer.body.error.details).toEqual([
      { field: '/colour', message: 'is not a known field' },
      { field: '/models/1', message: 'unknown model ID "not-a-model"' },
      { field: '/generation_settings/temperature', message: 'must be <= 2' },
    ]);
    const semantic = await post(host, { prompt: 'x', models: ['fam_c-5.4', 'not-a-model'] });
    expect(semantic.body.error).toEqual({
      code: 'invalid_request',
      message: '/models/1: unknown model ID "not-a-model"',
      details: [{ field: '/models/1', message: 'unknown model ID "not-a-model"' }],
    });
  });
});

describe('Credits', () => {
  it('answers 402 with the estimate and the balance when the balance is short', async () => {
    const account = await host.gateway.credits.openAccount({ balanceMicro: 1_000 });
    const key = generateApiKey();
    await host.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId: account.accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
    const answer = await post(host, body(), { authorization: `Bearer ${key}` });
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({
      error: { code: 'insufficient_credits' },
      estimatedCreditsRequired: expect.any(Number),
      balance: 0.001,
    });
    expect(answer.body.estimatedCreditsRequired).toBeGreaterThan(0.001);
    // What the estimate is made of, model by model, and what drives it.
    const models = body().models as string[];
    expect(answer.body.estimate.models.map((m: { modelId: string }) => m.modelId)).toEqual(models);
    expect(answer.body.estimate.judgeCalls).toEqual({ calls: 0, credits: 0 });
    const parts = answer.body.estimate.models.reduce((sum: number, m: { credits: number }) => sum + Math.round(m.credits * 1e6), 0);
    expect(parts).toBe(Math.round(answer.body.estimatedCreditsRequired * 1e6));
    expect(answer.body.estimate.models.every((m: { outputTokens: number }) => m.outputTokens > 0)).toBe(true);
    expect(answer.body.error.message).toMatch(/maxTokens/);
    expect(answer.body.error.message).not.toMatch(/judge/);
    expect(host.simulator.calls()).toHaveLength(0);
    expect((await host.gateway.accounts.get(account.accountId))!.balanceMicro).toBe(1_000);
  });

  it('serialises no vendor request for a large request it refuses: its calls are prepared only once the reserve holds', async () => {
    const account = await host.gateway.credits.openAccount({ balanceMicro: 1_000 });
    const key = generateApiKey();
    await host.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId: account.accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
    // Models of the chat-completions protocol, whose adapter is spied on.
    const models = ['fam_i-3.1-8b', 'fam_e-gpt-oss-120b', 'fam_g-small'];
    const prepare = vi.spyOn(ADAPTERS['openai-chat'], 'prepare');
    // 400 KB to each model: past PREPARE_EARLY_BYTES together.
    const prompt = 'word '.repeat(80_000);
    expect(prompt.length * models.length).toBeGreaterThan(PREPARE_EARLY_BYTES);
    const refused = await post(host, { prompt, models }, { authorization: `Bearer ${key}` });
    expect(refused.status).toBe(402);
    expect(host.simulator.calls()).toHaveLength(0);
    expect((await host.gateway.accounts.get(account.accountId))!.balanceMicro).toBe(1_000);
    // Reserved, the same request's calls are prepared and sent; by its answer, a refused
    // request's calls prepared in the turns after its 402 would have been too.
    const paid = await post(host, { prompt, models });
    expect(paid.status).toBe(200);
    expect(paid.body.results.map((r: { status: string }) => r.status)).toEqual(models.map(() => 'completed'));
    expect(prepare).toHaveBeenCalledTimes(models.length);
    prepare.mockRestore();
  });

  it("says what the judge calls hold of a judged request's estimate, whose own output limits maxTokens does not lower", async () => {
    const account = await host.gateway.credits.openAccount({ balanceMicro: 1_000 });
    const key = generateApiKey();
    await host.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId: account.accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
    const answer = await post(host, { ...body(), models: ['fam_c-5.4', 'fam_g-small'], judges: ['fam_c-4.1'] }, { authorization: `Bearer ${key}` });
    expect(answer.status).toBe(402);
    const { calls, credits } = answer.body.estimate.judgeCalls;
    expect(calls).toBe(2);
    expect(credits).toBeGreaterThan(0);
    // The estimate is the models' parts and the judge calls' part together (each in whole micro-credits, 6 decimals).
    const micro = (value: number) => Math.round(value * 1e6);
    const modelsMicro = answer.body.estimate.models.reduce((sum: number, m: { credits: number }) => sum + micro(m.credits), 0);
    expect(micro(answer.body.estimatedCreditsRequired)).toBe(modelsMicro + micro(credits));
    expect(answer.body.balance).toBe(0.001);
    expect(answer.body.error.message).toContain(`each of the 2 judge calls its judge's (${credits} of the credits`);
    expect(answer.body.error.message).toMatch(
      /maxTokens lowers it, and the judge calls' input \(the answers they are shown\); fewer models or judges, or a cheaper judge, lowers the judge calls' part/,
    );
    expect(host.simulator.calls()).toHaveLength(0);
  });
});
