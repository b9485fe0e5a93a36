import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { HttpResponse, type HttpHandler, type HttpRequest } from '@smithy/core/protocols';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { S3ClaimCheck } from '../../shared/claim-check/s3.js';
import { ANSWER_GRACE_MS, StepFunctionsWorkflow, ThrottlingOnlyRetry } from '../../shared/judging/step-functions.js';
import type { WorkflowInput } from '../../shared/judging/workflow-types.js';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { authenticate } from '../../shared/auth/authenticate.js';
import { UnauthorizedError } from '../../shared/errors.js';
import { configuredStoreClient, createRepositories } from '../../shared/storage/store.js';
import { createStoreClient, IDLE_STEPS, toAttributes, type StoreClient } from '../../shared/storage/dynamodb.js';
import { awsError, SHORT_TIMEOUTS, startFakeAws, startSilentAws } from '../support/fake-aws.js';

/** A request handler that answers every call with an empty item and keeps the requests the SDK built (signed, endpoint resolved). */
function recordingHandler(): HttpHandler & { requests: HttpRequest[] } {
  const requests: HttpRequest[] = [];
  return {
    requests,
    handle: async (request: HttpRequest) => {
      requests.push(request);
      return { response: new HttpResponse({ statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from('{}') }) };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };
}

/** Where a GetItem of each of the store's clients goes, and how it is signed: the same for both, returned once. */
async function firstRequest(build: (requestHandler: HttpHandler) => StoreClient) {
  const handler = recordingHandler();
  const client = build(handler);
  await client.items.send(new GetItemCommand({ TableName: 'gateway-accounts', Key: { accountId: { S: 'acct_1' } } }));
  await client.documents.send(new GetCommand({ TableName: 'gateway-accounts', Key: { accountId: 'acct_1' } }));
  client.destroy();
  const [items, documents] = handler.requests.map((request) => ({
    url: `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}${request.path}`,
    // The signature itself differs with the time; where and by whom it is signed does not.
    authorization: String(request.headers.authorization).replace(/Signature=\w+$/, ''),
  }));
  expect(handler.requests).toHaveLength(2);
  expect(documents).toEqual(items);
  return items!;
}

afterEach(() => vi.unstubAllEnvs());

describe('Function: createStoreClient', () => {
  it.each([
    ['us-east-1', 'https://dynamodb.us-east-1.amazonaws.com/'],
    ['eu-west-1', 'https://dynamodb.eu-west-1.amazonaws.com/'],
    // The aws-cn partition that cdk.json targets: its own suffix.
    ['cn-north-1', 'https://dynamodb.cn-north-1.amazonaws.com.cn/'],
    ['cn-northwest-1', 'https://dynamodb.cn-northwest-1.amazonaws.com.cn/'],
    ['us-gov-west-1', 'https://dynamodb.us-gov-west-1.amazonaws.com/'],
  ])('calls the regional endpoint of %s with its partition suffix', async (region, url) => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    const sent = await firstRequest((requestHandler) => createStoreClient({ region, requestHandler }));
    expect(sent.url).toBe(url);
    expect(sent.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\\d{8}/${region}/dynamodb/aws4_request, `));
  });

  it("marshalls the items client's values at the top level still, once the document client has sent (it sets options in the object it is given)", async () => {
    await firstRequest((requestHandler) => createStoreClient({ region: 'local', endpoint: 'http://127.0.0.1:8000', local: true, requestHandler }));
    expect(toAttributes({ ':id': 'acct_1', ':n': 2, ':gone': undefined })).toEqual({ ':id': { S: 'acct_1' }, ':n': { N: '2' } });
  });

  it('the authorizer reads a key as last written: a key created a moment ago is never refused, and a revoked one never let in by a stale copy', async () => {
    const handler = recordingHandler();
    const client = createStoreClient({ region: 'local', endpoint: 'http://127.0.0.1:8000', local: true, requestHandler: handler });
    const { apiKeys, accounts } = createRepositories(loadConfig({}), { storeClient: client });
    await expect(authenticate(`Bearer ${'k'.repeat(32)}`, { apiKeys, accounts })).rejects.toBeInstanceOf(UnauthorizedError);
    client.destroy();
    const reads = handler.requests.map((request) => JSON.parse(String(request.body)));
    expect(reads).toEqual([expect.objectContaining({ TableName: 'gateway-api-keys', ConsistentRead: true })]);
  });

  it('hands no item to an SDK logger: neither client has the logger step, whatever logger its config is given', async () => {
    const handler = recordingHandler();
    const client = createStoreClient({ region: 'local', endpoint: 'http://127.0.0.1:8000', local: true, requestHandler: handler });
    const logged: unknown[] = [];
    const record = (...args: unknown[]) => void logged.push(args);
    for (const sdk of [client.items, client.documents]) sdk.config.logger = { trace: record, debug: record, info: record, warn: record, error: record };
    const item = { promptLogId: 'pl_1', prompt: 'the secret prompt' };
    await client.items.send(new PutItemCommand({ TableName: 'gateway-prompt-logs', Item: toAttributes(item) }));
    await client.documents.send(new PutCommand({ TableName: 'gateway-prompt-logs', Item: item }));
    client.destroy();
    expect(handler.requests).toHaveLength(2);
    // The SDK may still log its endpoint resolution; never the call's input or output.
    expect(JSON.stringify(logged)).not.toContain('secret prompt');
    expect(JSON.stringify(logged)).not.toContain('pl_1');
    expect(client.items.middlewareStack.identify().join()).not.toContain('loggerMiddleware');
  });

  it('leaves out the steps that do nothing for a store call: each request carries no user-agent or Lambda trace header, even inside a Lambda', async () => {
    // What the recursion-detection step reads to add the trace header.
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'gateway-api');
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    const handler = recordingHandler();
    const client = createStoreClient({ region: 'local', endpoint: 'http://127.0.0.1:8000', local: true, requestHandler: handler });
    await client.items.send(new GetItemCommand({ TableName: 'gateway-accounts', Key: { accountId: { S: 'acct_1' } } }));
    await client.documents.send(new GetCommand({ TableName: 'gateway-accounts', Key: { accountId: 'acct_1' } }));
    client.destroy();
    expect(handler.requests).toHaveLength(2);
    for (const request of handler.requests) {
      const names = Object.keys(request.headers).map((name) => name.toLowerCase());
      expect(names).toContain('authorization');
      expect(names).not.toContain('x-amz-user-agent');
      expect(names).not.toContain('x-amzn-trace-id');
    }
    for (const sdk of [client.items, client.documents]) for (const step of IDLE_STEPS) expect(sdk.middlewareStack.identify().join()).not.toContain(step);
  });

  it('fails a call whose answer hangs once its attempts (3) have each waited their deadline, instead of waiting on', async () => {
    // Prepare: a store that takes every request and never answers.
    const silent = await startSilentAws();
    const client = createStoreClient({ region: 'local', endpoint: silent.endpoint, local: true, timeouts: SHORT_TIMEOUTS });
    try {
      // Act
      const failure = client.items.send(new GetItemCommand({ TableName: 'gateway-accounts', Key: { accountId: { S: 'acct_1' } } }));

      // Assess
      await expect(failure).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(silent.calls.map((call) => call.operation)).toEqual(['GetItem', 'GetItem', 'GetItem']);
    } finally {
      client.destroy();
      await silent.close();
    }
  });

  it("refuses a document client command on the items client, which would send every such command after the first with the first one's input (its stack is cached)", async () => {
    const handler = recordingHandler();
    const client = createStoreClient({ region: 'local', endpoint: 'http://127.0.0.1:8000', local: true, requestHandler: handler });
    const put = (n: number) => new PutCommand({ TableName: 'gateway-accounts', Item: { accountId: `acct_${n}` } });
    expect(() => client.items.send(put(1) as never)).toThrow(new TypeError("PutCommand is a document client command: send it through the store's documents client, not items"));
    // The documents client sends each with its own input.
    await client.documents.send(put(1));
    await client.documents.send(put(2));
    expect(handler.requests.map((request) => JSON.parse(String(request.body)).Item.accountId.S)).toEqual(['acct_1', 'acct_2']);
    client.destroy();
  });

  it('signs calls to a local store with fixed credentials, needing none from the environment', async () => {
    const sent = await firstRequest((requestHandler) => createStoreClient({ region: 'local', endpoint: 'http://127.0.0.1:8000', local: true, requestHandler }));
    expect(sent.url).toBe('http://127.0.0.1:8000/');
    expect(sent.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\//);
  });
});

/** The client the configuration names, its requests recorded instead of sent. */
const configured = (config: ReturnType<typeof loadConfig>) => (requestHandler: HttpHandler) => {
  const client = configuredStoreClient(config);
  client.items.config.requestHandler = requestHandler;
  client.documents.config.requestHandler = requestHandler;
  return client;
};

describe('Function: configuredStoreClient', () => {
  it('goes to AWS_ENDPOINT_URL (LocalStack) with the credential chain, in the configured region', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const sent = await firstRequest(configured(loadConfig({ AWS_ENDPOINT_URL: 'http://localhost:4566', AWS_REGION: 'cn-north-1' })));
    expect(sent.url).toBe('http://localhost:4566/');
    expect(sent.authorization).toMatch(/Credential=test\/\d{8}\/cn-north-1\/dynamodb\//);
  });

  it('prefers DYNAMODB_ENDPOINT (the embedded store) over AWS_ENDPOINT_URL_DYNAMODB', async () => {
    const sent = await firstRequest(configured(loadConfig({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', AWS_ENDPOINT_URL_DYNAMODB: 'http://localhost:4566' })));
    expect(sent.url).toBe('http://127.0.0.1:8000/');
    expect(sent.authorization).toMatch(/Credential=local\//);
  });
});

describe('Function: loadConfig, AWS endpoints', () => {
  it('takes AWS_ENDPOINT_URL_<SERVICE> before AWS_ENDPOINT_URL, for every client', () => {
    const { awsEndpoints } = loadConfig({
      AWS_ENDPOINT_URL: 'http://localhost:4566',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://localhost:8000',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://localhost:4584',
    });
    expect(awsEndpoints).toEqual({
      dynamodb: 'http://localhost:8000',
      secretsManager: 'http://localhost:4584',
      s3: 'http://localhost:4566',
      sfn: 'http://localhost:4566',
      cloudformation: 'http://localhost:4566',
    });
  });

  it('has none without the variables, or when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true', () => {
    expect(loadConfig({}).awsEndpoints).toEqual({});
    expect(loadConfig({ AWS_ENDPOINT_URL: 'http://localhost:4566', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }).awsEndpoints).toEqual({});
  });

  it('refuses an endpoint that is not a URL, naming the variable', () => {
    expect(() => loadConfig({ AWS_ENDPOINT_URL_SFN: 'localhost:4566 ' })).toThrow(ConfigError);
    expect(() => loadConfig({ AWS_ENDPOINT_URL_SFN: 'not a url' })).toThrow(/AWS_ENDPOINT_URL_SFN/);
  });
});

describe('Class: S3ClaimCheck, its own client', () => {
  it('fails a put whose answer hangs once its attempts (3) have each waited their deadline, instead of waiting on', async () => {
    // Prepare: an S3 that takes every request and never answers.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const silent = await startSilentAws();
    const store = new S3ClaimCheck('claims', { region: 'eu-west-1', endpoint: silent.endpoint, timeouts: SHORT_TIMEOUTS });
    try {
      // Act
      const failure = store.put('pl_1/request.json', '{"x":1}');

      // Assess
      await expect(failure).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(silent.calls).toHaveLength(3);
    } finally {
      await silent.close();
    }
  });

  it("fails a get whose body trickles on after its headers once the body's deadline has passed, instead of waiting on", async () => {
    // Prepare: an S3 that answers with its headers and then a byte of a body it never finishes every
    // 20 ms, never silent long enough for the connection's own deadline: the body's catches it.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const stalling = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.write('{"sealed":"');
      const trickle = setInterval(() => res.write('x'), 20);
      res.on('close', () => clearInterval(trickle));
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
    const store = new S3ClaimCheck('claims', { region: 'eu-west-1', endpoint, timeouts: SHORT_TIMEOUTS });
    try {
      // Act
      const failure = store.get('pl_1/request.json');

      // Assess
      await expect(failure).rejects.toMatchObject({ name: 'TimeoutError', message: expect.stringMatching(/body did not arrive within 100 ms of its request/) });
    } finally {
      stalling.closeAllConnections();
      await new Promise((resolve) => stalling.close(resolve));
    }
  });
});

describe('Class: ThrottlingOnlyRetry', () => {
  it('retries a refusal before any execution began (throttling, a refused connection), and nothing that can come while one runs', async () => {
    const strategy = new ThrottlingOnlyRetry(3);
    const retried = async (errorType: 'THROTTLING' | 'TRANSIENT' | 'SERVER_ERROR', code?: string) => {
      const token = await strategy.acquireInitialRetryToken('sfn');
      const error = Object.assign(new Error('x'), code ? { code } : {});
      return strategy.refreshRetryTokenForRetry(token, { errorType, error: error as never }).then(
        () => true,
        () => false,
      );
    };
    expect(await retried('THROTTLING')).toBe(true);
    expect(await retried('TRANSIENT', 'ECONNREFUSED')).toBe(true);
    expect(await retried('TRANSIENT', 'ECONNRESET')).toBe(false);
    expect(await retried('TRANSIENT', 'ETIMEDOUT')).toBe(false);
    expect(await retried('SERVER_ERROR')).toBe(false);
  });
});

describe('Class: StepFunctionsWorkflow, its own client', () => {
  it.each([
    ['a 500 (the execution may be running)', 1, awsError('InternalFailure', 'internal failure', 500)],
    ['a throttling refusal (no execution began)', 2, awsError('ThrottlingException', 'Rate exceeded', 400)],
  ])('after %s, sends StartSyncExecution %i time(s): a synchronous Express execution is not idempotent by name', async (_, sends, failure) => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const output = { results: [], judgments: [] };
    const sfn = await startFakeAws((_call, calls) => (calls.length === 1 ? failure : { body: { status: 'SUCCEEDED', output: JSON.stringify(output) } }));
    const workflow = new StepFunctionsWorkflow({ stateMachineArn: 'arn:aws:states:eu-west-1:1:stateMachine:Judge', region: 'eu-west-1', endpoint: sfn.endpoint });
    const input = { context: { requestId: 'pl_1', deadlineAt: Date.now() + 10_000 }, models: [], judgeTasks: [] } as unknown as WorkflowInput;
    try {
      const outcome = await workflow.run(input, { executionName: 'pl_1' }).then(
        (answer) => answer,
        (error: Error) => error,
      );
      expect(sfn.calls.map((call) => call.operation)).toEqual(Array(sends).fill('StartSyncExecution'));
      if (sends === 1) expect(outcome).toMatchObject({ name: 'InternalFailure', $metadata: { httpStatusCode: 500 } });
      else expect(outcome).toEqual(output);
    } finally {
      await sfn.close();
    }
  });

  it("stops waiting for an execution's answer just past the request's deadline: the judged request fails instead of holding its invocation", async () => {
    // Prepare: Step Functions takes the StartSyncExecution and never answers.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const silent = await startSilentAws();
    const workflow = new StepFunctionsWorkflow({ stateMachineArn: 'arn:aws:states:eu-west-1:1:stateMachine:Judge', region: 'eu-west-1', endpoint: silent.endpoint });
    const deadlineAt = Date.now() + 100;
    const input = { context: { requestId: 'pl_1', deadlineAt }, models: [], judgeTasks: [] } as unknown as WorkflowInput;
    try {
      // Act
      const failure = workflow.run(input, { executionName: 'pl_1' });

      // Assess: aborted once the grace after the deadline is over, and not retried; the call
      // reached the endpoint given, not a `sync-` host under it.
      await expect(failure).rejects.toMatchObject({ name: 'AbortError' });
      expect(Date.now()).toBeGreaterThanOrEqual(deadlineAt + ANSWER_GRACE_MS);
      expect(silent.calls.map((call) => call.operation)).toEqual(['StartSyncExecution']);
    } finally {
      await silent.close();
    }
  });
});
