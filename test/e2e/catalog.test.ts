import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { allModels } from '../../shared/catalog/index.js';
import { createAjv, loadAjv } from '../../shared/contract/ajv.js';
import { openApiDocument } from '../../shared/contract/openapi.js';
import { useTestHost } from '../support/local.js';

/** GET /api/v1/models and GET /api/v1/openapi.json through HTTP on the local host, behind the same key as the prompt route. */
const testHost = useTestHost();

async function get(path: string, headers: Record<string, string> = { authorization: `Bearer ${testHost().demo.apiKey}` }, method = 'GET') {
  const response = await fetch(`${testHost().url}${path}`, { method, headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

describe('GET /api/v1/models', () => {
  it('lists every model under its canonical ID and vendor spelling, with capabilities, tuning ranges and dated prices', async () => {
    const answer = await get('/api/v1/models');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    // The body is what the OpenAPI document says it is.
    await loadAjv();
    const validate = createAjv({ allErrors: true, strict: false, allowUnionTypes: true }).compile(openApiDocument().components.schemas.ModelList);
    expect(validate(answer.body), JSON.stringify(validate.errors)).toBe(true);
    expect(answer.body.models.map((m: { id: string }) => m.id)).toEqual(allModels().map((m) => m.id));

    const byId = Object.fromEntries(answer.body.models.map((m: { id: string }) => [m.id, m]));
    expect(byId['fam_a-opus-4-6']).toMatchObject({
      alias: 'claude-opus-4-6',
      provider: 'anthropic',
      protocol: 'anthropic-messages',
      capabilities: { tuning: { thinkingBudget: { min: 1024, max: 32_000, disable: 0 } }, cache: { mode: 'explicit', minTokens: 4096 } },
      prices: { takenOn: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) },
    });
    expect(byId['fam_c-5.4'].capabilities).toMatchObject({ structuredOutput: 'native', tuning: { reasoningEffort: ['low', 'medium', 'high'] } });
    expect(byId['fam_h-pro'].capabilities.structuredOutput).toBe('tool');
    expect(byId['fam_b-3.1-flash'].notes.join(' ')).toMatch(/gemini-3-flash-preview/);
    // A tuning the contract lists and the vendor refuses: the listing says so before a call.
    expect(byId['fam_d-4.20-0309-reasoning'].capabilities.tuning.reasoningEffort).toEqual(['none', 'low', 'medium', 'high']);
    expect(byId['fam_d-4.20-0309-reasoning'].notes.join(' ')).toMatch(/reasoningEffort is accepted, as the contract lists it, but not sent/);
  });

  it('wants the same key as the prompt route, and answers 401 in the error body without it', async () => {
    const answer = await get('/api/v1/models', {});
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('unauthorized');
  });

  it('answers 401 for two Authorization headers, the valid key first, as the prompt route does', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const key = `Bearer ${testHost().demo.apiKey}`;
      const req = request(
        `${testHost().url}/api/v1/models`,
        { headers: ['host', new URL(testHost().url).host, 'authorization', key, 'authorization', 'Bearer someone-elses-key-000000'] },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
  });

  it('answers any other method 405 with Allow: GET, HEAD', async () => {
    const answer = await get('/api/v1/models', { authorization: `Bearer ${testHost().demo.apiKey}` }, 'POST');
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, HEAD');
    expect(answer.body.error.code).toBe('method_not_allowed');
  });

  it('answers HEAD as GET, without the body, behind the same key (RFC 9110 9.1: it had been a 405)', async () => {
    for (const [path, headers, type] of [
      ['/api/v1/models', { authorization: `Bearer ${testHost().demo.apiKey}` }, 'application/json; charset=utf-8'],
      ['/api/v1/openapi.json', { authorization: `Bearer ${testHost().demo.apiKey}` }, 'application/json; charset=utf-8'],
      ['/', {}, 'text/html; charset=utf-8'],
    ] as const) {
      const answer = await fetch(`${testHost().url}${path}`, { method: 'HEAD', headers });
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type')).toBe(type);
      expect(await answer.text()).toBe('');
    }
    expect((await fetch(`${testHost().url}/api/v1/models`, { method: 'HEAD' })).status).toBe(401);
  });
});

describe('GET /api/v1/openapi.json', () => {
  it('serves the document the code generates, and the committed copy in docs/ is that document', async () => {
    const answer = await get('/api/v1/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(openApiDocument());
    const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
    // Regenerate with: npx tsx infra/openapi.ts > docs/openapi.json
    expect(committed).toEqual(openApiDocument());
  });
});
