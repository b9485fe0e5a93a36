import type { Log } from '../../shared/log.js';

/** A Log that keeps every line (message and fields as JSON), for tests that check what is logged and what never is. */
export function recordingLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const record = (message: string, ...extra: Record<string, unknown>[]) => lines.push(JSON.stringify([message, ...extra]));
  return { lines, info: record, warn: record, error: record };
}
