import { finished } from 'node:stream/promises';
import { AnswerBytes, AnswerPieces, postStream, type StreamAnswer } from '../http/post.js';
import { UpstreamError, vendorWord, type PartialReply } from './errors.js';
import { abortError, defaultErrorMapper, headerValue, unreachable, type PostJsonOptions, type WireRequest } from './http.js';
import type { ModelReply } from './types.js';
import { StreamLimitError, SseParser, type SseEvent, type SseLimits } from './sse.js';
import { notJson, parseVendorJson } from './vendor-json.js';

/** Most bytes of a non-2xx answer's body read for its error message. */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;

export interface PostSseOptions extends PostJsonOptions {
  /** Each event of the stream, in order; an UpstreamError it throws (a vendor's error event) fails the call. */
  onEvent: (event: SseEvent) => void;
  /** Whether the event that ends the answer arrived: the stream is then read no further (StreamReader.ended). */
  ended?: () => boolean;
  /** Whether the model's answer stopped (StreamReader.stopped): the event that ends it is then waited for COUNT_WAIT_MS at most. */
  stopped?: () => boolean;
  /** What the stream delivered so far, carried by the error a failure after the answer's head throws (an abort above all). */
  partial: () => PartialReply;
  limits?: SseLimits;
}

/**
 * POSTs JSON to a vendor and reads its `text/event-stream` answer, handing each event to
 * `onEvent`; resolves when the stream ends, or as soon as `ended` says the answer has (its
 * protocol decides whether it ended complete). The sibling of postJson (its request built by
 * `jsonRequest` with `text/event-stream` as what it accepts): same mapping of a non-2xx answer;
 * an abort throws postJson's abort error. A stream that breaks the SseLimits, or breaks off
 * on a network failure, is a failed call; every failure after the head carries
 * `details.partial` and destroys the connection.
 */
export async function postSse(request: WireRequest, signal: AbortSignal, options: PostSseOptions): Promise<void> {
  const { mapError = defaultErrorMapper, onEvent, ended = () => false, stopped = () => false, partial, limits } = options;
  let response: StreamAnswer;
  try {
    response = await postStream(request.url, request.payload, request.headers, { signal });
  } catch (error) {
    throw unreachable(signal, error);
  }
  const { status, body: stream } = response;
  if (status < 200 || status > 299) {
    // What its body held, as far as it could be read: the status says what the vendor did.
    const text = await readCapped(response, signal);
    throw mapError(status, text, headerValue(response.headers['retry-after']));
  }
  const parser = new SseParser(limits);
  // Once the model's answer stopped, how long its count and the vendor's end are waited for.
  let grace: NodeJS.Timeout | undefined;
  let cut = false;
  try {
    // Each piece as it arrives ('data', not an async iterator, which joins what waited): its
    // pieces are counted, and a stream in too many tiny ones fails (MIN_AVERAGE_CHUNK_BYTES).
    const pieces = new AnswerPieces();
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        try {
          pieces.count(chunk.length);
          for (const event of parser.push(chunk)) {
            onEvent(event);
            if (ended()) break;
          }
        } catch (error) {
          stream.off('data', onData);
          stream.destroy(error as Error);
          return;
        }
        if (ended()) {
          // The answer is whole: a vendor that keeps the connection open after it (or goes
          // on sending) does not hold the call until its deadline.
          stream.off('data', onData);
          dropRest(stream);
          resolve();
        } else if (grace === undefined && stopped()) {
          // Stopped, with its count (or the vendor's end) still to come: a vendor that sends
          // neither and holds the connection had kept a whole answer to the deadline, a timeout.
          grace = setTimeout(() => {
            cut = true;
            stream.off('data', onData);
            resolve();
            stream.destroy();
          }, COUNT_WAIT_MS);
        }
      };
      stream.on('data', onData);
      finished(stream).then(resolve, reject);
    });
    // A line cut off by the grace's end is no event.
    if (!ended() && !cut) for (const event of parser.end()) onEvent(event);
  } catch (error) {
    stream.destroy();
    throw withPartial(streamFailure(error, signal, status), partial());
  } finally {
    clearTimeout(grace);
  }
}

