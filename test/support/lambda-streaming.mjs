// Plain JavaScript, so that a bare `node` child process (the bundled function's test) can load it too.

/**
 * The response-streaming part of the `awslambda` global, as Lambda's Node.js runtime
 * behaves: the stream's `write` puts what `HttpResponseStream.from` left for it (the
 * metadata JSON and 8 NUL bytes) ahead of the first chunk; `end(chunk)` does not go
 * through that `write`.
 */
export function lambdaStreamingRuntime() {
  return {
    streamifyResponse: (handler) => handler,
    HttpResponseStream: {
      from(responseStream, metadata) {
        const write = responseStream.write.bind(responseStream);
        let first = true;
        responseStream.write = (chunk, ...rest) => {
          if (first) {
            first = false;
            write(JSON.stringify(metadata));
            write(Buffer.alloc(8));
          }
          return write(chunk, ...rest);
        };
        return responseStream;
      },
    },
  };
}

/** What a response stream carried, split at the delimiter: the metadata (parsed) and the body. */
export function splitStreamed(bytes) {
  const delimiter = bytes.indexOf(Buffer.alloc(8));
  return { metadata: JSON.parse(bytes.subarray(0, delimiter).toString()), body: bytes.subarray(delimiter + 8).toString() };
}
