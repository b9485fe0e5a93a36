import { credentialsReason } from '../../shared/aws-credentials.js';

/**
 * AWS refused the credentials the admin CLI signed with: not allowed the call by their IAM
 * policy, not valid (an unknown key, a wrong secret) or expired. Before, an `internal_error`
 * (exit 1), as if the CLI had failed; cli.ts gives it its own code and exit status.
 */
export class AwsAccessError extends Error {
  override name = 'AwsAccessError';
}

/** AWS's error names for a refused identity, in the JSON protocols (DynamoDB) and the query ones (CloudFormation), with what to do. */
const REFUSALS: ReadonlyMap<string, string> = new Map([
  ['AccessDeniedException', 'use credentials whose IAM policy allows it'],
  ['AccessDenied', 'use credentials whose IAM policy allows it'],
  ['UnrecognizedClientException', 'the access key is not valid: check AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'],
  ['InvalidClientTokenId', 'the access key is not valid: check AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'],
  ['InvalidSignatureException', 'the secret key does not match the access key: check AWS_PROFILE, or AWS_SECRET_ACCESS_KEY'],
  ['SignatureDoesNotMatch', 'the secret key does not match the access key: check AWS_PROFILE, or AWS_SECRET_ACCESS_KEY'],
  ['ExpiredTokenException', 'the session has expired: sign in again (aws sso login, a new session)'],
  ['ExpiredToken', 'the session has expired: sign in again (aws sso login, a new session)'],
]);

/** The AwsAccessError for `error`, an AWS call's (`call` names it and where it went), or undefined when AWS did not refuse the identity. */
export function awsAccessRefusal(error: unknown, call: string): AwsAccessError | undefined {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  const fix = typeof name === 'string' ? REFUSALS.get(name) : undefined;
  if (fix === undefined) return undefined;
  return new AwsAccessError(`AWS refused ${call} with these credentials (${name}: ${String(message)}): ${fix}`, { cause: error });
}

/**
 * Whether `error` is the SDK's word for an answer it could not read as the service's (an
 * endpoint that is some other server: an unknown error type, a body that is not the
 * protocol's JSON or XML); its `$metadata.httpStatusCode` says what the server answered.
 */
export function isUnreadableAnswer(error: unknown): error is { $metadata: { httpStatusCode?: number } } {
  const e = (error ?? {}) as { name?: unknown; message?: unknown; $metadata?: unknown };
  if (e.$metadata === undefined) return false;
  const message = typeof e.message === 'string' ? e.message : '';
  return e.name === 'Unknown' || e.name === 'SyntaxError' || message === 'Unknown' || message === 'UnknownError' || message.includes('Deserialization error');
}

/** Why the SDK's credential chain found nothing to sign with, for a message that names what to set. */
export function sdkCredentialsReason(error: unknown): string {
  return `the SDK: ${credentialsReason(error) ?? 'no reason given'}`;
}
