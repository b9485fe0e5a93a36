import { failedOnVendorSide } from '../../shared/compare/result.js';
import type { IncomingMessage } from 'node:http';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiHandler } from '../../functions/api.js';
import { ConfigError } from '../../shared/config.js';
import { lazy, lazyAsync, lazyAsyncAtHand } from '../../shared/lazy.js';
import { apiHooks, METRIC, type Observability } from '../../functions/observability.js';
import { lambdaContext, toProxyEvent } from '../../infra/local/lambda-events.js';
import type { PromptResponse, Started } from '../../shared/orchestrator/prompt-service.js';
import type { Gateway } from '../../shared/gateway.js';
import { body } from '../support/fixtures.js';
import { UNCOLLECTED_LOG_MESSAGE } from '../../shared/credits/credits-service.js';

/** Strings that must never reach stdout or stderr: the prompt, an output, the key, the Authorization header. */
const PROMPT = 'PROMPT-CONTENT-7f3a: compare these';
const OUTPUT = 'OUTPUT-CONTENT-91cc';
const API_KEY = 'mcg_KEY-CONTENT-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const FORBIDDEN = [PROMPT, 'PROMPT-CONTENT', OUTPUT, 'OUTPUT-CONTENT', API_KEY, 'KEY-CONTENT', 'Bearer', 'authorization'];

const RESPONSE: PromptResponse = {
  promptLogId: 'pl_01KAQ4J3ZQ5M6V7Y8X9W0T1S2R',
  results: [
    { modelId: 'fam_c-5.4', status: 'completed', output: OUTPUT, tokensIn: 12, tokensOut: 80, latencyMs: 450, providerCost: 0.0012 },
    // The vendor spelling of fam_a-opus-4-6: the metric dimension is the canonical ID.
    {
      modelId: 'claude-opus-4-6',
      status: 'failed',
      output: '',
      tokensIn: 0,
      tokensOut: 0,
      latencyMs: 612,
      providerCost: 0,
      error: { code: 'upstream_error', message: 'Overloaded', upstreamStatus: 529 },
    },
    { modelId: 'fam_b-3.1-pro', status: 'completed', output: OUTPUT, tokensIn: 12, tokensOut: 5, latencyMs: 300, providerCost: null },
  ],
  evaluations: [],
  creditsUsed: 0.12,
};

interface Emf {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [field: string]: unknown;
}

let output: string[];

