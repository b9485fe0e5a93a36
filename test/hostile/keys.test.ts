import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../infra/admin/commands.js';
import type { LocalHost } from '../../infra/local/host.js';
import { DEFAULT_SETTINGS } from '../../infra/stack/gateway-stack.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';
import { ROOT } from '../support/processes.js';
import { post, startTestHost } from '../support/local.js';

/**
 * Issue 8: "Keys are compared by hash; a revoked key stops working within the documented
 * authorizer cache time". Keys are issued and revoked with the admin commands, as an
 * operator does; the store is then read as it is.
 */

let host: LocalHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(async () => {
  await host?.close();
});

const admin = (...argv: string[]) => runAdminCommand(argv, host.gateway);
const cheap = { prompt: 'Say hello', models: ['fam_k-8b'] };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function apiKeyItems(): Promise<Record<string, unknown>[]> {
  const { Items } = await host.gateway.storeClient.documents.send(new ScanCommand({ TableName: host.gateway.config.tables.apiKeys, ConsistentRead: true }));
  return (Items ?? []) as Record<string, unknown>[];
}

describe('API keys', () => {
  it('stores only the SHA-256 of a key (and an 8-character prefix to recognise it)', async () => {
    const account = await admin('create-account', '--credits', '5');
    const { apiKey } = (await admin('create-key', '--account', String(account.accountId))) as { apiKey: string };
    expect(apiKey).toMatch(/^mcg_[A-Za-z0-9_-]{43}$/);
    const items = await apiKeyItems();
    const item = items.find((i) => i.accountId === account.accountId);
    expect(item).toEqual({
      keyHash: createHash('sha256').update(apiKey).digest('hex'),
      accountId: account.accountId,
      keyPrefix: apiKey.slice(0, 8),
      createdAt: expect.any(String),
    });
    // The key, or any 12 characters of its secret part, is nowhere in the table.
    const table = JSON.stringify(items);
    expect(table).not.toContain(apiKey);
    const secretPart = apiKey.slice(8);
    for (let i = 0; i + 12 <= secretPart.length; i++) expect(table).not.toContain(secretPart.slice(i, i + 12));
    expect((await post(host, cheap, bearer(apiKey))).status).toBe(200);
  });

  it('looks keys up by their hash: a record keyed by a raw key, or a stored hash presented as a key, opens nothing', async () => {
    const rawStored = generateApiKey();
    // A record whose key field is the raw key (as a store that compared keys would hold it).
    await host.gateway.apiKeys.put({ keyHash: rawStored, accountId: host.demo.accountId, keyPrefix: keyPrefix(rawStored), createdAt: new Date().toISOString() });
    host.simulator.reset();
    expect((await post(host, cheap, bearer(rawStored))).status).toBe(401);
    // The demo key's stored hash is well-formed as a key (64 hex characters) and must not open the account.
    expect((await post(host, cheap, bearer(hashApiKey(host.demo.apiKey)))).status).toBe(401);
    // A key differing in one character.
    const near = host.demo.apiKey.slice(0, -1) + (host.demo.apiKey.endsWith('A') ? 'B' : 'A');
    expect((await post(host, cheap, bearer(near))).status).toBe(401);
    expect(host.simulator.calls()).toHaveLength(0);
    // The real key still works.
    expect((await post(host, cheap, bearer(host.demo.apiKey))).status).toBe(200);
  });

  it('stops a revoked key at once on the local host (no authorizer cache), before any model runs', async () => {
    const account = await admin('create-account', '--credits', '5');
    const { apiKey } = (await admin('create-key', '--account', String(account.accountId))) as { apiKey: string };
    expect((await post(host, cheap, bearer(apiKey))).status).toBe(200);
    const balance = (await host.gateway.accounts.get(String(account.accountId)))!.balanceMicro;

    const revoked = await admin('revoke-key', '--key', apiKey);
    expect(revoked).toMatchObject({ accountId: account.accountId, revokedAt: expect.any(String) });
    const revokedAt = Date.now();
    host.simulator.reset();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(host, cheap, bearer(apiKey))));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect(answers[0]!.body.error.code).toBe('unauthorized');
    expect(Date.now() - revokedAt).toBeLessThan(DEFAULT_SETTINGS.authorizerCacheTtl.toMilliseconds());
    expect(host.simulator.calls()).toHaveLength(0);
    expect((await host.gateway.accounts.get(String(account.accountId)))!.balanceMicro).toBe(balance);
    // Revoking keeps the record (its hash and the time), never the key.
    const item = (await apiKeyItems()).find((i) => i.keyHash === hashApiKey(apiKey));
    expect(item).toMatchObject({ revokedAt: revoked.revokedAt });
    expect(JSON.stringify(item)).not.toContain(apiKey);
  });

  it("documents the AWS bound: the stack's authorizer cache TTL is the one docs/deployment.md gives", () => {
    const readme = readFileSync(`${ROOT}docs/deployment.md`, 'utf8');
    const ttl = DEFAULT_SETTINGS.authorizerCacheTtl.toSeconds();
    expect(ttl).toBe(30);
    expect(readme).toMatch(new RegExp(`\\| \`gateway:authorizerCacheTtlSeconds\` \\| ${ttl} \\|`));
    expect(readme).toMatch(new RegExp(`still answer the key for at most[\\s\\S]{0,80}${ttl} s by default`));
  });
});
