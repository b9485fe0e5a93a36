/**
 * The SDK's whole default credential chain (environment, SSO, profiles, credential
 * processes, web identity, container and instance metadata), loaded on demand as
 * `#sdk/credential-provider-node`: in a Lambda bundle a module of its own beside the
 * function's (infra/stack/bundle.ts), which only a function whose environment holds no
 * credentials loads (infra/stack/credential-chain-lite.ts).
 */
export { defaultProvider } from '@aws-sdk/credential-provider-node';
