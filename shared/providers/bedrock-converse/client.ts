import type { BedrockRuntimeClient, ConverseCommandInput, ConverseCommandOutput, ConverseStreamCommandInput, ConverseStreamCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { keepAliveAgent } from '../../http/post.js';
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
 * - The keep-alive connections of every other call (http/post.ts): a pooled one closes after
 *   4 s idle, so that a function thawed after minutes does not send its first Bedrock call
 *   on a connection the far end has closed (a reset, then a retry after a backoff).
 * - maxAttempts 1: the gateway's retry loop is the only one, so attempts add up to its cap.
 */
function clientFor(runtime: Sdk, endpoint: Endpoint): BedrockRuntimeClient {
  const region = endpoint.region ?? DEFAULT_REGION;
  const key = `${endpoint.baseUrl}\u0000${region}\u0000${endpoint.simulated}`;
  let client = clients.get(key);
  if (!client) {
    client = new runtime.BedrockRuntimeClient({
      region,
      ...(endpoint.baseUrl ? { endpoint: endpoint.baseUrl } : {}),
      ...(endpoint.simulated ? { credentials: SIMULATED_CREDENTIALS } : {}),
      maxAttempts: 1,
      requestHandler: new runtime.NodeHttpHandler({ httpAgent: keepAliveAgent(new URL('http://agent')), httpsAgent: keepAliveAgent(new URL('https://agent')) }),
    });
    clients.set(key, client);
  }
  return client;
}

/**
 * One Converse call, exactly one HTTP attempt; the SDK's errors are thrown as they come.
 * With `ready`, the SDK serialises and signs the request at once and sends it once
 * `ready` resolves (a step just before its HTTP handler waits); should it reject,
 * nothing is sent and a NotSentError carries its reason.
 */
export async function converse(input: ConverseCommandInput, endpoint: Endpoint, signal: AbortSignal, ready?: Promise<void>): Promise<ConverseCommandOutput> {
  const runtime = await loadSdk();
  return clientFor(runtime, endpoint).send(waitingFor(new runtime.ConverseCommand(input), ready), { abortSignal: signal });
}

/** One ConverseStream call, as `converse`: resolves once the answer's head arrives, its events to read from `stream`. */
export async function converseStream(input: ConverseStreamCommandInput, endpoint: Endpoint, signal: AbortSignal, ready?: Promise<void>): Promise<ConverseStreamCommandOutput> {
  const runtime = await loadSdk();
  return clientFor(runtime, endpoint).send(waitingFor(new runtime.ConverseStreamCommand(input), ready), { abortSignal: signal });
}

/** `command`, sent only once `ready` resolves (when given). */
function waitingFor<
  C extends { middlewareStack: { add(middleware: (next: (args: never) => Promise<unknown>) => (args: never) => Promise<unknown>, options: typeof WAIT_STEP): void } },
>(command: C, ready?: Promise<void>): C {
  if (ready) {
    command.middlewareStack.add(
      (next) => async (args) => {
        await ready.catch((reason: unknown) => {
          throw new NotSentError(reason);
        });
        return next(args);
      },
      WAIT_STEP,
    );
  }
  return command;
}

/** A call that was never sent, because its `ready` rejected with `reason`. */
export class NotSentError extends Error {
  override name = 'NotSentError';
  constructor(readonly reason: unknown) {
    super('The call was not sent');
  }
}

/** Last before the HTTP handler: the deserialize step runs after every build and signing step. */
const WAIT_STEP = { step: 'deserialize', priority: 'low', name: 'waitUntilReady' } as const;
