/**
 * What the domain needs of a logger (Powertools' Logger satisfies it). Callers pass
 * metadata only: never a prompt, an output, a key or an Authorization header.
 */
export interface Log {
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

export const silentLog: Log = { info() {}, warn() {}, error() {} };
