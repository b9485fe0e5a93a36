/**
 * The name each simulated vendor gives an error status, in one table: Anthropic's error
 * `type`, Bedrock's exception (which the AWS SDK turns into its class) and Google's RPC
 * status. A status a vendor does not name gets its server or client default.
 */
type Vendor = 'anthropic' | 'bedrock' | 'google';

const NAMES: Readonly<Record<number, Partial<Record<Vendor, string>>>> = {
  400: { anthropic: 'invalid_request_error', bedrock: 'ValidationException', google: 'INVALID_ARGUMENT' },
  401: { anthropic: 'authentication_error', bedrock: 'AccessDeniedException', google: 'UNAUTHENTICATED' },
  402: { anthropic: 'billing_error' },
  403: { anthropic: 'permission_error', bedrock: 'AccessDeniedException', google: 'PERMISSION_DENIED' },
  404: { anthropic: 'not_found_error', bedrock: 'ResourceNotFoundException', google: 'NOT_FOUND' },
  408: { bedrock: 'ModelTimeoutException' },
  409: { bedrock: 'ConflictException', google: 'ABORTED' },
  413: { anthropic: 'request_too_large' },
  424: { bedrock: 'ModelErrorException' },
  429: { anthropic: 'rate_limit_error', bedrock: 'ThrottlingException', google: 'RESOURCE_EXHAUSTED' },
  499: { google: 'CANCELLED' },
  500: { bedrock: 'InternalServerException', google: 'INTERNAL' },
  501: { google: 'NOT_IMPLEMENTED' },
  503: { google: 'UNAVAILABLE' },
  504: { google: 'DEADLINE_EXCEEDED' },
  529: { anthropic: 'overloaded_error' },
};

/** What a vendor calls a status it has no name for: from 500 on, and below. */
const DEFAULTS: Readonly<Record<Vendor, { server: string; client: string }>> = {
  anthropic: { server: 'api_error', client: 'invalid_request_error' },
  bedrock: { server: 'ServiceUnavailableException', client: 'ValidationException' },
  google: { server: 'UNKNOWN', client: 'FAILED_PRECONDITION' },
};

/** The vendor's name for an error status. */
export function errorNameFor(vendor: Vendor, status: number): string {
  return NAMES[status]?.[vendor] ?? (status >= 500 ? DEFAULTS[vendor].server : DEFAULTS[vendor].client);
}
