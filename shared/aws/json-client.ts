import type { Agent } from 'node:http';
import { keepAliveAgent, post, type PostAnswer, type PostOptions } from '../http/post.js';
import { signV4, type AwsCredentials } from './sigv4.js';

/** How a request reaches the service: by default an HTTP POST (http/post.ts). */
export type Transport = (url: URL, body: string, headers: Record<string, string>, options: PostOptions) => Promise<PostAnswer>;

/** Where signing credentials come from: the function's environment, a provider chain, or none (a local store). */
export type CredentialSource = AwsCredentials | (() => Promise<AwsCredentials>) | 'unsigned';

export interface AwsJsonClientOptions {
  /** The signing name, e.g. `dynamodb` or `secretsmanager`. */
  service: string;
  region: string;
  /** The `X-Amz-Target` prefix, e.g. `DynamoDB_20120810`. */
  targetPrefix: string;
  /** `1.0` (DynamoDB, Step Functions) or `1.1` (Secrets Manager). */
  jsonVersion: '1.0' | '1.1';
  /** Default `https://<service>.<region>.amazonaws.com`; a local store's URL otherwise. */
  endpoint?: string;
  credentials: CredentialSource;
  /** Attempts in all, the first included (throttling, 5xx, refused and reset connections are retried). */
  maxAttempts?: number;
  /** Per attempt. */
  timeoutMs?: number;
  random?: () => number;
  /** The embedded store of the local host is reached in process (infra/local/store.ts); everything else over HTTP. */
  transport?: Transport;
}

/** An error answer of an AWS JSON-protocol service; `name` is its short type, e.g. `ConditionalCheckFailedException`. */
export class AwsServiceError extends Error {
  constructor(
    name: string,
    message: string,
    readonly statusCode: number,
    /** The error body (DynamoDB puts the item there for ReturnValuesOnConditionCheckFailure). */
    readonly body: Record<string, unknown>,
  ) {
    super(message);
    this.name = name;
  }
}

const THROTTLING = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'Throttling', 'TooManyRequestsException']);

/**
 * Connection failures worth a second attempt: refused, or reset (typically a pooled
 * connection the server had closed). Not a timeout, nor a garbled answer: the write may
 * have landed, and not every write here is safe to repeat.
 */
const RETRYABLE_CONNECTION = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EAI_AGAIN']);

function retryable(error: unknown): boolean {
  if (error instanceof AwsServiceError) return error.statusCode >= 500 || THROTTLING.has(error.name);
  return RETRYABLE_CONNECTION.has(String((error as NodeJS.ErrnoException).code));
}

/** What a local DynamoDB-compatible store parses but never checks: no hashing for nothing. */
const UNSIGNED = {
  'x-amz-date': '20000101T000000Z',
  authorization: 'AWS4-HMAC-SHA256 Credential=local/20000101/local/local/aws4_request, SignedHeaders=host;x-amz-date, Signature=local',
};

/**
 * A small client for AWS's JSON protocols (`POST /` with `X-Amz-Target`): SigV4 signing,
 * keep-alive connections, capped exponential backoff with full jitter. It replaces the
 * AWS SDK on the request path, whose middleware stack cost more CPU than the store call
 * it wrapped and took 100 ms to load at every cold start.
 */
export class AwsJsonClient {
  private readonly url: URL;
  private readonly agent: Agent;
  private cached?: AwsCredentials;

  constructor(private readonly options: AwsJsonClientOptions) {
    this.url = new URL(options.endpoint ?? `https://${options.service}.${options.region}.amazonaws.com`);
    this.agent = keepAliveAgent(this.url);
  }

  async call<T = Record<string, unknown>>(operation: string, input: unknown): Promise<T> {
    const body = JSON.stringify(input);
    const maxAttempts = this.options.maxAttempts ?? 3;
    const random = this.options.random ?? Math.random;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.attempt(operation, body)) as T;
      } catch (error) {
        if (attempt >= maxAttempts || !retryable(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, random() * Math.min(1_000, 50 * 2 ** (attempt - 1))));
      }
    }
  }

  /** Closes idle keep-alive connections (a CLI exits at once afterwards). */
  destroy(): void {
    this.agent.destroy();
  }

  private async headers(operation: string, body: string): Promise<Record<string, string>> {
    const base = {
      'content-type': `application/x-amz-json-${this.options.jsonVersion}`,
      'x-amz-target': `${this.options.targetPrefix}.${operation}`,
    };
    const source = this.options.credentials;
    if (source === 'unsigned') return { ...base, host: this.url.host, ...UNSIGNED };
    const credentials = typeof source === 'function' ? await this.credentials(source) : source;
    return signV4({ method: 'POST', host: this.url.host, path: '/', headers: base, body }, credentials, this.options.region, this.options.service);
  }

  private async credentials(provider: () => Promise<AwsCredentials>): Promise<AwsCredentials> {
    const fresh = (c?: AwsCredentials) => c && (!c.expiration || c.expiration.getTime() - Date.now() > 5 * 60_000);
    if (!fresh(this.cached)) this.cached = await provider();
    return this.cached!;
  }

  private async attempt(operation: string, body: string): Promise<unknown> {
    const headers = await this.headers(operation, body);
    const response = await (this.options.transport ?? post)(this.url, body, headers, { agent: this.agent, timeoutMs: this.options.timeoutMs ?? 10_000 });
    let parsed: Record<string, unknown> = {};
    try {
      parsed = response.text === '' ? {} : (JSON.parse(response.text) as Record<string, unknown>);
    } catch {
      if (response.status < 400) throw Object.assign(new Error(`${this.options.service} answered with a body that is not JSON`), { code: 'EBADJSON' });
    }
    if (response.status >= 400) {
      // `com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException`, sometimes with a `:` suffix.
      const type = String(parsed.__type ?? parsed.code ?? `HTTP${response.status}`).split(':')[0]!;
      const message = String(parsed.message ?? parsed.Message ?? `${this.options.service} answered ${response.status}`);
      throw new AwsServiceError(type.slice(type.lastIndexOf('#') + 1), message, response.status, parsed);
    }
    return parsed;
  }
}
