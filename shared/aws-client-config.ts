/**
 * Gives an AWS SDK client's resolved configuration V8's fast properties back, and returns
 * the client.
 *
 * The SDK builds each client's configuration (about 50 members) with a chain of
 * `Object.assign`s, which leaves it in V8's dictionary mode, and then copies the whole of
 * it on every call: `{ ...config }` in the endpoint step, `{ ...config, ...context }` in
 * the serialiser's and the deserialiser's (@smithy/core). A copy of the dictionary-mode
 * object costs about 10 µs here, of a fast one about 1 µs: a DynamoDB `UpdateItem` through
 * the gateway's store client took 145 µs of CPU with the configuration as the SDK leaves
 * it and 110 µs with it fast (docs/aws-clients.md, Measurements).
 *
 * V8 turns a dictionary-mode object fast once it serves as a prototype that property reads
 * go through, so the configuration is made the prototype of a throwaway object read a few
 * times. Nothing of the configuration changes: the same object, the same members, still
 * the one every middleware of the client holds. Should a V8 stop doing this, the client
 * only copies its configuration more slowly (test/unit/aws-client-config.test.ts checks
 * the mode with V8's own `%HasFastProperties`).
 */
export function withFastConfig<C extends { config: object }>(client: C): C {
  function Reader() {}
  Reader.prototype = client.config;
  // V8 makes it fast from a read's inline cache, which a function has only once it has run
  // a few times (8 calls in Node 20): the reads go through a function of their own, run
  // more often than that on the first client.
  for (let read = 0; read < READS; read++) readThrough(new (Reader as unknown as new () => object)());
  return client;
}

const READS = 32;

function readThrough(object: object): unknown {
  return (object as { region?: unknown }).region;
}
