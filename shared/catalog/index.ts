import { FAMILY_TOKENS, MODELS } from './models.js';
import { PROVIDER_NAMES, type ModelEntry, type Retirement } from './types.js';
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

/**
 * What answers to a retired ID from the start of its retirement day (epoch ms): its successor,
 * as this ID, or the vendor's own replacement (`vendorReroute`); and the note that announces it
 * until then.
 */
type Replacement = { from: number; served: ModelEntry; announced: string };
const retired = new Map<ModelEntry, Replacement>();
for (const entry of MODELS) {
  // One of the two: a retired model's successor answers instead of it, the catalog's or the vendor's own.
  if (entry.retirement && entry.vendorReroute) throw new Error(`${entry.id}: both retired and rerouted by its vendor`);
  const replacement = entry.retirement ? successorOf(entry, entry.retirement) : entry.vendorReroute ? reroutedBy(entry, entry.vendorReroute) : undefined;
  if (replacement) retired.set(entry, replacement);
}

/** A retired model's successor, a catalog model of the same vendor, served as this ID. */
function successorOf(entry: ModelEntry, { on, successor: successorId }: Retirement): Replacement {
  const successor = byId.get(successorId);
  if (!successor || successor.id !== successorId || successor.retirement || successor.vendorReroute || successor.provider !== entry.provider) {
    throw new Error(`${entry.id}: successor ${successorId} is not a catalog ID of its vendor that stays`);
  }
  const { retirement, servedBy, ...answering } = successor;
  const vendor = PROVIDER_NAMES[entry.provider];
  const answerer = `${successor.upstreamModel} (${successor.id})`;
  return {
    from: Date.parse(`${on}T00:00:00Z`),
    announced: `${vendor} shuts ${entry.upstreamModel} down on ${on}; from then ${answerer} answers this ID, at its prices`,
    served: {
      ...answering,
      id: entry.id,
      family: entry.family,
      tier: entry.tier,
      // What a caller may tune stays what the contract gives this ID (spec 2.6): the successor takes all of it.
      capabilities: { ...successor.capabilities, tuning: entry.capabilities.tuning },
      servedBy: `${vendor} shut ${entry.upstreamModel} down on ${on}; ${answerer} answers this ID in its place, at its prices`,
    },
  };
}

/** A model its vendor answers with another of its own, which the catalog does not list: the same entry, saying so. */
function reroutedBy(entry: ModelEntry, { on, answeredBy }: NonNullable<ModelEntry['vendorReroute']>): Replacement {
  const vendor = PROVIDER_NAMES[entry.provider];
  return {
    from: Date.parse(`${on}T00:00:00Z`),
    announced: `${vendor} answers ${entry.upstreamModel} with ${answeredBy} from ${on}; the gateway still sends ${entry.upstreamModel}, at its prices`,
    served: {
      ...entry,
      servedBy: `${vendor} answers ${entry.upstreamModel} with ${answeredBy} since ${on}: ${answeredBy} answered, priced as ${entry.upstreamModel} (the catalog lists no prices of its own for it)`,
    },
  };
}

/** The entry that answers to `entry`'s ID at `now`: itself, or from its retirement day its successor's, as this ID. */
function answering(entry: ModelEntry, now: number): ModelEntry {
  const retirement = retired.get(entry);
  return retirement && now >= retirement.from ? retirement.served : entry;
}

/** Resolves a canonical ID or its vendor spelling (to what answers to it at `now`); undefined for anything else. */
export function resolveModel(id: string, now = Date.now()): ModelEntry | undefined {
  const entry = byId.get(id);
  return entry && answering(entry, now);
}

/** Every model the gateway answers to, in catalog order, as each answers at `now`. */
export function allModels(now = Date.now()): readonly ModelEntry[] {
  return MODELS.map((entry) => answering(entry, now));
}

