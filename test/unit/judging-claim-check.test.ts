import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SFNClient, StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { carry, isClaimed, retrieve } from '../../shared/claim-check/carry.js';
import { ClaimCheckNotFoundError } from '../../shared/claim-check/errors.js';
import { CLAIM_CHECK_EXPIRY_MS, MemoryClaimCheck } from '../../shared/claim-check/memory.js';
import { S3ClaimCheck } from '../../shared/claim-check/s3.js';
import { WorkflowFailedError } from '../../shared/judging/errors.js';
import { loadConfig } from '../../shared/config.js';
import { workflowSettings } from '../../shared/judging/settings.js';
import { StepFunctionsWorkflow } from '../../shared/judging/step-functions.js';
import type { WorkflowInput } from '../../shared/judging/workflow-types.js';

describe('Function: carry', () => {
  it('keeps a value inline up to the limit and claim-checks it above, reading it back either way', async () => {
    // Prepare
    const store = new MemoryClaimCheck();
    const value = { text: 'é'.repeat(100) }; // 2 bytes a character in UTF-8

    // Act
    const inline = await carry(store, 'pl_1/small.json', value, 220);
    const claimed = await carry(store, 'pl_1/large.json', value, 200);

    // Assess
    expect(inline).toEqual({ value });
    expect(isClaimed(claimed)).toBe(true);
    expect(claimed).toEqual({ claim: 'pl_1/large.json', bytes: Buffer.byteLength(JSON.stringify(value)), key: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/) });
    expect(store.keys()).toEqual(['pl_1/large.json']);
    expect(await retrieve(store, inline)).toEqual(value);
    expect(await retrieve(store, claimed)).toEqual(value);
  });

  it('stores a claimed value encrypted with a key only the reference carries: a copy left behind by a dead request cannot be read', async () => {
    // Prepare
    const store = new MemoryClaimCheck();
    const secret = 'a prompt the caller asked us not to keep';

    // Act
    const claimed = await carry(store, 'pl_2/request.json', { prompt: secret.repeat(20) }, 100);
    const other = await carry(store, 'pl_3/request.json', { prompt: secret.repeat(20) }, 100);

    // Assess: neither the text nor any base64 form of it is in the store; another key does not open it.
    const stored = await store.get('pl_2/request.json');
    const plain = Buffer.from(stored, 'base64').toString('latin1');
    expect(stored).not.toContain('prompt');
    expect(plain).not.toContain('prompt');
    expect(plain).not.toContain(secret.slice(0, 8));
    expect(await store.get('pl_3/request.json')).not.toBe(stored);
    if (!isClaimed(claimed) || !isClaimed(other)) throw new Error('expected both values claimed');
    await expect(retrieve(store, { ...claimed, key: other.key })).rejects.toThrow();
    expect(await retrieve(store, claimed)).toEqual({ prompt: secret.repeat(20) });
  });

  it('still reads a reference written before encryption (no key): plain JSON', async () => {
    const store = new MemoryClaimCheck();
    await store.put('pl_4/result.json', '{"output":"old"}');
    expect(await retrieve(store, { claim: 'pl_4/result.json', bytes: 16 })).toEqual({ output: 'old' });
  });
});

describe('Class: MemoryClaimCheck', () => {
  it("keeps an object a day at most, as the stack's bucket does: one a timed-out task wrote after its request deleted its own goes", async () => {
    let now = 0;
    const store = new MemoryClaimCheck(() => now);
    await store.put('pl_a/results/1.json', 'late');
    now = CLAIM_CHECK_EXPIRY_MS - 1;
    await store.put('pl_b/request.json', 'b');
    expect(await store.get('pl_a/results/1.json')).toBe('late');
    now = CLAIM_CHECK_EXPIRY_MS;
    await expect(store.get('pl_a/results/1.json')).rejects.toBeInstanceOf(ClaimCheckNotFoundError);
    await store.put('pl_c/request.json', 'c');
    expect(store.keys()).toEqual(['pl_b/request.json', 'pl_c/request.json']);
  });

  it('answers ClaimCheckNotFoundError for a deleted key, and deletes missing keys quietly', async () => {
    const store = new MemoryClaimCheck();
    await store.put('k', 'v');
    await store.delete(['k', 'never-written']);
    await expect(store.get('k')).rejects.toBeInstanceOf(ClaimCheckNotFoundError);
  });
});