beforeEach(() => {
  output = [];
  const capture = (chunk: unknown) => {
    output.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Fresh Powertools instances, as a new Lambda container has; the logger at DEBUG so that every line it could print is checked. */
function newObservability(): Observability {
  return {
    logger: new Logger({ serviceName: 'model-compare-gateway', logLevel: 'DEBUG' }),
    metrics: new Metrics({ namespace: 'GatewayTest', serviceName: 'model-compare-gateway' }),
    tracer: new Tracer({ serviceName: 'model-compare-gateway' }),
  };
}

function event(requestId: string, extraHeaders: string[] = []) {
  const req = {
    method: 'POST',
    url: '/api/v1/prompt',
    rawHeaders: ['Content-Type', 'application/json', 'Authorization', `Bearer ${API_KEY}`, 'Idempotency-Key', 'idem-1', ...extraHeaders],
    headers: {},
  } as unknown as IncomingMessage;
  const prompt = body({ prompt: PROMPT, models: ['fam_c-5.4', 'claude-opus-4-6', 'fam_b-3.1-pro'] });
  return toProxyEvent(req, JSON.stringify(prompt), '/api/v1/prompt', { accountId: 'acct_1' }, requestId);
}

/** A settle that charged what the answer says. */
const asAnswered = (response: PromptResponse) => Math.round(response.creditsUsed * 1_000_000);

/**
 * A gateway whose prompt service answers what `answer` gives (a replay when `replayed`), and
 * whose settle, on the turn after the answer as the service's, charges what `settled` says
 * (`asAnswered`: the answer's credits; by default it says nothing, as a settle that failed),
 * nothing where the answer was withdrawn.
 */
function fakeGateway(
  answer: () => Promise<PromptResponse>,
  replayed = false,
  withdraw: () => void = () => undefined,
  settled: (response: PromptResponse) => number | undefined = () => undefined,
): Gateway {
  const start = async (): Promise<Started> => {
    const answered = answer();
    let withdrawn = false;
    const finished = answered.then(
      async (response) => {
        await new Promise((resolve) => setImmediate(resolve));
        return withdrawn ? 0 : settled(response);
      },
      () => undefined,
    );
    return {
      replayed,
      answer: answered,
      finished,
      withdraw: () => {
        withdrawn = true;
        withdraw();
      },
    };
  };
  return { prompts: { start }, config: { sseKeepAliveMs: 15_000 } } as unknown as Gateway;
}

/** Every EMF document written to stdout. */
function emfDocuments(): Emf[] {
  return output
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Emf);
}

function metricNames(doc: Emf): string[] {
  return doc._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name);
}

function expectNoContent(): void {
  const all = output.join('');
  for (const forbidden of FORBIDDEN) expect(all.toLowerCase()).not.toContain(forbidden.toLowerCase());
}

describe('Handler: api, observability', () => {
  it('emits per-model latency, tokens, cost and failures by model ID and status, and the credits charged, with no content', async () => {
    // Prepare: a container Lambda started for this invocation (Powertools counts a cold start only then).
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const observe = newObservability();
    const answer = vi.fn(async () => RESPONSE);
    const handler = createApiHandler(() => fakeGateway(answer, false, undefined, asAnswered), observe.logger, apiHooks(observe));

    // Act: the answer, then what follows it (the settle), as the Lambda entry awaits it.
    const result = await handler(event('req-metrics'), lambdaContext('api', 'req-metrics'));
    await result.finished;

    // Assess: the answer itself is unchanged.
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toEqual(RESPONSE);
    expect(answer).toHaveBeenCalledTimes(1);

    const docs = emfDocuments();
    for (const doc of docs) expect(doc._aws.CloudWatchMetrics[0]!.Namespace).toBe('GatewayTest');
    const coldStart = docs.filter((d) => metricNames(d).includes('ColdStart'));
    expect(coldStart).toHaveLength(1);

    const perModel = docs.filter((d) => 'modelId' in d);
    expect(perModel.map((d) => [d.modelId, d.status])).toEqual([
      ['fam_c-5.4', 'completed'],
      ['fam_a-opus-4-6', 'failed'],
      ['fam_b-3.1-pro', 'completed'],
    ]);
    for (const doc of perModel) {
      expect(doc._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'modelId', 'status']]);
      expect(doc.service).toBe('model-compare-gateway');
    }
    const [gpt, claude, gemini] = perModel;
    expect(gpt).toMatchObject({ ModelLatency: 450, ModelTokensIn: 12, ModelTokensOut: 80, ModelCost: 0.0012, ModelFailures: 0 });
    expect(claude).toMatchObject({ ModelLatency: 612, ModelTokensIn: 0, ModelTokensOut: 0, ModelCost: 0, ModelFailures: 1 });
    // Unknown cost (usage missing) is no data point rather than a false zero.
    expect(gemini).toMatchObject({ ModelLatency: 300, ModelFailures: 0 });
    expect(gemini).not.toHaveProperty('ModelCost');
    expect(gpt!._aws.CloudWatchMetrics[0]!.Metrics).toEqual(
      expect.arrayContaining([
        { Name: METRIC.modelLatency, Unit: 'Milliseconds' },
        { Name: METRIC.modelTokensIn, Unit: 'Count' },
        { Name: METRIC.modelTokensOut, Unit: 'Count' },
        { Name: METRIC.modelCost, Unit: 'None' },
        { Name: METRIC.modelFailures, Unit: 'Count' },
      ]),
    );

    const charged = docs.filter((d) => metricNames(d).includes(METRIC.creditsCharged));
    expect(charged).toHaveLength(1);
    expect(charged[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(charged[0]).toMatchObject({ CreditsCharged: 0.12 });
    // Three vendor calls; the failure (Anthropic overloaded, 529) is on the vendor's side.
    const vendors = docs.filter((d) => metricNames(d).includes(METRIC.vendorCalls));
    expect(vendors).toHaveLength(1);
    expect(vendors[0]).toMatchObject({ VendorCalls: 3, VendorFailures: 1 });
    const perRequest = docs.filter((d) => metricNames(d).includes(METRIC.requests));
    expect(perRequest).toHaveLength(1);
    expect(perRequest[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(perRequest[0]).toMatchObject({ Requests: 1, ClientErrors: 0, ServerErrors: 0 });
    expect(docs).toHaveLength(1 + 3 + 1 + 1 + 1);

    expectNoContent();
  });

  it('emits the credits the settle charged, not those the answer said, where they differ (a cost past the hold, a request the reconciler had released), and none where the settle failed', async () => {
    const observe = newObservability();
    const handler = createApiHandler(
      () =>
        fakeGateway(
          async () => RESPONSE,
          false,
          undefined,
          () => 0,
        ),
      observe.logger,
      apiHooks(observe),
    );
    await (await handler(event('req-released'), lambdaContext('api', 'req-released'))).finished;
    expect(emfDocuments().filter((d) => metricNames(d).includes(METRIC.creditsCharged))).toEqual([expect.objectContaining({ CreditsCharged: 0 })]);

    output.length = 0;
    const unsettled = createApiHandler(
      () =>
        fakeGateway(
          async () => RESPONSE,
          false,
          undefined,
          () => undefined,
        ),
      observe.logger,
      apiHooks(observe),
    );
    await (await unsettled(event('req-unsettled'), lambdaContext('api', 'req-unsettled'))).finished;
    expect(emfDocuments().some((d) => metricNames(d).includes(METRIC.creditsCharged))).toBe(false);
  });

  it('emits the metrics of an event-stream answer within its invocation, though they are recorded after the invocation flushed', async () => {
    const observe = newObservability();
    let answered!: (response: PromptResponse) => void;
    const handler = createApiHandler(() => fakeGateway(() => new Promise((resolve) => (answered = resolve)), false, undefined, asAnswered), observe.logger, apiHooks(observe));

    // Act: the handler returns (and logMetrics flushes) once the stream begins; the run ends later.
    const result = await handler(event('req-stream', ['Accept', 'text/event-stream']), lambdaContext('api', 'req-stream'));
    expect(result.statusCode).toBe(200);
    expect(result.eventStream).toBeDefined();
    const flushed = emfDocuments();
    answered(RESPONSE);
    let body = '';
    for await (const chunk of result.eventStream!) body += chunk;
    await result.finished;

    // Assess: the invocation's own flush came first, with no model metric in it; the stream's
    // metrics were written before its end, not left in the buffer for a next invocation.
    expect(flushed.some((d) => metricNames(d).includes(METRIC.requests))).toBe(true);
    expect(flushed.filter((d) => 'modelId' in d || metricNames(d).includes(METRIC.creditsCharged))).toEqual([]);
    expect(body).toContain('event: done');
    const docs = emfDocuments();
    expect(docs.filter((d) => 'modelId' in d)).toHaveLength(3);
    expect(docs.filter((d) => metricNames(d).includes(METRIC.creditsCharged))).toEqual([expect.objectContaining({ CreditsCharged: 0.12, service: 'model-compare-gateway' })]);
    expectNoContent();
  });

  it('answers 503 with the error body when the gateway cannot be built, logs no detail of it, and retries on the next invocation', async () => {
    // Prepare: the first build fails (as an invalid configuration does), the second succeeds.
    const observe = newObservability();
    const build = vi
      .fn<() => Gateway>()
      .mockImplementationOnce(() => {
        throw new ConfigError(`AWS_ENDPOINT_URL must be an http(s) URL, got "${API_KEY}"`);
      })
      .mockReturnValue(fakeGateway(async () => RESPONSE));
    const handler = createApiHandler(lazy(build), observe.logger, apiHooks(observe));

    // Act
    const failed = await handler(event('req-503'), lambdaContext('api', 'req-503'));
    const failedOutput = output.join('');
    const retried = await handler(event('req-after'), lambdaContext('api', 'req-after'));

    // Assess
    expect(failed.statusCode).toBe(503);
    expect(failed.headers).toMatchObject({ 'Retry-After': '5' });
    expect(JSON.parse(failed.body)).toEqual({
      error: { code: 'service_unavailable', message: 'The gateway could not load its configuration; retry shortly. Nothing was charged' },
    });
    expect(failed.body).not.toContain(API_KEY);
    expect(retried.statusCode).toBe(200);
    expect(build).toHaveBeenCalledTimes(2);

    // The error line carries the request IDs (Lambda's, by injectLambdaContext, and the answer's) and the error's name, not its cause (a key pasted into a setting may be in it).
    const errorLine = failedOutput.split('\n').find((line) => line.includes('Gateway not available'));
    expect(errorLine).toBeDefined();
    expect(JSON.parse(errorLine!)).toMatchObject({ level: 'ERROR', function_request_id: 'req-503', requestId: 'req-503', errorName: 'ConfigError' });
    expect(JSON.parse(errorLine!)).not.toHaveProperty('errorMessage');
    expect(errorLine).not.toContain(API_KEY);
    const failedRequest = emfDocuments().find((d) => metricNames(d).includes(METRIC.requests) && d.ServerErrors === 1);
    expect(failedRequest).toMatchObject({ Requests: 1, ClientErrors: 0, ServerErrors: 1 });
    expect(failedRequest).not.toHaveProperty(METRIC.creditsCharged);
    expectNoContent();
  });

  it('counts a refused request as a client error and emits no model metric for it', async () => {
    const observe = newObservability();
    const handler = createApiHandler(() => fakeGateway(async () => RESPONSE), observe.logger, apiHooks(observe));
    const bad = event('req-400');
    bad.body = JSON.stringify({ prompt: PROMPT, models: ['no-such-model'] });

    const result = await handler(bad, lambdaContext('api', 'req-400'));

    expect(result.statusCode).toBe(400);
    const docs = emfDocuments();
    expect(docs.filter((d) => 'modelId' in d)).toEqual([]);
    expect(docs.find((d) => metricNames(d).includes(METRIC.requests))).toMatchObject({ Requests: 1, ClientErrors: 1, ServerErrors: 0 });
    expectNoContent();
  });
});

describe("Logger: the fields the stack's alarms filter on", () => {
  it('writes an error\'s level as `level: "ERROR"` and a field beside the message, as the metric filters read them (infra/stack/alarms.ts)', async () => {
    const { logger } = await import('../../functions/logger.js');
    // The suite runs with POWERTOOLS_LOG_LEVEL=SILENT.
    logger.setLogLevel('INFO');
    try {
      logger.error('Something failed', { errorName: 'TypeError' });
      logger.warn(UNCOLLECTED_LOG_MESSAGE, { uncollectedMicro: 300 });
    } finally {
      logger.setLogLevel('SILENT');
    }
    const lines = output
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'ERROR', message: 'Something failed', errorName: 'TypeError' }),
      expect.objectContaining({ level: 'WARN', message: UNCOLLECTED_LOG_MESSAGE, uncollectedMicro: 300 }),
    ]);
  });
});

