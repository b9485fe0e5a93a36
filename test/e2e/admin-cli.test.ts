import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeHttp } from '../support/fake-http.js';
import { runTs } from '../support/processes.js';

/** `npm run -s admin` as an operator runs it: its own process, its environment exactly `env` (nothing of the test's, no AWS_REGION). */
const admin = (args: string[], env: Record<string, string>, io: Pick<Parameters<typeof runTs>[3] & object, 'stdin' | 'stdoutClosed' | 'killAfterMs'> = {}) =>
  runTs('infra/admin/cli.ts', args, env, { envOnly: true, ...io });

/** CloudFormation's answer (query protocol) to DescribeStacks for a stack it does not hold. */
const NO_SUCH_STACK = `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">
  <Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ModelCompareGateway does not exist</Message></Error>
  <RequestId>6b8c1a0e-0000-0000-0000-000000000000</RequestId>
</ErrorResponse>`;

describe('npm run admin: stderr', () => {
  it("is the JSON error alone, without the SDK's NodeVersionSupportWarning on Node 20", async () => {
    // No AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED in the environment: the CLI sets it itself.
    const result = await admin(['balance', '--account', 'acct_x'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' });
    expect(result.code).toBe(4);
    expect(result.stderr).not.toContain('NodeVersionSupportWarning');
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: 'store_unavailable' } });
  });
});

describe('npm run admin: its standard streams', () => {
  it('reads at most a line of a key from a standard input without end (`--key - < /dev/zero` had read until memory ran out)', async () => {
    const result = await admin(['revoke-key', '--key', '-'], { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' }, { stdin: { file: '/dev/zero' }, killAfterMs: 60_000 });
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stderr).error).toEqual({
      code: 'usage',
      message: "--key -: standard input holds more than 4096 characters, more than a key's line; give one key",
    });
  });

  it('exits quietly, with its status, when the reader of its output has left (`| head`): no stack trace on stderr', async () => {
    const result = await admin(['--help'], {}, { stdoutClosed: true });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});

describe('npm run admin: the environment', () => {
  it('answers a store endpoint without a scheme as a usage error naming the variable (it was an internal error, "Invalid URL")', async () => {
    const result = await admin(['balance', '--account', 'acct_x'], { DYNAMODB_ENDPOINT: '127.0.0.1:8000' });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({
      error: { code: 'usage', message: 'DYNAMODB_ENDPOINT must be an http(s) URL, like http://127.0.0.1:8000 (the one npm start prints), got "127.0.0.1:8000"' },
    });
  });
});

describe('npm run admin: the gateway settings it has no use for', () => {
  it("is not stopped by a gateway setting it does not read (a PORT set for something else, a provider's base URL): it reaches the store", async () => {
    const result = await admin(['balance', '--account', 'acct_x'], {
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      PORT: 'abc',
      SIMULATE_PROVIDERS: 'yes',
      OPENAI_BASE_URL: 'api.openai.com/v1',
    });
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: 'store_unavailable' } });
    expect(result.code).toBe(4);
  });
});

