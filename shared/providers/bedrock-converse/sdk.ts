/**
 * What a Bedrock call loads on its first use (client.ts): the SDK's Bedrock client, its HTTP
 * handler, and the protocol its client is given.
 */
import { AwsRestJsonProtocol } from '@aws-sdk/core/protocols';
import { JsonCodec } from '@smithy/core/protocols';

export { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
export { NodeHttpHandler } from '@smithy/node-http-handler';

/** The settings AwsRestJsonProtocol gives its codec. */
const REST_JSON_SETTINGS = { timestampFormat: { useTrait: true, default: 7 as const }, httpBindings: true, jsonName: true };

/**
 * Bedrock's protocol (REST JSON) with the SDK's JsonCodec, which writes a request's JSON with
 * JSON.stringify, in place of its default JsonCodec2, which writes it a character at a time in
 * JavaScript: a Converse body of 3.2 MB of emoji took 420 ms of the thread to write in one turn
 * (every tenant's requests waiting, and every other model's answer read late, its latency
 * counted long), 13 ms so. The same JSON either way.
 */
export class StringifiedRestJsonProtocol extends AwsRestJsonProtocol {
  constructor(settings: ConstructorParameters<typeof AwsRestJsonProtocol>[0]) {
    super({ ...settings, jsonCodec: new JsonCodec(REST_JSON_SETTINGS) });
  }
}
