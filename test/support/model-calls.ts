import { expect } from 'vitest';
import { resolveModel } from '../../shared/catalog/index.js';
import type { ModelEntry } from '../../shared/catalog/types.js';
import { UpstreamError } from '../../shared/providers/errors.js';
import type { ModelCall } from '../../shared/providers/types.js';

/** The catalog entry of an ID the test names; a typo fails loudly. */
export function catalogEntry(id: string): ModelEntry {
  const found = resolveModel(id);
  if (!found) throw new Error(`no catalog entry ${id}`);
  return found;
}

/** A minimal ModelCall for a catalog model, with what the test overrides. */
export function modelCall(id: string, overrides: Partial<ModelCall> = {}, prompt = 'Compare two ways to cache HTTP responses.'): ModelCall {
  return { entry: catalogEntry(id), system: [], history: [], prompt, attachments: [], maxTokens: 4096, tuning: {}, ...overrides };
}

/** The UpstreamError a mapper throws. */
export function thrownUpstream(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}
