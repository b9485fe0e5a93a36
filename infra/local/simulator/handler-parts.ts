/**
 * The parts the simulated protocols' handlers share: where a protocol is served, where it
 * reads the model, when it streams; and a fault's error body as text.
 */
import type { WireProtocol } from '../../../shared/catalog/types.js';
import { isObject } from './json.js';
import type { ProtocolHandler } from './types.js';

/** What every handler has besides its checks and its errors. */
type Serving = Pick<ProtocolHandler, 'protocol' | 'route' | 'modelOf' | 'streams' | 'toStream' | 'reset'>;

/**
 * A protocol served at `POST path` whose body names the model (`model`) and asks for a
 * stream with `stream: true`; `reset` forgets what it keeps between requests.
 */
export function servedAt(protocol: WireProtocol, path: string, toStream: ProtocolHandler['toStream'], reset?: () => void): Serving {
  return {
    protocol,
    route: (method, rest) => method === 'POST' && rest === path,
    modelOf: (body) => (isObject(body) && typeof body['model'] === 'string' ? body['model'] : ''),
    streams: (body) => isObject(body) && body['stream'] === true,
    toStream,
    ...(reset && { reset }),
  };
}

/**
 * A protocol served at `POST` on the paths `pattern` matches: its first group is the model
 * (URL-decoded; `undecodable` says what a bad escape gives), its second the method, which
 * streams when it is `streaming`.
 */
export function servedMatching(
  protocol: WireProtocol,
  pattern: RegExp,
  streaming: string,
  toStream: ProtocolHandler['toStream'],
  undecodable: 'as-sent' | 'none',
  reset?: () => void,
): Serving & { modelOf(body: unknown, rest: string): string } {
  return {
    protocol,
    route: (method, rest) => method === 'POST' && pattern.test(rest),
    modelOf: (_body, rest) => {
      const encoded = pattern.exec(rest)?.[1];
      if (encoded === undefined) return '';
      try {
        return decodeURIComponent(encoded);
      } catch {
        return undecodable === 'as-sent' ? encoded : '';
      }
    },
    streams: (_body, rest) => pattern.exec(rest)?.[2] === streaming,
    toStream,
    ...(reset && { reset }),
  };
}

/** A fault's error body as sent: a string as it is, anything else as JSON. */
export function bodyText(body: unknown): string {
  return typeof body === 'string' ? body : JSON.stringify(body);
}
