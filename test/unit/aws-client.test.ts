import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AwsJsonClient, AwsServiceError } from '../../shared/aws/json-client.js';
import { signV4 } from '../../shared/aws/sigv4.js';
import { ConditionalCheckFailed, createDocumentClient } from '../../shared/storage/dynamodb.js';
import { fromAttributes, toAttributes } from '../../shared/storage/marshall.js';
import { awsError, startFakeAws } from '../support/fake-aws.js';
import { startFakeHttp } from '../support/fake-http.js';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };

const bytes = (data: string | ArrayBuffer | ArrayBufferView) =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/** The SDK signer's hash interface over node:crypto. */
class Sha256 {
  private hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret ? createHmac('sha256', bytes(secret)) : createHash('sha256');
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {}
}

let fake: Awaited<ReturnType<typeof startFakeAws>> | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('Function: signV4', () => {
  it('computes the signature the AWS SDK signer computes for the same request', async () => {
    const now = new Date('2026-11-22T10:11:12.000Z');
    const body = JSON.stringify({ TableName: 'gateway-accounts', Key: { accountId: { S: 'acct_1' } } });
    const headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' };
    const ours = signV4({ method: 'POST', host: 'dynamodb.eu-west-1.amazonaws.com', path: '/', headers, body }, CREDENTIALS, 'eu-west-1', 'dynamodb', now);
    const sdk = await new SignatureV4({ credentials: CREDENTIALS, region: 'eu-west-1', service: 'dynamodb', sha256: Sha256, applyChecksum: false }).sign(
      { method: 'POST', protocol: 'https:', hostname: 'dynamodb.eu-west-1.amazonaws.com', path: '/', headers: { ...headers, host: 'dynamodb.eu-west-1.amazonaws.com' }, body },
      { signingDate: now },
    );
    expect(ours.authorization).toBe(sdk.headers.authorization);
    expect(ours['x-amz-security-token']).toBe('session-token');
    expect(ours['x-amz-date']).toBe('20261122T101112Z');
  });
});

describe('Module: marshall', () => {
  it('round-trips every value kind the repositories store, leaving undefined members out', () => {
    const item = { s: 'x', empty: '', n: -12.5, big: 2 ** 52, yes: true, none: null, list: [1, 'a', { m: false }], map: { inner: { deep: 3 } }, bytes: new Uint8Array([0, 1, 255]), gone: undefined };
    const attributes = toAttributes(item);
    expect(attributes.gone).toBeUndefined();
    expect(attributes.n).toEqual({ N: '-12.5' });
    expect(attributes.bytes).toEqual({ B: 'AAH/' });
    const { gone: _gone, ...expected } = item;
    expect(fromAttributes(attributes)).toEqual(expected);
  });

  it('refuses values DynamoDB cannot hold or that would not come back the same, naming where they are', () => {
    expect(() => toAttributes({ a: { b: Number.NaN } })).toThrow('item.a.b: DynamoDB cannot store NaN');
    expect(() => toAttributes({ f: () => 1 })).toThrow('item.f: DynamoDB cannot store a function');
    expect(() => toAttributes({ when: new Date(0) })).toThrow('item.when: DynamoDB cannot store a Date; convert it first');
    expect(() => toAttributes({ m: new Map() })).toThrow('item.m: DynamoDB cannot store a Map');
    expect(() => toAttributes({ big: 2 ** 60 })).toThrow(RangeError);
    expect(() => fromAttributes({ big: { N: '12345678901234567890' } })).toThrow(RangeError);
  });

  it('leaves undefined members of lists out, and reads binary sets', () => {
    expect(toAttributes({ list: [1, undefined, 'a'] })).toEqual({ list: { L: [{ N: '1' }, { S: 'a' }] } });
    expect(fromAttributes({ bs: { BS: ['AQ=='] } })).toEqual({ bs: new Set([new Uint8Array([1])]) });
    expect(toAttributes({ id: 12n })).toEqual({ id: { N: '12' } });
  });
});

