import { readdirSync, readFileSync } from 'node:fs';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUSES, PROMPT_OPERATION, openApiDocument } from '../../shared/contract/openapi.js';
import { promptRequestSchema } from '../../shared/contract/request-schema.js';
import { resolveModel } from '../../shared/catalog/index.js';
import { DEFAULT_CREDITS_PER_USD } from '../../shared/config.js';
import { providerCost } from '../../shared/pricing/cost.js';
import { VERDICT_SCHEMA } from '../../shared/judging/verdict.js';
import { ROOT, runTs } from '../support/processes.js';
import { openApiProblems } from '../support/openapi-validator.js';

/**
 * The OpenAPI 3.1 document (shared/contract/openapi.ts): linted with Redocly's
 * `recommended-strict` ruleset (every rule that warns is an error), generated from the
 * contract schema, and complete against the error table of docs/reference.md. test/support/local.ts
 * `post()` validates every end-to-end answer against it.
 */

/** Redocly's strict ruleset; `info-license` is off: the gateway is a private service with no licence to name. */
async function lint(document: unknown): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended-strict'], rules: { 'info-license': 'off' } });
  return lintFromString({ source: JSON.stringify(document, null, 2), absoluteRef: `${ROOT}openapi.json`, config });
}

const describeProblems = (problems: NormalizedProblem[]) => problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`).join('\n');

describe('OpenAPI document', () => {
  it('passes Redocly recommended-strict with zero problems', async () => {
    const problems = await lint(openApiDocument());
    expect(describeProblems(problems)).toBe('');
    expect(problems.filter((p) => p.severity === 'error')).toHaveLength(0);
  });

  it('is really linted: a broken copy gets errors', async () => {
    const broken = openApiDocument();
    const operation = broken.paths[PROMPT_OPERATION.path][PROMPT_OPERATION.method];
    delete operation.responses['200'].description;
    operation.responses['418'] = { $ref: '#/components/responses/DoesNotExist' };
    broken.components.securitySchemes.bearerAuth.scheme = undefined;
    const problems = await lint(broken);
    const rules = new Set(problems.filter((p) => p.severity === 'error').map((p) => p.ruleId));
    expect(rules.size).toBeGreaterThanOrEqual(2);
    expect([...rules].join(' ')).toMatch(/no-unresolved-refs|struct/);
  });

  it('is OpenAPI 3.1 with the contract schema as the request body', () => {
    const document = openApiDocument();
    expect(document.openapi).toBe('3.1.0');
    const { $id: _id, ...schema } = promptRequestSchema;
    // With the rules the gateway checks after it that JSON Schema can say: each model and judge once, the response_schema's
    // root an object, no empty history turn.
    const { models, judges, response_schema, history } = schema.properties;
    expect(document.components.schemas.PromptRequest).toEqual({
      ...schema,
      properties: {
        ...schema.properties,
        models: { ...models, uniqueItems: true },
        judges: { ...judges, uniqueItems: true },
        response_schema: { ...response_schema, properties: { type: { const: 'object' } }, required: ['type'] },
        history: { ...history, items: { ...history.items, properties: { ...history.items.properties, content: { ...history.items.properties.content, minLength: 1 } } } },
      },
    });
    const operation = document.paths['/api/v1/prompt'].post;
    expect(operation.requestBody).toMatchObject({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/PromptRequest' } } } });
    expect(Object.keys(document.paths)).toEqual(['/api/v1/prompt', '/api/v1/models', '/api/v1/openapi.json']);
    expect(Object.keys(document.paths['/api/v1/prompt'])).toEqual(['post']);
  });

  it("declares an evaluation order's verdict as judges are asked for it (VERDICT_SCHEMA)", () => {
    const { verdict } = (openApiDocument().components.schemas.EvaluationOrder as { properties: { verdict: { oneOf: Record<string, any>[] } } }).properties;
    const declared = verdict.oneOf[0]!;
    expect(declared.required).toEqual(VERDICT_SCHEMA.required);
    expect(declared.additionalProperties).toBe(false);
    const strip = (properties: Record<string, Record<string, unknown>>) =>
      Object.fromEntries(Object.entries(properties).map(([name, { description: _description, ...rule }]) => [name, rule]));
    expect(strip(declared.properties)).toEqual(strip(VERDICT_SCHEMA.properties as Record<string, Record<string, unknown>>));
    expect(verdict.oneOf[1]).toEqual({ type: 'null' });
  });

  it("prices its examples' completed results at the catalog's prices, and their creditsUsed at the default credits per USD", () => {
    const ok = openApiDocument().paths['/api/v1/prompt'].post.responses['200'].content;
    const streamed = (ok['text/event-stream'].example as string)
      .split('\n\n')
      .filter((event) => event.startsWith('event: done'))
      .map((event) => JSON.parse(event.slice(event.indexOf('data: ') + 6)));
    const answers = [ok['application/json'].examples.mixed.value, ...streamed];
    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      let usd = 0;
      for (const result of answer.results.filter((r: { status: string }) => r.status === 'completed')) {
        const usage = { inputTokens: result.tokensIn, outputTokens: result.tokensOut, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
        expect(result.providerCost).toBe(providerCost(resolveModel(result.modelId)!.prices, usage));
        usd += result.providerCost;
      }
      expect(answer.creditsUsed).toBeCloseTo(usd * DEFAULT_CREDITS_PER_USD, 12);
    }
    const resultEvent = (ok['text/event-stream'].example as string).split('\n\n').find((event) => event.startsWith('event: result'))!;
    expect(JSON.parse(resultEvent.slice(resultEvent.indexOf('data: ') + 6)).result).toEqual(streamed[0].results[0]);
  });

  it("names every code a failed or cancelled result's error can carry (each the gateway's source writes)", () => {
    const listed = openApiDocument().components.schemas.FailedResult.properties.error.properties.code.description as string;
    const written = new Set<string>();
    for (const file of readdirSync(new URL('../../shared/', import.meta.url), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      const source = readFileSync(new URL(`../../shared/${file}`, import.meta.url), 'utf8');
      for (const [, code] of source.matchAll(/(?:UpstreamError\(\s*|\bcode: )'([a-z_]+)'/g)) written.add(code as string);
    }
    expect(written.size).toBeGreaterThan(8);
    for (const code of written) expect(listed, code).toMatch(new RegExp(`\\b${code}\\b`));
    // A judge call's error carries those, and the judging code's own (a judge's answer that held no verdict).
    const judging = readFileSync(new URL('../../shared/judging/errors.ts', import.meta.url), 'utf8');
    const judgeCodes = [...judging.matchAll(/readonly code = '([a-z_]+)'/g)].map(([, code]) => code as string);
    expect(judgeCodes).toContain('unparseable_verdict');
    const { Evaluation, EvaluationOrder } = openApiDocument().components.schemas;
    for (const schema of [Evaluation, EvaluationOrder]) {
      const judgeListed = schema.properties.error.properties.code.description as string;
      for (const code of [...written, ...judgeCodes]) expect(judgeListed, code).toMatch(new RegExp(`\\b${code}\\b`));
    }
  });

  it('declares bearer authentication for the operation', () => {
    const document = openApiDocument();
    expect(document.components.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
  });

  it("documents every status and code of the reference's error table", () => {
    const reference = readFileSync(`${ROOT}docs/reference.md`, 'utf8');
    const section = reference.slice(reference.indexOf('## Endpoint and errors'), reference.indexOf('## Limits'));
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[1] as string, m[2] as string] as const);
    expect(rows.length).toBeGreaterThanOrEqual(10);
    const document = openApiDocument();
    const responses = document.paths['/api/v1/prompt'].post.responses;
    for (const [status, code] of rows) {
      expect(responses[status], `status ${status}`).toBeDefined();
      const spec = ERROR_STATUSES.find((s) => s.status === status);
      expect(spec?.codes, `codes of ${status}`).toContain(code);
    }
    // 402 carries the estimate and the balance at the top level, as numbers.
    expect(document.components.schemas.InsufficientCreditsError).toMatchObject({
      required: ['error', 'estimatedCreditsRequired', 'balance'],
      properties: { estimatedCreditsRequired: { type: 'number' }, balance: { type: 'number' } },
    });
  });

  it('infra/openapi.ts prints the document as JSON', async () => {
    const { code, stdout } = await runTs('infra/openapi.ts', [], {});
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });
});

describe('Validating answers against the document', () => {
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const completed = { modelId: 'fam_c-5.4', status: 'completed', output: 'Hi', tokensIn: 3, tokensOut: 2, latencyMs: 10, providerCost: 0.0001 };
  const failed = {
    modelId: 'fam_a-opus-4-6',
    status: 'failed',
    output: '',
    tokensIn: 0,
    tokensOut: 0,
    latencyMs: 10,
    providerCost: 0,
    error: { code: 'upstream_error', message: 'Overloaded', upstreamStatus: 529 },
  };
  const success = { promptLogId: 'pl_01KAQ4J3ZQ5M6V7Y8X9W0T1S2R', results: [completed, failed], evaluations: [], creditsUsed: 0.01 };
  // A judged answer, as the gateway sends it: one evaluation whose second judge call failed, and the ranking.
  const order = (answerA: string, answerB: string) => ({
    answerA,
    answerB,
    status: 'completed',
    verdict: { winner: 'A', scoreA: 8, scoreB: 6, reasoning: 'r' },
    winner: answerA,
    tokensIn: 900,
    tokensOut: 40,
    latencyMs: 300,
    providerCost: 0.0002,
    usage: { cachedTokensIn: 0, cacheWriteTokensIn: 0, reasoningTokensOut: 0 },
  });
  const error = { code: 'upstream_error', message: 'Simulated upstream error 500', upstreamStatus: 500 };
  const evaluation = {
    judgeModelId: 'fam_c-5.4-mini',
    modelA: 'fam_c-5.4',
    modelB: 'fam_a-opus-4-6',
    status: 'failed',
    error,
    winner: null,
    consistent: false,
    scores: null,
    weightedScores: null,
    orders: [order('fam_c-5.4', 'fam_a-opus-4-6'), { ...order('fam_a-opus-4-6', 'fam_c-5.4'), status: 'failed', verdict: null, winner: null, providerCost: 0, error }],
    tokensIn: 900,
    tokensOut: 40,
    latencyMs: 600,
    providerCost: 0.0002,
    lengths: { 'fam_c-5.4': { tokens: 2, characters: 2 }, 'fam_a-opus-4-6': { tokens: null, characters: 0 } },
    inRanking: false,
  };
  const rankingEntry = { rank: null, modelId: 'fam_c-5.4', strength: null, interval: null, winRate: null, wins: 0, ties: 0, losses: 0, evaluations: 0 };
  const judged = { ...success, results: [completed, { ...completed, modelId: 'fam_a-opus-4-6' }], evaluations: [evaluation], ranking: [rankingEntry] };

  it('accepts a documented success and error', () => {
    expect(openApiProblems({ status: 200, headers: json, body: success })).toEqual([]);
    expect(openApiProblems({ status: 200, headers: json, body: { ...success, results: [{ ...completed, providerCost: null }] } })).toEqual([]);
    // A streamed call that broke off after its text went out: failed, and charged what it used.
    expect(openApiProblems({ status: 200, headers: json, body: { ...success, results: [{ ...failed, providerCost: null, estimatedCost: 0.1 }] } })).toEqual([]);
    expect(
      openApiProblems({ status: 400, headers: json, body: { error: { code: 'invalid_request', message: 'x', details: [{ field: '/prompt', message: 'is required' }] } } }),
    ).toEqual([]);
    expect(openApiProblems({ status: 402, headers: json, body: { error: { code: 'insufficient_credits', message: 'x' }, estimatedCreditsRequired: 2, balance: 1 } })).toEqual([]);
    expect(openApiProblems({ status: 431, headers: json, body: { error: { code: 'bad_request', message: 'x' } } })).toEqual([]);
    // Every field of a judged answer is declared: a client generated from the document keeps the scores, the figures and the failure.
    expect(openApiProblems({ status: 200, headers: json, body: judged })).toEqual([]);
    const completedEvaluation = {
      ...evaluation,
      status: 'completed',
      error: undefined,
      winner: 'fam_c-5.4',
      consistent: true,
      orders: [evaluation.orders[0], { ...evaluation.orders[0], answerA: 'fam_a-opus-4-6', answerB: 'fam_c-5.4', verdict: { winner: 'B', scoreA: 6, scoreB: 8, reasoning: 'r' } }],
      scores: { 'fam_c-5.4': 8, 'fam_a-opus-4-6': 6 },
      weightedScores: { 'fam_c-5.4': 0.5714, 'fam_a-opus-4-6': 0.4286 },
      inRanking: true,
    };
    expect(openApiProblems({ status: 200, headers: json, body: JSON.parse(JSON.stringify({ ...judged, evaluations: [completedEvaluation] })) })).toEqual([]);
  });

  it.each([
    ['an undocumented success status', 201, success],
    ['a missing field', 200, { ...success, creditsUsed: undefined }],
    ['an unknown field', 200, { ...success, extra: 1 }],
    ['a failed result without its error', 200, { ...success, results: [{ ...failed, error: undefined }] }],
    ['a failed result with output', 200, { ...success, results: [{ ...failed, output: 'partial' }] }],
    ['another status value', 200, { ...success, results: [{ ...completed, status: 'pending' }] }],
    ['a 402 without the estimate', 402, { error: { code: 'insufficient_credits', message: 'x' }, balance: 1 }],
    ['a code of another status', 401, { error: { code: 'invalid_request', message: 'x' } }],
    ['an error body with extra fields', 400, { error: { code: 'invalid_request', message: 'x', stack: 'at …' } }],
    ['an evaluation with an unknown field', 200, { ...judged, evaluations: [{ ...evaluation, extra: 1 }] }],
    ['an evaluation without its scores', 200, { ...judged, evaluations: [{ ...evaluation, scores: undefined }] }],
    ['an order without its verdict', 200, { ...judged, evaluations: [{ ...evaluation, orders: [{ ...evaluation.orders[0], verdict: undefined }, evaluation.orders[1]] }] }],
    [
      'a verdict scored 11',
      200,
      { ...judged, evaluations: [{ ...evaluation, orders: [{ ...order('a', 'b'), verdict: { winner: 'A', scoreA: 11, scoreB: 6, reasoning: 'r' } }, evaluation.orders[1]] }] },
    ],
    ['a ranking entry without its wins', 200, { ...judged, ranking: [{ ...rankingEntry, wins: undefined }] }],
  ])('rejects %s', (_name, status, body) => {
    expect(openApiProblems({ status, headers: json, body: JSON.parse(JSON.stringify(body)) })).not.toEqual([]);
  });

  it('rejects a body that is not JSON, a 405 without Allow and a 401 without WWW-Authenticate', () => {
    expect(openApiProblems({ status: 400, headers: { 'content-type': 'text/html' }, body: { error: { code: 'invalid_request', message: 'x' } } })).not.toEqual([]);
    expect(openApiProblems({ status: 405, headers: json, body: { error: { code: 'method_not_allowed', message: 'x' } } })).toEqual(['header allow is missing (response 405)']);
    expect(openApiProblems({ status: 401, headers: json, body: { error: { code: 'unauthorized', message: 'x' } } })).toEqual(['header www-authenticate is missing (response 401)']);
  });

  it("declares the read-only routes as they answer: HEAD beside GET, and a 405 whose Allow is GET, HEAD; and an event stream's x-accel-buffering", () => {
    const document = openApiDocument();
    const responses = document.components.responses as Record<string, { headers: Record<string, { schema: unknown }> }>;
    for (const path of ['/api/v1/models', '/api/v1/openapi.json']) {
      expect(Object.keys(document.paths[path])).toEqual(['get', 'head']);
      expect(document.paths[path].get.responses['405']).toEqual({ $ref: '#/components/responses/ReadMethodNotAllowed' });
    }
    expect(responses.ReadMethodNotAllowed?.headers.Allow?.schema).toEqual({ const: 'GET, HEAD' });
    expect(responses.MethodNotAllowed?.headers.Allow?.schema).toEqual({ const: 'POST' });
    expect(document.paths['/api/v1/prompt'].post.responses['200'].headers['x-accel-buffering']).toMatchObject({ schema: { const: 'no' } });
  });

  it('names the headers error answers carry: x-request-id on each, Retry-After on the 409 of a request still running', () => {
    const responses = openApiDocument().components.responses as Record<string, { headers?: Record<string, { required: boolean }> }>;
    for (const spec of ERROR_STATUSES) expect(responses[spec.name]?.headers?.['x-request-id'], spec.status).toMatchObject({ required: false });
    expect(responses.IdempotencyConflict?.headers?.['Retry-After']).toMatchObject({ required: false });
  });
});