describe('npm run admin: the region', () => {
  let home: string;
  let cloudFormation: Awaited<ReturnType<typeof startFakeHttp>>;

  beforeAll(async () => {
    // An operator's ~/.aws: profile ops in eu-west-1, the default profile in ap-southeast-2.
    home = mkdtempSync(join(tmpdir(), 'admin-home-'));
    mkdirSync(join(home, '.aws'));
    writeFileSync(join(home, '.aws', 'config'), '[default]\nregion = ap-southeast-2\n\n[profile ops]\nregion = eu-west-1\n\n[profile bare]\noutput = json\n');
    // Keys of no account: the fake CloudFormation only reads the region they are signed for.
    const keys = 'aws_access_key_id = test-access-key-id\naws_secret_access_key = test-secret-access-key\n';
    writeFileSync(join(home, '.aws', 'credentials'), `[default]\n${keys}\n[ops]\n${keys}\n[bare]\n${keys}`);
    cloudFormation = await startFakeHttp(() => ({ status: 400, headers: { 'content-type': 'text/xml' }, body: NO_SUCH_STACK }));
  });

  afterAll(async () => {
    await cloudFormation?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** The region each DescribeStacks was signed for (its credential scope), in order. */
  const signedRegions = () => cloudFormation.calls.map((call) => /Credential=[^/]+\/\d{8}\/([^/]+)\/cloudformation\//.exec(String(call.headers.authorization))?.[1]);

  it.each([
    ['the profile AWS_PROFILE names', { AWS_PROFILE: 'ops' }, 'eu-west-1', 'from profile ops'],
    ['the default profile', {}, 'ap-southeast-2', 'from profile default'],
    ['AWS_REGION over the profile', { AWS_PROFILE: 'ops', AWS_REGION: 'us-west-2' }, 'us-west-2', 'from AWS_REGION'],
    ['AWS_DEFAULT_REGION over the profile', { AWS_PROFILE: 'ops', AWS_DEFAULT_REGION: 'eu-central-1' }, 'eu-central-1', 'from AWS_DEFAULT_REGION'],
    ['us-east-1 when nothing names one', { AWS_PROFILE: 'bare' }, 'us-east-1', 'the default: no AWS_REGION, AWS_DEFAULT_REGION or region in profile bare'],
  ])('looks for the stack in the region of %s, and says which region it used', async (_name, env, region, from) => {
    // Prepare
    cloudFormation.calls.length = 0;

    // Act
    const result = await admin(['balance', '--account', 'acct_x'], { HOME: home, AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url, ...env });

    // Assess
    expect(result.code, result.stderr).toBe(5);
    expect(signedRegions()).toEqual([region]);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('stack_not_found');
    expect(error.message).toContain(`No stack ModelCompareGateway in ${region} (${from}): deploy it`);
  });

  it('answers a mistyped command line as usage before it looks for the stack (it had answered stack_not_found)', async () => {
    cloudFormation.calls.length = 0;
    const result = await admin(['frobnicate'], { HOME: home, AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url, AWS_REGION: 'us-west-2' });
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stderr).error.code).toBe('usage');
    expect(JSON.parse(result.stderr).error.message).toMatch(/^Unknown command "frobnicate"/);
    expect(cloudFormation.calls).toEqual([]);
  });

  it.each([
    [['top-up', '--account', 'acct_1', '--credits', '1e3'], /^--credits must be a positive decimal number/],
    [['create-account', '--credits', '5', '--rpm', '0'], /^--rpm must be a whole number/],
    [['set-rate-limit', '--account', 'acct_1', '--rpm', '60.0'], /^--rpm must be a whole number/],
    [['revoke-key', '--hash', 'ABC'], /^--hash must be a key's SHA-256/],
    [['top-up', '--account', 'acct_1', '--credits', '5', '--entry', 'nope'], /^--entry must be a top-up's entry ID/],
    [['set-zdr', '--account', 'acct_1'], /^set-zdr takes one of --on or --off/],
    [['balance'], /^--account is required/],
  ])('answers %j, a value its flag does not take, as usage before it looks for the stack (it had called CloudFormation first)', async (argv, message) => {
    cloudFormation.calls.length = 0;
    const result = await admin(argv, { HOME: home, AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url, AWS_REGION: 'us-west-2' });
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: 'usage', message: expect.stringMatching(message) });
    expect(cloudFormation.calls).toEqual([]);
  });
});

/** DynamoDB's answer (JSON protocol) to a call on a table it does not hold. */
const NO_SUCH_TABLE = {
  status: 400,
  headers: { 'content-type': 'application/x-amz-json-1.0' },
  body: { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Requested resource not found' },
};

describe('npm run admin: a configuration that sends the store calls astray', () => {
  let home: string;
  let dynamodb: Awaited<ReturnType<typeof startFakeHttp>>;
  let notAStore: Awaited<ReturnType<typeof startFakeHttp>>;

  beforeAll(async () => {
    // No ~/.aws, no credential in the environment, no instance metadata to ask.
    home = mkdtempSync(join(tmpdir(), 'admin-home-'));
    dynamodb = await startFakeHttp(() => NO_SUCH_TABLE);
    // What the gateway's own API answers a DynamoDB call (a POST to /): a JSON error of its own.
    notAStore = await startFakeHttp(() => ({ status: 405, body: { error: { code: 'method_not_allowed', message: 'Method not allowed' } } }));
  });

  /** An operator's environment with keys of no account, in eu-west-1. */
  const signedIn = () => ({ HOME: home, AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'test-access-key-id', AWS_SECRET_ACCESS_KEY: 'test-secret-access-key' });

  afterAll(async () => {
    await dynamodb?.close();
    await notAStore?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('names a table the store does not hold, and its variable, as a usage error (was internal_error "ResourceNotFoundException: Requested resource not found")', async () => {
    const result = await admin(['balance', '--account', 'acct_x'], { HOME: home, DYNAMODB_ENDPOINT: dynamodb.url, ACCOUNTS_TABLE: 'wrong' });
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'usage',
        message: `No table "wrong" (ACCOUNTS_TABLE) in the store at ${dynamodb.url} (DYNAMODB_ENDPOINT): set ACCOUNTS_TABLE to a table this store holds, or unset the *_TABLE variables for the tables npm start makes`,
      },
    });
  });

  it('names a deployed table the store does not hold by its variable and stack output', async () => {
    const result = await admin(['list-keys', '--account', 'acct_x'], { ...signedIn(), AWS_ENDPOINT_URL_DYNAMODB: dynamodb.url, ACCOUNTS_TABLE: 'gone' });
    expect(result.code, result.stderr).toBe(2);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('usage');
    expect(error.message).toBe(
      `No table "gone" (ACCOUNTS_TABLE) in the store at ${dynamodb.url} (AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL): set ACCOUNTS_TABLE to the table's name (the stack's AccountsTableName output), or unset every *_TABLE variable to read the names from the deployed stack`,
    );
  });

  it('answers an endpoint that is not a store (the gateway\'s own port) as store_unavailable naming it (was internal_error "Unknown: UnknownError")', async () => {
    const result = await admin(['balance', '--account', 'acct_x'], { HOME: home, DYNAMODB_ENDPOINT: notAStore.url });
    expect(result.code, result.stderr).toBe(4);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'store_unavailable',
        message: `The store at ${notAStore.url} (DYNAMODB_ENDPOINT) did not answer GetItem as DynamoDB does (HTTP 405): is it a DynamoDB endpoint (the store npm start prints, not the API)?`,
      },
    });
  });

  it("answers https to a store that serves http as store_unavailable saying TLS failed (was internal_error with OpenSSL's words)", async () => {
    const result = await admin(['balance', '--account', 'acct_x'], { HOME: home, DYNAMODB_ENDPOINT: notAStore.url.replace(/^http:/, 'https:') });
    expect(result.code, result.stderr).toBe(4);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'store_unavailable',
        message: `TLS failed (EPROTO) calling the store at ${notAStore.url.replace(/^http:/, 'https:')} (DYNAMODB_ENDPOINT): https to a store that serves http, or a certificate not trusted`,
      },
    });
  });

  it.each([
    [
      'not allowed the call',
      'AccessDeniedException',
      'User: arn:aws:iam::123456789012:user/ops is not authorized to perform: dynamodb:GetItem',
      'use credentials whose IAM policy allows it',
    ],
    ['expired', 'ExpiredTokenException', 'The security token included in the request is expired', 'the session has expired: sign in again'],
  ])('answers credentials AWS refused (%s) as access_denied exit 7 naming the call and what to do (was internal_error, exit 1)', async (_name, type, message, fix) => {
    const refusing = await startFakeHttp(() => ({
      status: 400,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message },
    }));
    try {
      // An endpoint with a user and password in it: named without them.
      const env = { ...signedIn(), AWS_ENDPOINT_URL_DYNAMODB: refusing.url.replace('http://', 'http://ops:s3cretpw@'), ACCOUNTS_TABLE: 'gateway-accounts' };
      const result = await admin(['balance', '--account', 'acct_x'], env);
      expect(result.code, result.stderr).toBe(7);
      const { error } = JSON.parse(result.stderr);
      expect(error.code).toBe('access_denied');
      expect(error.message).toContain(
        `AWS refused GetItem on table "gateway-accounts" in the store at ${refusing.url.replace('http://', 'http://[redacted]@')} (AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL) with these credentials (${type}: ${message}): ${fix}`,
      );
      // Refused, not retried: one call.
      expect(refusing.calls).toHaveLength(1);
    } finally {
      await refusing.close();
    }
  });

  it('answers a DescribeStacks AWS refused as access_denied exit 7 naming the stack', async () => {
    const refusing = await startFakeHttp(() => ({
      status: 403,
      headers: { 'content-type': 'text/xml' },
      body: `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/ops is not authorized to perform: cloudformation:DescribeStacks</Message></Error><RequestId>6b8c1a0e-0000-0000-0000-000000000001</RequestId></ErrorResponse>`,
    }));
    try {
      const env = { ...signedIn(), AWS_ENDPOINT_URL_CLOUDFORMATION: refusing.url };
      const result = await admin(['balance', '--account', 'acct_x'], env);
      expect(result.code, result.stderr).toBe(7);
      const { error } = JSON.parse(result.stderr);
      expect(error).toMatchObject({
        code: 'access_denied',
        message: expect.stringMatching(
          /^AWS refused DescribeStacks of the stack ModelCompareGateway in eu-west-1 \(from AWS_REGION\) with these credentials \(AccessDenied: User: .* is not authorized to perform: cloudformation:DescribeStacks\): use credentials whose IAM policy allows it$/,
        ),
      });
    } finally {
      await refusing.close();
    }
  });

  it.each([
    ["the gateway's API (a JSON 404)", 404, 'application/json', '{"error":{"code":"not_found","message":"No route for this method and path"}}', ' (HTTP 404)'],
    ['a web page (a 200 that holds no stack)', 200, 'text/html', '<html><body>It works</body></html>', ''],
    ['a server error page', 502, 'text/html', '<html>Bad Gateway</html>', ' (HTTP 502)'],
  ])(
    'answers a CloudFormation endpoint that is some other server, %s, as stack_not_found exit 5 naming the variable (was internal_error, an XML parse error)',
    async (_name, status, type, body, shown) => {
      const other = await startFakeHttp(() => ({ status, headers: { 'content-type': type }, body }));
      try {
        const result = await admin(['balance', '--account', 'acct_x'], { ...signedIn(), AWS_ENDPOINT_URL: other.url });
        expect(result.code, result.stderr).toBe(5);
        expect(JSON.parse(result.stderr).error).toEqual({
          code: 'stack_not_found',
          message: `${other.url} did not answer DescribeStacks of the stack ModelCompareGateway in eu-west-1 (from AWS_REGION) as CloudFormation does${shown}: is AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_CLOUDFORMATION) a CloudFormation endpoint, a LocalStack? For a local store set DYNAMODB_ENDPOINT (npm start prints it)`,
        });
      } finally {
        await other.close();
      }
    },
  );

  it("waits for a store that answers in 2.5 s, as a region far from the operator's machine may (the functions' 2 s a whole answer had failed all 3 attempts)", async () => {
    const slow = await startFakeHttp(async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      return { status: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: {} };
    });
    try {
      const result = await admin(['balance', '--account', 'acct_far'], { ...signedIn(), AWS_ENDPOINT_URL_DYNAMODB: slow.url, ACCOUNTS_TABLE: 'gateway-accounts' });
      // Answered: the account is not there (an empty GetItem), not store_unavailable.
      expect(JSON.parse(result.stderr).error.code, result.stderr).toBe('not_found');
      expect(slow.calls.filter((call) => String(call.headers['x-amz-target']).endsWith('GetItem')).length).toBeGreaterThan(0);
    } finally {
      await slow.close();
    }
  });

  it('answers no AWS credentials with *_TABLE set as it does without them, stack_not_found exit 5 saying what to set (was internal_error CredentialsProviderError)', async () => {
    const env = { HOME: home, AWS_REGION: 'eu-west-1', AWS_EC2_METADATA_DISABLED: 'true', AWS_ENDPOINT_URL_DYNAMODB: dynamodb.url, ACCOUNTS_TABLE: 'gateway-accounts' };
    const callsBefore = dynamodb.calls.length;
    const result = await admin(['balance', '--account', 'acct_x'], env);
    expect(result.code, result.stderr).toBe(5);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'stack_not_found',
        message: `No AWS credentials to call the store at ${dynamodb.url} (AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL) with (the SDK: Could not load credentials from any providers): set AWS credentials (a profile, SSO, the environment) for the deployed tables, or DYNAMODB_ENDPOINT for a local store (npm start prints it)`,
      },
    });
    // Nothing was sent unsigned.
    expect(dynamodb.calls.length).toBe(callsBefore);
  });
});
