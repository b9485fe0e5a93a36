import { allModels, retirementNote, retirementsInEffect, vendorSpelling } from './index.js';
import type { ModelEntry, Prices, ProviderId, WireProtocol } from './types.js';

/** One model as `GET /api/v1/models` lists it: everything a caller needs to choose and call it. */
export interface ListedModel {
  /** The canonical ID, as the contract spells it. */
  id: string;
  /** The same model under its vendor's spelling, where it has one (`claude-opus-4-6`); a result echoes whichever was sent. */
  alias: string | null;
  provider: ProviderId;
  protocol: WireProtocol;
  /** The model name the vendor's API is called with. */
  upstreamModel: string;
  /** Where the contract lists it: `flagship`, `fast`, `legacy`, or `other` (spec 2.6 only). */
  tier: ModelEntry['tier'];
  capabilities: {
    /** Media types it accepts as attachments. */
    attachments: readonly string[];
    /** How `response_schema` is enforced: natively, through a forced tool call, or as an instruction. */
    structuredOutput: ModelEntry['capabilities']['structuredOutput'];
    /** Each `model_tuning` parameter it takes, with its range. */
    tuning: {
      thinkingBudget?: { min: number; max: number; disable: 0 };
      reasoningEffort?: readonly string[];
      webSearch?: boolean;
      cachedContent?: boolean;
    };
    cache: { mode: string; minTokens: number | null };
  };
  /** USD per million tokens, per usage class, as the vendor listed them on `takenOn`. */
  prices: Prices;
  /** The largest `maxTokens` it takes; `defaultMaxTokens` when the request gives none. */
  maxOutputTokens: number;
  defaultMaxTokens: number;
  contextWindow: number;
  /** Set when another model of the vendor serves this ID (every result carries it as a warning), or its vendor has announced the day it will, or it departs from the contract. */
  notes: string[];
}

function listed(entry: ModelEntry): ListedModel {
  const { tuning, cache } = entry.capabilities;
  return {
    id: entry.id,
    alias: vendorSpelling(entry) ?? null,
    provider: entry.provider,
    protocol: entry.protocol,
    upstreamModel: entry.upstreamModel,
    tier: entry.tier,
    capabilities: {
      attachments: entry.capabilities.attachments,
      structuredOutput: entry.capabilities.structuredOutput,
      tuning: {
        ...(tuning.thinkingBudget ? { thinkingBudget: { ...tuning.thinkingBudget, disable: 0 as const } } : {}),
        ...(tuning.reasoningEffort ? { reasoningEffort: tuning.reasoningEffort } : {}),
        ...(tuning.webSearch ? { webSearch: true } : {}),
        ...(tuning.cachedContent ? { cachedContent: true } : {}),
      },
      cache: { mode: cache.mode, minTokens: cache.minTokens ?? null },
    },
    prices: entry.prices,
    maxOutputTokens: entry.maxOutputTokens,
    defaultMaxTokens: entry.defaultMaxTokens,
    contextWindow: entry.contextWindow,
    notes: [entry.servedBy ?? retirementNote(entry), entry.note].filter((note) => note !== undefined),
  };
}

/** Every model the gateway answers to, in catalog order, as each answers at `now`: the body of `GET /api/v1/models`. */
export function modelListing(now = Date.now()): { models: ListedModel[] } {
  return { models: allModels(now).map(listed) };
}

let serialised: { retirements: number; json: string } | undefined;

/** `modelListing()` as JSON, serialised again only when a retirement has taken effect since the last time. */
export function modelListingJson(now = Date.now()): string {
  const retirements = retirementsInEffect(now);
  if (serialised?.retirements !== retirements) serialised = { retirements, json: JSON.stringify(modelListing(now)) };
  return serialised.json;
}
