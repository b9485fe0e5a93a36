/** Builds a value on first use and keeps it for the life of the process (a Lambda container). */
export function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

/**
 * The asynchronous form: the first call starts the build, calls while it runs share it,
 * later calls reuse its value. A build that fails is forgotten, so the next call (the
 * next invocation) tries again instead of failing for the life of the container.
 */
export function lazyAsync<T>(build: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= Promise.resolve()
      .then(build)
      .catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
    return pending;
  };
}

/**
 * lazyAsync whose value, once built, comes back as it is rather than in a promise: for a
 * caller on a request's path that should not wait a turn of the event loop for what it
 * already has (a module loaded, a router made). Until then, the build's promise.
 */
export function lazyAsyncAtHand<T>(build: () => Promise<T>): () => T | Promise<T> {
  let built: { value: T } | undefined;
  const building = lazyAsync(async () => {
    const value = await build();
    built = { value };
    return value;
  });
  return () => (built ? built.value : building());
}
