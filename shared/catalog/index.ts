import { FAMILY_TOKENS, MODELS } from './models.js';
import type { ModelEntry } from './types.js';
import { closest } from '../text/closest.js';

export type { ModelEntry } from './types.js';

/** The ID spelled with the real vendor token: `fam_a-opus-4-6` -> `claude-opus-4-6`, `fam_l` -> `codestral`. */
export function vendorSpelling(entry: ModelEntry): string | undefined {
  const token = FAMILY_TOKENS[entry.family];
  if (!token || !entry.id.startsWith(entry.family)) return undefined;
  return token + entry.id.slice(entry.family.length);
}

const byId = new Map<string, ModelEntry>();
for (const entry of MODELS) {
  byId.set(entry.id, entry);
}
for (const entry of MODELS) {
  const alias = vendorSpelling(entry);
  // A canonical ID always wins over an alias of another model.
  if (alias && !byId.has(alias)) byId.set(alias, entry);
}

/** Resolves a canonical ID or its vendor spelling; undefined for anything else. */
export function resolveModel(id: string): ModelEntry | undefined {
  return byId.get(id);
}

export function allModels(): readonly ModelEntry[] {
  return MODELS;
}

/** IDs compared for suggestions: case, dots and underscores aside (`claude-opus-4.6`, `fam_c-54`). */
const normaliseId = (id: string) => id.toLowerCase().replace(/[._]/g, '-');

/**
 * The known IDs closest to an unknown one, as a caller would write them: `"claude-opus-4-6"
 * (fam_a-opus-4-6)` for a vendor spelling, `"fam_a-opus-4-6"` for a canonical ID.
 */
export function closestModelIds(id: string): string[] {
  return closest(id, byId.keys(), normaliseId).map((known) => {
    const canonical = (byId.get(known) as ModelEntry).id;
    return canonical === known ? `"${known}"` : `"${known}" (${canonical})`;
  });
}