describe("Metrics: the service dimension the stack's VendorFailures alarm reads", () => {
  it('is the service the stack names (POWERTOOLS_SERVICE_NAME), not a fixed one that would win over it', async () => {
    const named = process.env.POWERTOOLS_SERVICE_NAME;
    process.env.POWERTOOLS_SERVICE_NAME = 'tenant-gateway';
    vi.resetModules();
    try {
      const { SERVICE_NAME } = await import('../../functions/logger.js');
      // A stack built with serviceName 'tenant-gateway' alarms on service=tenant-gateway; its functions had published service=model-compare-gateway.
      expect(SERVICE_NAME).toBe('tenant-gateway');
    } finally {
      if (named === undefined) delete process.env.POWERTOOLS_SERVICE_NAME;
      else process.env.POWERTOOLS_SERVICE_NAME = named;
      vi.resetModules();
    }
  });
});

describe('Handler: api, an answer that cannot be serialised', () => {
  // JSON.stringify throws on a BigInt, as it does on outputs too long for one string.
  const unserialisable = { ...RESPONSE, promptLogId: 1n as unknown as string };

  it('answers 500 and withdraws the answer, so that nothing is charged, as the error body says, and counts no credits', async () => {
    const observe = newObservability();
    const withdraw = vi.fn();
    const handler = createApiHandler(() => fakeGateway(async () => unserialisable, false, withdraw), observe.logger, apiHooks(observe));

    const result = await handler(event('req-big'), lambdaContext('api', 'req-big'));

    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body).error).toMatchObject({ code: 'internal_error', message: expect.stringContaining('not charged') });
    expect(withdraw).toHaveBeenCalledTimes(1);
    // What follows the answer (the release) still travels with it, for the sender to await: it charges nothing.
    await result.finished;
    expect(emfDocuments().filter((d) => metricNames(d).includes(METRIC.creditsCharged))).toEqual([expect.objectContaining({ CreditsCharged: 0 })]);
  });

  it('ends an event stream with an error event and withdraws the answer', async () => {
    const observe = newObservability();
    const withdraw = vi.fn();
    const handler = createApiHandler(() => fakeGateway(async () => unserialisable, false, withdraw), observe.logger, apiHooks(observe));

    const result = await handler(event('req-big-stream', ['Accept', 'text/event-stream']), lambdaContext('api', 'req-big-stream'));
    let body = '';
    for await (const chunk of result.eventStream!) body += chunk;

    expect(body).toContain('event: error');
    expect(body).not.toContain('event: done');
    expect(withdraw).toHaveBeenCalledTimes(1);
    await result.finished;
    expect(emfDocuments().filter((d) => metricNames(d).includes(METRIC.creditsCharged))).toEqual([expect.objectContaining({ CreditsCharged: 0 })]);
  });
});

