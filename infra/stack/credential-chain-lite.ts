import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { DefaultProviderInit } from '@aws-sdk/credential-provider-node';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/** Credentials that expire within this long are read again, as the SDK's chain does (its `credentialsTreatedAsExpired`). */
const REFRESH_BEFORE_MS = 300_000;

/**
 * `@aws-sdk/credential-provider-node` as the Lambda bundles see it (infra/stack/bundle.ts
 * maps the package to this file): its `defaultProvider`, where every SDK client that is
 * given no credentials takes them from. Lambda hands a function its role's credentials in
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, which is the chain's
 * first link; its other links (SSO, profiles, processes, web identity, container and
 * instance metadata) are dynamic imports in the SDK, and esbuild splits the SDK's core
 * into a chunk per set of them that shares a part: files that every cold start loads.
 * So this reads the environment itself, as that first link does (not when a profile is
 * named: the chain then skips the environment too), and otherwise hands over to the whole
 * chain, bundled apart as `#sdk/credential-provider-node` and loaded only then. Either
 * way the credentials are kept until five minutes before they expire, as the chain keeps them.
 */
export function defaultProvider(init: DefaultProviderInit = {}): AwsCredentialIdentityProvider {
  const environment = fromEnv(init);
  let chain: Promise<AwsCredentialIdentityProvider> | undefined;
  let held: AwsCredentialIdentity | undefined;
  const read = async (properties?: Record<string, unknown>): Promise<AwsCredentialIdentity> => {
    if (!(init.profile ?? process.env.AWS_PROFILE)) {
      try {
        return await environment();
      } catch (error) {
        if ((error as Error).name !== 'CredentialsProviderError') throw error;
      }
    }
    chain ??= import('#sdk/credential-provider-node').then(({ defaultProvider: whole }) => whole(init));
    return (await chain)(properties);
  };
  return async (properties) => {
    if (held && (held.expiration === undefined || held.expiration.getTime() - Date.now() > REFRESH_BEFORE_MS)) return held;
    held = await read(properties);
    return held;
  };
}
