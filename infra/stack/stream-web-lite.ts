/**
 * `node:stream/web` as the Lambda bundles see it (infra/stack/bundle.ts). Its one importer
 * there is Middy core, which reads `ReadableStream` only for an `instanceof` in its own
 * response-streaming mode; the gateway streams its answers itself
 * (functions/stream-answer.ts). Loading Node's web streams costs about 2 ms of every cold
 * start, so this class answers `instanceof` as Node's does, and loads Node's class only
 * when asked. Any other name imported from `node:stream/web` fails the build.
 */
// biome-ignore lint/complexity/noStaticOnlyClass: it must be a class, for `instanceof` checks against it
export class ReadableStream {
  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof globalThis.ReadableStream;
  }
}
