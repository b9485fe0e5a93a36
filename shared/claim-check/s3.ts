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
 * Per attempt (the client's 3): to connect, and from the request's start to the answer's last
 * byte, an upload included (a claim check is a few MB at most). A hung S3 answer fails the
 * call after 3 of these, within every function's timeout, instead of holding it; a download's
 * body, which its caller reads after the SDK has answered, within the one attempt's.
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

  /** The object's text; its body, read after the SDK has answered, is held to the attempt's deadline by the handler (awsRequestHandler). */
  async get(key: string): Promise<string> {
    const { sdk, client } = await this.s3();
    try {
      const answer = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!answer.Body) throw new ClaimCheckNotFoundError(key);
      return await answer.Body.transformToString('utf8');
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') throw new ClaimCheckNotFoundError(key, { cause: error });
      throw error;
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
