/**
 * What the gateway takes from the Bedrock runtime client (Converse) and the HTTP/1.1
 * handler it is given, loaded on demand as `#sdk/bedrock-runtime`: see s3.ts.
 */
export { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
export { NodeHttpHandler } from '@smithy/node-http-handler';
