import { describe, expect, it } from 'vitest';
import { createAuthorizer } from '../../functions/authorizer.js';
import { generateApiKey } from '../../shared/auth/keys.js';
import type { Repositories } from '../../shared/storage/store.js';

/** A store that knows no key. */
const store = () => ({ apiKeys: { get: async () => undefined }, accounts: { get: async () => undefined } }) as unknown as Pick<Repositories, 'apiKeys' | 'accounts'>;

const event = (authorizationToken: string) => ({ type: 'TOKEN' as const, authorizationToken, methodArn: 'arn:aws:execute-api:us-east-1:1:api/prod/POST/api/v1/prompt' });

describe('Function: the authorizer', () => {
  it('refuses an unknown or malformed key with "Unauthorized" (API Gateway\'s 401), its stack that line only: no trace for the runtime to log', async () => {
    for (const token of [`Bearer ${generateApiKey()}`, 'Bearer mcg_unknown', 'Basic x', '']) {
      const refused = await createAuthorizer(store)(event(token)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toBe('Unauthorized');
      expect((refused as Error).stack).toBe('Error: Unauthorized');
    }
  });

  it('lets a store failure through as itself: API Gateway answers it 503', async () => {
    const failing = () => ({ apiKeys: { get: async () => Promise.reject(new Error('store down')) } }) as unknown as Pick<Repositories, 'apiKeys' | 'accounts'>;
    await expect(createAuthorizer(failing)(event(`Bearer ${generateApiKey()}`))).rejects.toThrow('store down');
  });
});
