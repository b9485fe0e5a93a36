/**
 * What provider-keys.ts takes from the Secrets Manager client, loaded with the first read
 * of the secret. A module of its own, imported statically from the package, so that the
 * bundle carries this one command: a dynamic import of the package itself would carry
 * every command it has.
 */
export { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
