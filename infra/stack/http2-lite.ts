import { createRequire } from 'node:module';

type Http2 = typeof import('node:http2');

let loaded: Http2 | undefined;
const http2 = (): Http2 => {
  loaded ??= createRequire(import.meta.url)('node:http2') as Http2;
  return loaded;
};

/** Its constants, read when a name is read: the SDK's HTTP/2 handler takes them when its module loads. */
const constants = new Proxy({} as Http2['constants'], { get: (_, name) => http2().constants[name as keyof Http2['constants']] });

/**
 * `node:http2` as the Lambda bundles see it (infra/stack/bundle.ts): its importer there is
 * the SDK's HTTP handler package, whose HTTP/2 handler the Bedrock runtime client names
 * (it is given an HTTP/1.1 one, shared/providers/bedrock-converse/client.ts). Loading
 * Node's module costs about 3 ms of every cold start, so this loads it when a name of it is
 * first read. It serves a default import and property reads (`constants`, `connect`), all
 * that importer makes; a named import of `node:http2` fails the build, and a namespace
 * import would read undefined names: a new importer of either kind needs this file widened.
 */
export default new Proxy({} as Http2, { get: (_, name) => (name === 'constants' ? constants : http2()[name as keyof Http2]) });
