import { UpstreamError, codeForStatus, parseRetryAfter } from '../errors.js';
import { answerTooLarge } from '../http.js';
import { StreamLimitError } from '../sse.js';
import { cutWhole } from '../../text/characters.js';
import { credentialsReason } from '../../aws-credentials.js';

/** The parts of an SDK error this mapper reads (ServiceException and deserialization errors). */
interface SdkError {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  /** Set on every modelled or unmodelled service exception. */
  $fault?: unknown;
  /** Set on service exceptions and on answers the SDK could not parse. */
  $metadata?: { httpStatusCode?: unknown };
  $response?: { headers?: Record<string, string | undefined> };
}

/** Exceptions Bedrock asks to retry whatever their status (ModelNotReadyException: the model is loading). */
const RETRYABLE_EXCEPTIONS: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelNotReadyException',
  'ModelStreamErrorException',
]);

/**
 * Codes by the exception's name where it says more than the status does: a stream's exception
 * frame comes with the stream's 200, and a model still loading answers 429 though it is no limit.
 */
const CODE_BY_NAME: ReadonlyMap<string, UpstreamError['code']> = new Map([
  ['ThrottlingException', 'upstream_rate_limited'],
  ['ServiceUnavailableException', 'upstream_overloaded'],
  ['ModelNotReadyException', 'upstream_error'],
]);

/**
 * An error thrown by `client.send(ConverseCommand)` as an UpstreamError: service exceptions
 * keep their status and message (ThrottlingException 429, ServiceUnavailableException 503,
 * InternalServerException 500, ValidationException 400, AccessDeniedException 403,
 * ResourceNotFoundException 404, ModelNotReadyException, ModelTimeoutException 408,
 * ModelErrorException 424 …), 429 and 5xx and ModelNotReady are retryable; so are
 * ConverseStream's exception frames (throttlingException, modelStreamErrorException, …),
 * which the SDK throws mid-stream as their service exceptions, without a status of their
 * own (the stream's 200). An answer the SDK could not parse, or too large to read (client.ts),
 * is malformed; an abort is a timeout; no credentials to sign with is `provider_not_configured`
 * (nothing was sent); anything else is a network failure.
 */
export function fromSdkError(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted) {
    return new UpstreamError('timeout', 'The model did not answer before the request deadline', { cause: signal.reason ?? error });
  }
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkError;
  const isService = e.$fault === 'client' || e.$fault === 'server';
  // A service exception without a status of its own was an exception frame of a stream answered 200.
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : isService ? 200 : undefined;
  // An error answer too large to read is still its status's error (below), as the HTTP vendors' are.
  const tooLarge = status !== undefined && (status < 200 || status >= 300) ? undefined : answerTooLarge(error);
  if (tooLarge) return tooLarge;
  // An event stream past a limit (converseStream): before its first event, or after.
  if (error instanceof StreamLimitError) return new UpstreamError('upstream_malformed_response', error.reason, { upstreamStatus: 200, cause: error });
  const name = typeof e.name === 'string' ? e.name : 'Error';

  if (status !== undefined && status >= 200 && status < 300 && !isService) {
    // The stream's first frame, read before the call resolves, an error frame the SDK does not model.
    if (isStreamErrorFrame(error)) return frameError(error);
    return new UpstreamError('upstream_malformed_response', `The provider answered ${status} with a body that could not be read`, {
      upstreamStatus: status,
      cause: error,
    });
  }
  if (status !== undefined) {
    const retryable = status === 429 || status >= 500 || (isService && RETRYABLE_EXCEPTIONS.has(name));
    const code = CODE_BY_NAME.get(name) ?? codeForStatus(status);
    return new UpstreamError(code, vendorMessage(e, isService) ?? `The provider answered ${status}`, {
      upstreamStatus: status,
      retryable,
      retryAfterMs: parseRetryAfter(header(e, 'retry-after') ?? null),
      cause: error,
    });
  }
  // The SDK found no credentials to sign with (a local host whose AWS profile has expired or names no keys): nothing was sent.
  if (name === 'CredentialsProviderError') {
    const reason = credentialsReason(error);
    return new UpstreamError('provider_not_configured', `No AWS credentials could be loaded to call Amazon Bedrock${reason ? `: ${reason}` : ''}`, { cause: error });
  }
  const reason = typeof e.code === 'string' ? e.code : name !== 'Error' ? name : 'network error';
  return new UpstreamError('upstream_unreachable', `Could not reach the provider: ${reason}`, { retryable: true, cause: error });
}

/**
 * An error thrown while a ConverseStream's events were read, as fromSdkError maps it (an
 * exception frame keeps its vendor's message and code), but for one the service did not
 * raise: the connection cut (by its code) or a frame the decoder could not read (a
 * truncated message above all) broke the stream off, and is not retried: its text may be out.
 */
export function fromStreamError(error: unknown, signal: AbortSignal): UpstreamError {
  const failure = fromSdkError(error, signal);
  if (failure.code !== 'upstream_unreachable') return failure;
  if (isStreamErrorFrame(error)) return frameError(error);
  const { code } = error as { code?: unknown };
  return typeof code === 'string'
    ? new UpstreamError('upstream_unreachable', `The provider's stream broke off: ${code}`, { cause: error })
    : new UpstreamError('upstream_malformed_response', "The provider's event stream broke off or could not be decoded", { upstreamStatus: 200, cause: error });
}

/** A name the SDK gives an error frame from the frame's own code: letters, digits and a few separators. */
const FRAME_CODE = /^[A-Za-z][\w.:#-]{0,99}$/;

/**
 * An error frame of a ConverseStream the SDK does not model: AWS's generic `:message-type:
 * error` frame (an `:error-code` such as InternalFailure, and its `:error-message`), or an
 * exception frame of a type it does not know. The SDK throws each as a plain Error named after
 * the frame's code, with no `$fault` and no `code` (a decoder's own failures are plain Errors
 * named Error; the connection's carry a `code`). The service's failure, retried where no text
 * has gone out, its words kept: it had been read as an undecodable stream.
 */
function isStreamErrorFrame(error: unknown): error is Error {
  if (!(error instanceof Error) || Object.getPrototypeOf(error) !== Error.prototype) return false;
  const e = error as SdkError;
  return e.$fault === undefined && e.code === undefined && !NOT_FRAME_NAMES.has(error.name) && FRAME_CODE.test(error.name);
}

/** Plain Errors' names that no frame gives: a decoder's own failure, the HTTP handler's timeouts. */
const NOT_FRAME_NAMES: ReadonlySet<string> = new Set(['Error', 'TimeoutError', 'AbortError']);

function frameError(error: Error): UpstreamError {
  // Read before the call resolved, the SDK's deserializer has added its own note to the frame's words.
  const [said = ''] = error.message.split(SDK_NOTE, 1);
  return new UpstreamError('upstream_error', cutWhole(`${error.name}: ${said}`, 500), { upstreamStatus: 200, retryable: true, cause: error });
}

const SDK_NOTE = '\n  Deserialization error:';

/** The vendor's own message, cut short; never for errors the SDK raised while parsing. */
function vendorMessage(e: SdkError, isService: boolean): string | undefined {
  if (!isService || typeof e.message !== 'string' || e.message === '' || e.message === 'UnknownError') return undefined;
  return cutWhole(e.message, 500);
}

function header(e: SdkError, name: string): string | undefined {
  const headers = e.$response?.headers ?? {};
  for (const key in headers) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}
