import type { BedrockRuntimeClient, ConverseCommandInput, ConverseCommandOutput, ConverseStreamCommandInput, ConverseStreamCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import type { Readable } from 'node:stream';
import { keepAliveAgent, readBody } from '../../http/post.js';
import { withFastConfig } from '../../aws-client-config.js';
import type { Endpoint } from '../types.js';

export const DEFAULT_REGION = 'us-east-1';

/** Locally the simulator answers; static keys spare the credential chain lookup. */
const SIMULATED_CREDENTIALS = { accessKeyId: 'simulated', secretAccessKey: 'simulated' };

type Sdk = Pick<typeof import('@aws-sdk/client-bedrock-runtime'), 'BedrockRuntimeClient' | 'ConverseCommand' | 'ConverseStreamCommand'> &
  Pick<typeof import('@smithy/node-http-handler'), 'NodeHttpHandler'>;

let sdk: Promise<Sdk> | undefined;
const clients = new Map<string, BedrockRuntimeClient>();

/**
 * Loaded on the first Bedrock call only, so a process that never calls Bedrock never pays
 * for the SDK's import.
 */
function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([import('@aws-sdk/client-bedrock-runtime'), import('@smithy/node-http-handler')]).then(
    ([runtime, http]) => ({
      BedrockRuntimeClient: runtime.BedrockRuntimeClient,
      ConverseCommand: runtime.ConverseCommand,
      ConverseStreamCommand: runtime.ConverseStreamCommand,
      NodeHttpHandler: http.NodeHttpHandler,
    }),
    (error: unknown) => {
      sdk = undefined;
      throw error;
    },
  );
  return sdk;
}

/**
 * One client per (endpoint, region), kept for the life of the process.
 * - HTTP/1.1 with keep-alive: bedrock-runtime defaults to HTTP/2, which the simulator does not speak.
 * - Keep-alive connections like every other call's (http/post.ts), as many as calls at once: a pooled one closes after
 *   4 s idle, so that a function thawed after minutes does not send its first Bedrock call
 *   on a connection the far end has closed (a reset, then a retry after a backoff).
 * - maxAttempts 1: the gateway's retry loop is the only one, so attempts add up to its cap.
 * - Bodies the SDK reads whole (a Converse answer, an error's) are read as `post` reads every
 *   other vendor's: at most 8 MiB, past which the call fails (code EANSWERTOOLARGE, mapped by
 *   fromSdkError). The SDK's own reader has no limit: a lying endpoint's endless answer would
 *   fill the Lambda's memory. A ConverseStream's events are not read by it (stream.ts caps them).
 */
function clientFor(runtime: Sdk, endpoint: Endpoint): BedrockRuntimeClient {
  const region = endpoint.region ?? DEFAULT_REGION;
  const key = `${endpoint.baseUrl}\u0000${region}\u0000${endpoint.simulated}`;
  let client = clients.get(key);
  if (!client) {
    client = withFastConfig(
      new runtime.BedrockRuntimeClient({
        region,
        ...(endpoint.baseUrl ? { endpoint: endpoint.baseUrl } : {}),
        ...(endpoint.simulated ? { credentials: SIMULATED_CREDENTIALS } : {}),
        maxAttempts: 1,
        streamCollector: (body: Readable) => readBody(body),
        requestHandler: new runtime.NodeHttpHandler({ httpAgent: keepAliveAgent(new URL('http://agent')), httpsAgent: keepAliveAgent(new URL('https://agent')) }),
      }),
    );
    clients.set(key, client);
  }
  return client;
}

/** One Converse call, exactly one HTTP attempt; the SDK's errors are thrown as they come. */
export async function converse(input: ConverseCommandInput, endpoint: Endpoint, signal: AbortSignal): Promise<ConverseCommandOutput> {
  const runtime = await loadSdk();
  return clientFor(runtime, endpoint).send(new runtime.ConverseCommand(input), { abortSignal: signal });
}

/** One ConverseStream call, as `converse`: resolves once the answer's head arrives, its events to read from `stream`. */
export async function converseStream(input: ConverseStreamCommandInput, endpoint: Endpoint, signal: AbortSignal): Promise<ConverseStreamCommandOutput> {
  const runtime = await loadSdk();
  return clientFor(runtime, endpoint).send(new runtime.ConverseStreamCommand(input), { abortSignal: signal });
}
