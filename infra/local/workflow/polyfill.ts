/**
 * aws-local-stepfunctions calls `Promise.withResolvers` (Node 22); development and CI run
 * Node 20 (DESIGN.md, Runtime versions). Installed here, where that library is loaded
 * (the local host and the tests reach it only through this folder), never in Lambda code.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const PromiseWith = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

export function installPromiseWithResolvers(): void {
  if (typeof PromiseWith.withResolvers === 'function') return;
  PromiseWith.withResolvers = <T>(): Resolvers<T> => {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
