/**
 * The types every simulated protocol and the server share. A protocol module imports these
 * (and the shared helpers beside them), never server.ts: the imports run server ->
 * protocols -> each protocol -> types and helpers, never back.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { WireProtocol } from '../../../shared/catalog/types.js';
import type { Json } from './json.js';
import type { StreamReply } from './streaming.js';

/** A complete HTTP answer. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface AnswerOptions {
  usage: boolean;
  /** The structured value to answer with instead of one generated from the schema: a behaving judge's verdict. */
  structured?: Json;
}

/** A request the vendor refuses: its error reply. */
export type Refusal = { ok: false; reply: Reply };

/** Whether a section check of a request gave a refusal rather than what it read. */
export function isRefusal(x: unknown): x is Refusal {
  return typeof x === 'object' && x !== null && (x as { ok?: unknown }).ok === false && 'reply' in x;
}

/** Result of validating a request: either ready to answer, or an error reply. */
export type Prepared = { ok: true; model: string; answer(opts: AnswerOptions): Reply } | Refusal;

/** One vendor wire protocol. `rest` is the path after `/{provider}`, without query string. */
export interface ProtocolHandler {
  readonly protocol: WireProtocol;
  /** Whether this protocol serves `method rest`. */
  route(method: string, rest: string): boolean;
  /** Best-effort model name of a (possibly invalid) request, '' when unknown. */
  modelOf(body: unknown, rest: string): string;
  /** An error reply when the credentials headers are malformed, else undefined. */
  authorize(headers: IncomingHttpHeaders): Reply | undefined;
  /** Validates the parsed JSON body. */
  prepare(body: unknown, rest: string, provider: string): Prepared;
  /** The reply to a body that is not JSON. */
  invalidJson(): Reply;
  /** Forgets state kept between requests (a prompt cache); called by the simulator's reset(). */
  reset?(): void;
  /** Whether the (valid) request asks for a streamed answer: a `stream: true` body or a streaming route. */
  streams(body: unknown, rest: string): boolean;
  /** The vendor's stream of the whole answer `reply` (status 200) to `body`. */
  toStream(reply: Reply, body: unknown, provider: string): StreamReply;
  /**
   * The vendor's answer to a model it has shut down (`shutDown` of shut-down.ts: the catalog's
   * retirements in effect), in its own error shape; undefined, or not given, where the vendor
   * answers the name anyway. Asked before the request is checked.
   */
  shutDown?(model: string, provider: string): Reply | undefined;
  /** A vendor-shaped error (fault kind 'status'); `body` replaces the default error body when given. */
  vendorError(status: number, retryAfter: string | undefined, body: unknown, target: { provider: string; model: string }): Reply;
}
