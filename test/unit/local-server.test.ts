import { describe, expect, it } from 'vitest';

describe('Function: cacheAuthorizer', () => {
  it('reuses an Allow decision for the same Authorization value until the TTL passes, and never caches a refusal', async () => {
    const { cacheAuthorizer } = await import('../../infra/local/server.js');
    const clock = { now: 1_000 };
    let calls = 0;
    let allow = true;
    const authorizer = cacheAuthorizer(
      async () => {
        calls++;
        if (!allow) throw new Error('Unauthorized');
        return { principalId: 'acct', policyDocument: { Version: '2012-10-17', Statement: [] } };
      },
      30_000,
      () => clock.now,
    );
    const event = (token: string) => ({ type: 'TOKEN' as const, authorizationToken: token, methodArn: 'arn' });
    await authorizer(event('Bearer a'));
    await authorizer(event('Bearer a'));
    expect(calls).toBe(1);
    allow = false; // revoked: the cached decision stands until the TTL, as in API Gateway
    clock.now += 29_999;
    await expect(authorizer(event('Bearer a'))).resolves.toMatchObject({ principalId: 'acct' });
    clock.now += 1;
    await expect(authorizer(event('Bearer a'))).rejects.toThrow('Unauthorized');
    await expect(authorizer(event('Bearer b'))).rejects.toThrow('Unauthorized');
    expect(calls).toBe(3);
  });
});
