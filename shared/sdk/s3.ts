/**
 * What the gateway takes from the S3 client (claim checks, and the HTTP handler of the
 * same copy of the SDK's core, for its deadlines), loaded on demand as `#sdk/s3`:
 * in a Lambda bundle a module of its own beside the function's (infra/stack/bundle.ts), so
 * that the function's cold start shares no code with it.
 */
export { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
export { NodeHttpHandler } from '@smithy/node-http-handler';