describe('Handler: api, out of time', () => {
  it("answers 504 gateway_timeout, logged as an error, when the function's time runs out before the answer: not the 500 that says nothing was charged, as the run goes on", async () => {
    const observe = newObservability();
    const handler = createApiHandler(() => fakeGateway(() => new Promise<PromptResponse>(() => undefined)), observe.logger, apiHooks(observe));

    const result = await handler(event('req-late'), lambdaContext('api', 'req-late', 50));

    expect(result.statusCode).toBe(504);
    expect(JSON.parse(result.body).error).toEqual({ code: 'gateway_timeout', message: expect.stringContaining('may still be charged') });
    expect(output.join('')).toContain('"level":"ERROR","message":"The api function ran out of time before answering"');
    expectNoContent();
  });
});

describe('Handler: api, idempotent replays', () => {
  it('emits no model metric and no credits charged for a replayed answer', async () => {
    const observe = newObservability();
    const handler = createApiHandler(() => fakeGateway(async () => RESPONSE, true), observe.logger, apiHooks(observe));

    const result = await handler(event('req-replay'), lambdaContext('api', 'req-replay'));

    expect(result.statusCode).toBe(200);
    const docs = emfDocuments();
    expect(docs.filter((d) => 'modelId' in d)).toEqual([]);
    expect(docs.some((d) => metricNames(d).includes(METRIC.creditsCharged))).toBe(false);
  });
});

