/** DynamoDB's answers for "too many requests right now": worth a 503 with Retry-After, not a 500. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);

export function isThrottling(error: unknown): boolean {
  return error instanceof Error && THROTTLING.has(error.name);
}
