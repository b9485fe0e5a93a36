import type { S3Client } from '@aws-sdk/client-s3';
import { awsRequestHandler, type AwsTimeouts } from '../http/aws-handler.js';
import { withFastConfig } from '../aws-client-config.js';
import { ClaimCheckNotFoundError } from './errors.js';
import type { ClaimCheckStore } from './types.js';

export interface S3ClaimCheckOptions {
  region: string;
  /** AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (LocalStack: path-style addressing); by default the region's. */
  endpoint?: string;
  /** A client to use (tests); otherwise one is made on first use. */
  client?: S3Client;
  /** Per attempt, for the client made: CLAIM_CHECK_TIMEOUTS unless a test shortens them. */
  timeouts?: AwsTimeouts;
}

/**
 * Per attempt (the client's 3): to connect, and from the request's start to the answer's
 * headers, an upload included (a claim check is a few MB at most). A hung S3 answer fails
 * the call after 3 of these, within every function's timeout, instead of holding it. A
 * download's body, which the SDK reads after it has answered (and its deadlines have
 * ended), gets `answerMs` again from its headers to its last byte.
 */
export const CLAIM_CHECK_TIMEOUTS = Object.freeze({ connectMs: 1_000, answerMs: 5_000 });

/** DeleteObjects takes at most this many keys a call. */
const DELETE_BATCH = 1000;

/**
 * The claim-check store in AWS: the stack's bucket (encrypted, private, objects expire
 * after a day as a backstop). The S3 client is loaded on first use, so that a function
 * that never claim-checks never pays for its import.
 */
export class S3ClaimCheck implements ClaimCheckStore {
  private loaded: Promise<{ sdk: typeof import('#sdk/s3'); client: S3Client }> | undefined;

  constructor(
    private readonly bucket: string,
    private readonly options: S3ClaimCheckOptions,
  ) {}

  async put(key: string, body: string): Promise<void> {
    const { sdk, client } = await this.s3();
    await client.send(new sdk.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/json' }));
  }

  async get(key: string): Promise<string> {
    const { sdk, client } = await this.s3();
    // Aborting it once the answer is in ends the body's read: the SDK's handler listens until the request closes.
    const body = new AbortController();
    const bodyMs = (this.options.timeouts ?? CLAIM_CHECK_TIMEOUTS).answerMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: body.signal });
      if (!answer.Body) throw new ClaimCheckNotFoundError(key);
      timer = setTimeout(() => body.abort(), bodyMs);
      return await answer.Body.transformToString('utf8');
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') throw new ClaimCheckNotFoundError(key, { cause: error });
      // Aborted only once the headers are in: the stream reports it as a reset connection, said as what it is.
      if (body.signal.aborted) throw Object.assign(new Error(`The claim-check object's body did not arrive within ${bodyMs} ms`, { cause: error }), { name: 'TimeoutError' });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const { sdk, client } = await this.s3();
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      const answer = await client.send(new sdk.DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      const failed = answer.Errors ?? [];
      if (failed.length > 0) {
        throw new Error(`Deleting ${failed.length} claim-check object(s) failed: ${[...new Set(failed.map((e) => e.Code))].join(', ')}`);
      }
    }
  }

  /** The SDK module and the client, loaded together on first use. */
  private s3() {
    this.loaded ??= import('#sdk/s3').then((sdk) => ({
      sdk,
      client:
        this.options.client ??
        withFastConfig(
          new sdk.S3Client({
            region: this.options.region,
            ...(this.options.endpoint ? { endpoint: this.options.endpoint, forcePathStyle: true } : {}),
            requestHandler: awsRequestHandler(this.options.timeouts ?? CLAIM_CHECK_TIMEOUTS, sdk.NodeHttpHandler),
          }),
        ),
    }));
    return this.loaded;
  }
}