/**
 * How long an answer that stopped (its finish or stop reason came) waits for its count or its
 * vendor's end, before it is read as whole without a count (then charged an estimate): vendors
 * send them right after it; one that sends neither and holds the connection open, silent, had
 * kept a whole answer to the request's deadline, a failed `timeout`.
 */
export const COUNT_WAIT_MS = 2_000;

/** How long, and how many bytes, the rest of a stream is read after its answer ended, so that its connection can serve another call; past either it is closed. */
export const AFTER_END_MS = 1_000;
const AFTER_END_BYTES = 64 * 1024;

/** Reads what a stream sends after its answer ended, dropping it, and closes the stream where it does not end soon. */
function dropRest(stream: StreamAnswer['body']): void {
  let bytes = 0;
  const timer = setTimeout(() => stream.destroy(), AFTER_END_MS);
  timer.unref();
  stream.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > AFTER_END_BYTES) stream.destroy();
  });
  finished(stream)
    .catch(() => undefined)
    .finally(() => clearTimeout(timer));
}

/** Why a stream failed after its head, as an UpstreamError. */
function streamFailure(error: unknown, signal: AbortSignal, status: number): UpstreamError {
  if (signal.aborted) return abortError(signal, error);
  if (error instanceof UpstreamError) return error;
  if (error instanceof StreamLimitError) return new UpstreamError('upstream_malformed_response', error.message, { upstreamStatus: status });
  if ((error as { code?: unknown }).code === 'EANSWERFRAGMENTED')
    return new UpstreamError('upstream_malformed_response', `The provider's stream came in too many tiny pieces: ${(error as Error).message}`, {
      upstreamStatus: status,
      cause: error,
    });
  return new UpstreamError('upstream_unreachable', `The provider's stream broke off: ${describeCut(error)}`, { cause: error });
}

/** An event's data as a JSON object; anything else is a malformed answer. */
export function eventJson(event: SseEvent): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseVendorJson(event.data);
  } catch (error) {
    throw new UpstreamError('upstream_malformed_response', `The provider streamed an event (${vendorWord(event.event)}) whose data ${notJson(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UpstreamError('upstream_malformed_response', `The provider streamed an event (${vendorWord(event.event)}) whose data is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A stream reader's reply once its stream ended; its failure (the stream ended early above all) carries what the stream had delivered. */
export function finishStream(reader: { finish(): ModelReply; partial(): PartialReply }): ModelReply {
  try {
    return reader.finish();
  } catch (error) {
    throw error instanceof UpstreamError ? withPartial(error, reader.partial()) : error;
  }
}

/** `error` carrying what the stream had delivered. */
export function withPartial(error: UpstreamError, partial: PartialReply): UpstreamError {
  return new UpstreamError(error.code, error.message, { ...error.details, partial });
}

function describeCut(error: unknown): string {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : 'connection closed';
}

/** The body of an error answer as text, at most MAX_ERROR_BODY_BYTES of it, and as much of it as came where it broke off. */
async function readCapped(response: StreamAnswer, signal: AbortSignal): Promise<string> {
  // Copied into one buffer as it comes; an answer in too many tiny pieces is read no further.
  const answer = new AnswerBytes(MAX_ERROR_BODY_BYTES);
  try {
    await new Promise<void>((resolve, reject) => {
      response.body.on('data', (chunk: Buffer) => {
        try {
          answer.add(chunk.subarray(0, MAX_ERROR_BODY_BYTES - answer.length));
        } catch {
          return resolve();
        }
        if (answer.length >= MAX_ERROR_BODY_BYTES) resolve();
      });
      finished(response.body).then(resolve, reject);
    });
  } catch (error) {
    // Broken off: what came of it is the body (it had been upstream_unreachable, retried whatever the status).
    if (signal.aborted) throw abortError(signal, error, response.status);
  } finally {
    response.body.destroy();
  }
  return answer.bytes().toString('utf8');
}