describe('Class: S3ClaimCheck', () => {
  const s3 = mockClient(S3Client);

  beforeEach(() => {
    s3.reset();
  });

  it('puts, gets and deletes objects of its bucket', async () => {
    // Prepare
    s3.on(PutObjectCommand).resolves({});
    s3.on(GetObjectCommand).resolves({ Body: { transformToString: async () => '{"x":1}' } as never });
    s3.on(DeleteObjectsCommand).resolves({});
    const store = new S3ClaimCheck('claims', { region: 'eu-west-1', client: new S3Client({}) });

    // Act
    await store.put('pl_1/request.json', '{"x":1}');
    const body = await store.get('pl_1/request.json');
    await store.delete(Array.from({ length: 1_500 }, (_, i) => `pl_1/judgments/${i}.json`));

    // Assess
    expect(body).toBe('{"x":1}');
    expect(s3.commandCalls(PutObjectCommand)[0]!.args[0].input).toMatchObject({ Bucket: 'claims', Key: 'pl_1/request.json', Body: '{"x":1}' });
    expect(s3.commandCalls(GetObjectCommand)[0]!.args[0].input).toEqual({ Bucket: 'claims', Key: 'pl_1/request.json' });
    // DeleteObjects takes 1,000 keys a call.
    const deletes = s3.commandCalls(DeleteObjectsCommand).map((call) => call.args[0].input.Delete!.Objects!.length);
    expect(deletes).toEqual([1_000, 500]);
  });

  it('answers ClaimCheckNotFoundError for NoSuchKey', async () => {
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey' }));
    const store = new S3ClaimCheck('claims', { region: 'eu-west-1', client: new S3Client({}) });
    await expect(store.get('pl_1/gone.json')).rejects.toBeInstanceOf(ClaimCheckNotFoundError);
  });

  it('fails a delete that S3 reports per key', async () => {
    s3.on(DeleteObjectsCommand).resolves({ Errors: [{ Key: 'k', Code: 'AccessDenied' }] });
    const store = new S3ClaimCheck('claims', { region: 'eu-west-1', client: new S3Client({}) });
    await expect(store.delete(['k'])).rejects.toThrow(/AccessDenied/);
  });
});

describe('Class: StepFunctionsWorkflow', () => {
  const sfn = mockClient(SFNClient);
  const input = { context: { requestId: 'pl_1', deadlineAt: Date.now() + 60_000 }, models: [], judgeTasks: [] } as unknown as WorkflowInput;

  beforeEach(() => {
    sfn.reset();
  });

  it('starts a synchronous execution named after the request and answers its output', async () => {
    // Prepare
    sfn.on(StartSyncExecutionCommand).resolves({ status: 'SUCCEEDED', output: JSON.stringify({ results: [], judgments: [] }) });
    const workflow = new StepFunctionsWorkflow({ stateMachineArn: 'arn:aws:states:eu-west-1:1:stateMachine:Judge', region: 'eu-west-1', client: new SFNClient({}) });

    // Act
    const output = await workflow.run(input, { executionName: 'pl_1' });

    // Assess
    expect(output).toEqual({ results: [], judgments: [] });
    expect(sfn.commandCalls(StartSyncExecutionCommand)[0]!.args[0].input).toEqual({
      stateMachineArn: 'arn:aws:states:eu-west-1:1:stateMachine:Judge',
      name: 'pl_1',
      input: JSON.stringify(input),
    });
  });

  it.each(['FAILED', 'TIMED_OUT'])('throws WorkflowFailedError when the execution ends %s', async (status) => {
    sfn.on(StartSyncExecutionCommand).resolves({ status: status as 'FAILED', error: 'States.Timeout' });
    const workflow = new StepFunctionsWorkflow({ stateMachineArn: 'arn', region: 'eu-west-1', client: new SFNClient({}) });
    await expect(workflow.run(input, { executionName: 'pl_1' })).rejects.toBeInstanceOf(WorkflowFailedError);
  });
});

describe('Function: workflowSettings', () => {
  it('reads the state machine and bucket the stack sets, and nothing when they are unset or empty', () => {
    expect(workflowSettings(loadConfig({ JUDGE_WORKFLOW_ARN: 'arn:sm', CLAIM_CHECK_BUCKET: 'bucket' }))).toEqual({ stateMachineArn: 'arn:sm', claimCheckBucket: 'bucket' });
    expect(workflowSettings(loadConfig({ JUDGE_WORKFLOW_ARN: '' }))).toEqual({ stateMachineArn: undefined, claimCheckBucket: undefined });
  });
});