/** How many retirements have taken effect at `now`: what answers to the catalog's IDs changes with it only. */
export function retirementsInEffect(now = Date.now()): number {
  let count = 0;
  for (const { from } of retired.values()) if (now >= from) count++;
  return count;
}

/** A note on a model whose vendor has announced its shutdown and that still answers: what answers from when. */
export function retirementNote(entry: ModelEntry): string | undefined {
  return retired.get(entry)?.announced;
}

/** IDs compared for suggestions: case, dots and underscores aside (`claude-opus-4.6`, `fam_c-54`). */
const normaliseId = (id: string) => id.toLowerCase().replace(/[._]/g, '-');

/**
 * A vendor's model name as compared for suggestions: without its maker (`openai/gpt-oss-120b`)
 * or a Bedrock geography (`us.amazon.nova-pro-v1:0`), case, dots and underscores aside.
 */
const normaliseVendorModel = (name: string) => normaliseId(name.slice(name.lastIndexOf('/') + 1).replace(/^(?:us|eu|apac|global)\./i, ''));

/** The catalog IDs for each vendor model (the one each names, as the listing's `upstreamModel` shows it before any retirement). */
const byVendorModel = new Map<string, ModelEntry[]>();
for (const entry of MODELS) {
  const name = normaliseVendorModel(entry.upstreamModel);
  byVendorModel.set(name, [...(byVendorModel.get(name) ?? []), entry]);
}

/** The vendor model that answers `entry`'s ID at `now` in place of its own (its retirement's successor), or undefined. */
function answeredInstead(entry: ModelEntry, now: number): string | undefined {
  const { upstreamModel } = answering(entry, now);
  return upstreamModel === entry.upstreamModel ? undefined : upstreamModel;
}

/** A catalog ID's family token as a caller writes it (`fam_b` of `fam_b-3.1-pro`), normalised; undefined for a vendor spelling. */
const familyOf = (id: string): string | undefined => /^fam-[a-z0-9]+(?=-)/.exec(normaliseId(id))?.[0];

/**
 * The known IDs closest to an unknown one, as a caller would write them: `"claude-opus-4-6"
 * (fam_a-opus-4-6)` for a vendor spelling, `"fam_a-opus-4-6"` for a canonical ID, those of its
 * family first (`fam_b-3.1` had been offered `fam_c-4.1` alone) and those that begin with it
 * too, an ID that answers before a retired one as close; and for the name of a vendor model
 * (`gemini-3.1-pro-preview`, as the listing, results and page show it), the IDs for it, a
 * retired one saying which model answers it now (it had been offered as for that name).
 */
export function closestModelIds(id: string, now = Date.now()): string[] {
  const family = familyOf(id);
  const ranked = closest(id, byId.keys(), normaliseId, Number.POSITIVE_INFINITY, {
    tieBreak: (known) => (answeredInstead(byId.get(known) as ModelEntry, now) === undefined ? 0 : 1),
    prefixes: true,
  });
  // Another family's IDs only where none of its own comes close.
  const ownFamily = ranked.filter((known) => familyOf(known) === family);
  const near = (family !== undefined && ownFamily.length > 0 ? ownFamily : ranked).slice(0, 3);
  // An ID but for case, dots and underscores is meant; else a vendor model's own name (closest reads none over 100 characters, nor does this).
  const meantAnId = near[0] !== undefined && normaliseId(near[0]) === normaliseId(id);
  const forVendorModel = meantAnId || id.length > 100 ? undefined : byVendorModel.get(normaliseVendorModel(id));
  if (forVendorModel) {
    return forVendorModel.map((entry) => {
      const answers = answeredInstead(entry, now);
      return answers === undefined ? `"${entry.id}" (for ${entry.upstreamModel})` : `"${entry.id}" (for ${entry.upstreamModel} until its shutdown; ${answers} answers it now)`;
    });
  }
  return near.map((known) => {
    const canonical = (byId.get(known) as ModelEntry).id;
    return canonical === known ? `"${known}"` : `"${known}" (${canonical})`;
  });
}