describe('Class: AwsJsonClient', () => {
  it('signs with the credentials and sends the JSON protocol headers', async () => {
    fake = await startFakeAws(() => ({ body: { SecretString: '{}' } }));
    const client = new AwsJsonClient({ service: 'secretsmanager', region: 'eu-west-1', targetPrefix: 'secretsmanager', jsonVersion: '1.1', endpoint: fake.endpoint, credentials: CREDENTIALS });
    await expect(client.call('GetSecretValue', { SecretId: 'arn:x' })).resolves.toEqual({ SecretString: '{}' });
    client.destroy();
    const [call] = fake.calls;
    expect(call!.operation).toBe('GetSecretValue');
    expect(call!.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(call!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, Signature=[0-9a-f]{64}$/);
  });

  it('asks a credential provider once, and again only when the credentials are about to expire', async () => {
    fake = await startFakeAws(() => ({ body: {} }));
    // The first credentials last an hour; later ones expire within the 5-minute margin, so each call asks again.
    let asked = 0;
    const provider = async () => ({ ...CREDENTIALS, accessKeyId: `AKID${++asked}`, expiration: new Date(Date.now() + (asked === 1 ? 60 * 60_000 : 60_000)) });
    const client = new AwsJsonClient({ service: 'dynamodb', region: 'us-east-1', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', endpoint: fake.endpoint, credentials: provider });
    await client.call('ListTables', {});
    await client.call('ListTables', {});
    expect(asked).toBe(1);
    // An hour later (the cached credentials' expiry passed), and once more.
    const now = Date.now();
    const later = vi.spyOn(Date, 'now').mockReturnValue(now + 61 * 60_000);
    await client.call('ListTables', {});
    await client.call('ListTables', {});
    later.mockRestore();
    expect(asked).toBe(3);
    expect(fake.calls.map((call) => /Credential=(AKID\d)/.exec(String(call.headers.authorization))?.[1])).toEqual(['AKID1', 'AKID1', 'AKID2', 'AKID3']);
    client.destroy();
  });

  it('does not repeat a call whose answer is not JSON: the write may have landed', async () => {
    const notJson = await startFakeHttp(() => ({ body: 'not json' }));
    const client = new AwsJsonClient({ service: 'dynamodb', region: 'us-east-1', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', endpoint: notJson.url, credentials: 'unsigned', random: () => 0 });
    await expect(client.call('PutItem', {})).rejects.toMatchObject({ code: 'EBADJSON' });
    expect(notJson.calls).toHaveLength(1);
    client.destroy();
    await notJson.close();
  });

  it('retries throttling and 5xx with backoff, at most three attempts, and never a client error', async () => {
    let answers = [awsError('ThrottlingException', 'slow', 400), awsError('InternalServerError', 'oops', 500), { body: { ok: 1 } }];
    fake = await startFakeAws(() => answers.shift());
    const client = new AwsJsonClient({ service: 'dynamodb', region: 'us-east-1', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', endpoint: fake.endpoint, credentials: 'unsigned', random: () => 0 });
    await expect(client.call('GetItem', {})).resolves.toEqual({ ok: 1 });
    expect(fake.calls).toHaveLength(3);

    answers = [awsError('ThrottlingException', 'slow'), awsError('ThrottlingException', 'slow'), awsError('ThrottlingException', 'still slow'), { body: {} }];
    await expect(client.call('GetItem', {})).rejects.toMatchObject({ name: 'ThrottlingException', message: 'still slow', statusCode: 400 });
    expect(fake.calls).toHaveLength(6);

    answers = [awsError('ValidationException', 'bad key')];
    const error = await client.call('GetItem', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AwsServiceError);
    expect(fake.calls).toHaveLength(7);
    client.destroy();
  });

  it('retries a connection that fails, then reports it', async () => {
    const client = new AwsJsonClient({ service: 'dynamodb', region: 'us-east-1', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', endpoint: 'http://127.0.0.1:9', credentials: 'unsigned', random: () => 0 });
    await expect(client.call('GetItem', {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    client.destroy();
  });
});

describe('Class: DocumentClient', () => {
  it('hands back the item a refused conditional write returned', async () => {
    fake = await startFakeAws(() => awsError('ConditionalCheckFailedException', 'The conditional request failed', 400, { Item: toAttributes({ accountId: 'a', balanceMicro: 7 }) }));
    const client = createDocumentClient({ region: 'us-east-1', endpoint: fake.endpoint });
    const error = await client
      .update({ TableName: 't', Key: { accountId: 'a' }, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': 1 }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionalCheckFailed);
    expect((error as ConditionalCheckFailed).item).toEqual({ accountId: 'a', balanceMicro: 7 });
    expect(fake.calls[0]!.input).toMatchObject({ Key: { accountId: { S: 'a' } }, ExpressionAttributeValues: { ':x': { N: '1' } } });
    client.destroy();
  });

  it('needs credentials or a local endpoint', () => {
    expect(() => createDocumentClient({ region: 'us-east-1' })).toThrow(/AWS_ACCESS_KEY_ID/);
  });
});
