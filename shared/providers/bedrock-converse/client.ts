import type { BedrockRuntimeClient, ConverseCommandInput, ConverseCommandOutput, ConverseStreamCommandInput, ConverseStreamCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { Readable } from 'node:stream';
import { keepAliveAgent, readBody } from '../../http/post.js';
import { withFastConfig } from '../../aws-client-config.js';
import { allModels } from '../../catalog/index.js';
import type { Endpoint } from '../types.js';
import { type EventStreamLimits, limitedMessages } from './stream-body.js';
import { MAX_VENDOR_JSON_FIELDS, tooManyVendorJsonFields } from '../vendor-json.js';

export const DEFAULT_REGION = 'us-east-1';

/** Locally the simulator answers; static keys spare the credential chain lookup. */
const SIMULATED_CREDENTIALS = { accessKeyId: 'simulated', secretAccessKey: 'simulated' };

type Sdk = typeof import('./sdk.js');

let sdk: Promise<Sdk> | undefined;
const clients = new Map<string, BedrockRuntimeClient>();

/**
 * Loaded on the first Bedrock call only, so a process that never calls Bedrock never pays
 * for the SDK's import.
 */
function loadSdk(): Promise<Sdk> {
  sdk ??= import('./sdk.js').catch((error: unknown) => {
    sdk = undefined;
    throw error;
  });
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
 *   fromSdkError), and at most ANSWER_FIELDS fields (withinFieldCap). The SDK's own reader has no limit: a lying endpoint's endless answer would
 *   fill the Lambda's memory. A ConverseStream's events are not read by it (converseStream
 *   limits them).
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
        protocol: runtime.StringifiedRestJsonProtocol,
        streamCollector: (body: Readable) => readBody(body).then(withinFieldCap),
        requestHandler: new runtime.NodeHttpHandler({ httpAgent: keepAliveAgent(new URL('http://agent')), httpsAgent: keepAliveAgent(new URL('https://agent')) }),
      }),
    );
    clients.set(key, client);
  }
  return client;
}

/**
 * The most JSON fields a Converse answer read whole may hold: a vendor answer's, and as many
 * again as its structured output may (a forced tool's input is the answer itself, JSON of up
 * to about two fields a token, `0,` or `[[`, where a text answer is one string): 4 a token of
 * the longest Converse output. Counted against the vendor answer's alone, a Nova answer of a
 * 20,000-item array had failed, its billed tokens charged nothing.
 */
const ANSWER_FIELDS =
  MAX_VENDOR_JSON_FIELDS +
  4 *
    Math.max(
      ...allModels()
        .filter((entry) => entry.protocol === 'bedrock-converse')
        .map((entry) => entry.maxOutputTokens),
    );

/**
 * A body the SDK reads whole, refused before the SDK parses it where it holds more JSON fields
 * than ANSWER_FIELDS: JSON.parse of an 8 MiB body of empty keys holds the thread for seconds.
 * Code EANSWERFIELDS, mapped by fromSdkError (answerTooLarge).
 */
function withinFieldCap(bytes: Buffer): Buffer {
  if (tooManyVendorJsonFields(bytes, 0, bytes.length, ANSWER_FIELDS))
    throw Object.assign(new Error(`The answer holds more than ${ANSWER_FIELDS} JSON fields`), { code: 'EANSWERFIELDS', limit: ANSWER_FIELDS });
  return bytes;
}

/** One Converse call, exactly one HTTP attempt; the SDK's errors are thrown as they come. */
export async function converse(input: ConverseCommandInput, endpoint: Endpoint, signal: AbortSignal): Promise<ConverseCommandOutput> {
  const runtime = await loadSdk();
  return clientFor(runtime, endpoint).send(new runtime.ConverseCommand(input), { abortSignal: signal });
}

/**
 * One ConverseStream call, as `converse`: resolves once the answer's head arrives, its events to
 * read from `stream`. An answer's event stream reaches the SDK's reader through
 * limitedMessages: the SDK reads it without a limit of its own.
 */
export async function converseStream(input: ConverseStreamCommandInput, endpoint: Endpoint, signal: AbortSignal, limits: EventStreamLimits): Promise<ConverseStreamCommandOutput> {
  const runtime = await loadSdk();
  const command = new runtime.ConverseStreamCommand(input);
  // Innermost of the deserialize step: the answer as the handler received it, before the SDK's deserializer reads it.
  command.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const response = out.response as { statusCode?: number; body?: unknown };
      if (response.statusCode === 200 && response.body instanceof Readable) response.body = Readable.from(limitedMessages(response.body, limits));
      return out;
    },
    { step: 'deserialize', priority: 'low', name: 'limitedEventStream' },
  );
  return clientFor(runtime, endpoint).send(command, { abortSignal: signal });
}
