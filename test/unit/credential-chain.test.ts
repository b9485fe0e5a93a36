import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultProvider } from '../../infra/stack/credential-chain-lite.js';

/** The variables the chain reads, kept and restored around each test. */
const NAMES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CREDENTIAL_EXPIRATION',
  'AWS_PROFILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
  'AWS_EC2_METADATA_DISABLED',
];
let saved: Record<string, string | undefined>;
let dir: string;

beforeEach(() => {
  saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
  for (const name of NAMES) delete process.env[name];
  dir = mkdtempSync(join(tmpdir(), 'gateway-credential-chain-'));
  writeFileSync(join(dir, 'credentials'), '[named]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = p\n');
  Object.assign(process.env, { AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'), AWS_CONFIG_FILE: join(dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true' });
});

afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("Lambda bundles' default credential chain (infra/stack/credential-chain-lite.ts)", () => {
  it("reads Lambda's credentials from the environment once and keeps them, as the SDK's chain does", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIAFIRST', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' });
    const credentials = defaultProvider();
    expect(await credentials()).toMatchObject({ accessKeyId: 'AKIAFIRST', secretAccessKey: 's', sessionToken: 't' });
    process.env.AWS_ACCESS_KEY_ID = 'AKIASECOND';
    expect(await credentials()).toMatchObject({ accessKeyId: 'AKIAFIRST' });
  });

  it('reads them again once they expire within five minutes', async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIAFIRST', AWS_SECRET_ACCESS_KEY: 's', AWS_CREDENTIAL_EXPIRATION: new Date(Date.now() + 240_000).toISOString() });
    const credentials = defaultProvider();
    expect(await credentials()).toMatchObject({ accessKeyId: 'AKIAFIRST' });
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIASECOND', AWS_CREDENTIAL_EXPIRATION: new Date(Date.now() + 3_600_000).toISOString() });
    expect(await credentials()).toMatchObject({ accessKeyId: 'AKIASECOND' });
    process.env.AWS_ACCESS_KEY_ID = 'AKIATHIRD';
    expect(await credentials()).toMatchObject({ accessKeyId: 'AKIASECOND' });
  });

  it("hands over to the SDK's whole chain when the environment holds no credentials, or a profile is named", async () => {
    await expect(defaultProvider()()).rejects.toMatchObject({ name: 'CredentialsProviderError' });
    expect(await defaultProvider({ profile: 'named' })()).toMatchObject({ accessKeyId: 'AKIAPROFILE' });
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIAENVIRONMENT', AWS_SECRET_ACCESS_KEY: 's', AWS_PROFILE: 'named' });
    // The chain warns that both are set (to the logger given), and takes the profile.
    const warnings: unknown[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: (...args: unknown[]) => warnings.push(args), error: () => undefined };
    expect(await defaultProvider({ logger })()).toMatchObject({ accessKeyId: 'AKIAPROFILE' });
    expect(warnings).toHaveLength(1);
  });
});
