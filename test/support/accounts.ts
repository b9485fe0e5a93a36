import type { LocalHost } from '../../infra/local/host.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../../shared/auth/keys.js';

/** A new account of the host with a key, so that each test owns its balance and its rate-limit window. */
export async function openTestAccount(host: LocalHost, balanceMicro: number, rateLimitRpm = 100_000): Promise<{ accountId: string; auth: Record<string, string> }> {
  const { accountId } = await host.gateway.credits.openAccount({ balanceMicro, rateLimitRpm });
  const key = generateApiKey();
  await host.gateway.apiKeys.put({ keyHash: hashApiKey(key), accountId, keyPrefix: keyPrefix(key), createdAt: new Date().toISOString() });
  return { accountId, auth: { authorization: `Bearer ${key}` } };
}

/** Resolves once the condition holds (polled every 2 ms): for counts the simulator records as calls arrive. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** An account's balance, micro-credits, read consistently from the host's store. */
export async function balanceOf(host: LocalHost, accountId: string): Promise<number> {
  return (await host.gateway.accounts.get(accountId))!.balanceMicro;
}