describe('Function: lazyAsync', () => {
  it('builds once for concurrent and later callers', async () => {
    const build = vi.fn(async () => ({ built: true }));
    const get = lazyAsync(build);
    const [a, b] = await Promise.all([get(), get()]);
    expect(a).toBe(b);
    expect(await get()).toBe(a);
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('forgets a failed build, including one that throws synchronously', async () => {
    const build = vi
      .fn<() => Promise<string>>()
      .mockImplementationOnce(() => {
        throw new Error('sync');
      })
      .mockRejectedValueOnce(new Error('async'))
      .mockResolvedValue('ok');
    const get = lazyAsync(build);
    await expect(get()).rejects.toThrow('sync');
    await expect(get()).rejects.toThrow('async');
    expect(await get()).toBe('ok');
    expect(await get()).toBe('ok');
    expect(build).toHaveBeenCalledTimes(3);
  });
});

describe('Function: lazyAsyncAtHand', () => {
  it('answers with the build while it runs, then with its value itself, not a promise; a failed build is forgotten', async () => {
    const build = vi.fn<() => Promise<string>>().mockRejectedValueOnce(new Error('first')).mockResolvedValue('built');
    const get = lazyAsyncAtHand(build);
    await expect(get()).rejects.toThrow('first');
    const pending = get();
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBe('built');
    expect(get()).toBe('built');
    expect(build).toHaveBeenCalledTimes(2);
  });
});

describe('Function: failedOnVendorSide (what the VendorFailures alarm counts)', () => {
  it.each([
    [{ code: 'upstream_rate_limited', upstreamStatus: 429 }, true],
    [{ code: 'upstream_overloaded', upstreamStatus: 503 }, true],
    [{ code: 'upstream_error', upstreamStatus: 500 }, true],
    [{ code: 'upstream_error', upstreamStatus: 402 }, true],
    [{ code: 'upstream_error', upstreamStatus: 424 }, true],
    // Failing inside a stream it had begun (Bedrock's InternalServerException frame, a Responses server_error).
    [{ code: 'upstream_error', upstreamStatus: 200 }, true],
    [{ code: 'timeout' }, true],
    // A refused key is LoggedErrors' (a 403 may be a caller's cachedContent); no key configured, a warning a caller could raise at will.
    [{ code: 'upstream_error', upstreamStatus: 401 }, false],
    [{ code: 'upstream_error', upstreamStatus: 403 }, false],
    [{ code: 'provider_not_configured' }, false],
    [{ code: 'upstream_error', upstreamStatus: 400 }, false],
    [{ code: 'upstream_error', upstreamStatus: 413 }, false],
    [{ code: 'upstream_blocked' }, false],
    [{ code: 'cancelled' }, false],
    [{ code: 'attachment_not_supported' }, false],
    [undefined, false],
  ])('%j: %s', (error, expected) => {
    expect(failedOnVendorSide(error)).toBe(expected);
  });
});
