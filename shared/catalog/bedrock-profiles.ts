import type { ModelEntry } from './types.js';

/**
 * Bedrock cross-region (system-defined) inference profiles for the catalog's Amazon Nova
 * models. Outside us-east-1, Nova Pro, Lite and Micro take no on-demand call by their bare
 * model ID: a call names the profile of the caller's geography (`eu.amazon.nova-pro-v1:0`),
 * made in the caller's region (the source region), and Bedrock routes it to one of the
 * profile's destination regions. The stack grants exactly the profile and the foundation
 * model in those destinations (infra/stack/bedrock.ts); the adapter names the profile
 * (shared/providers/bedrock-converse/request.ts). One table serves both.
 *
 * Source: Amazon Bedrock user guide, "Supported Regions and models for inference profiles"
 * (docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html), rows
 * "US/EU/APAC Nova Pro, Nova Lite, Nova Micro", read for this table on 2026-11-23. AWS adds
 * regions to profiles; docs/deployment.md says how to check a profile's destinations.
 */
export interface NovaGeography {
  /** The profile ID prefix: `<prefix>.<model ID>`. */
  prefix: 'us' | 'eu' | 'apac';
  /** Regions that may call the profile; each is also a destination. */
  regions: readonly string[];
}

export const NOVA_GEOGRAPHIES: readonly NovaGeography[] = [
  { prefix: 'us', regions: ['us-east-1', 'us-east-2', 'us-west-2'] },
  { prefix: 'eu', regions: ['eu-central-1', 'eu-north-1', 'eu-south-1', 'eu-south-2', 'eu-west-1', 'eu-west-3'] },
  { prefix: 'apac', regions: ['ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'ap-south-2', 'ap-southeast-1', 'ap-southeast-2'] },
];

/** The geography whose profiles a call from `region` uses; undefined where no Nova profile has it as a source. */
export function novaGeography(region: string): NovaGeography | undefined {
  return NOVA_GEOGRAPHIES.find((geography) => geography.regions.includes(region));
}

/**
 * The model ID a Converse call from `region` names: the geography's inference profile
 * (`us.amazon.nova-lite-v1:0`), or the bare model ID where the region has no profile (or
 * none is known: tests that give no region).
 */
export function bedrockModelId(upstreamModel: string, region: string | undefined): string {
  const geography = region === undefined ? undefined : novaGeography(region);
  return geography ? `${geography.prefix}.${upstreamModel}` : upstreamModel;
}

/** The model name a call of `entry` sends its vendor: the upstream model, or on Bedrock the profile of `bedrockRegion`. */
export function wireModelId(entry: Pick<ModelEntry, 'provider' | 'upstreamModel'>, bedrockRegion: string | undefined): string {
  return entry.provider === 'bedrock' ? bedrockModelId(entry.upstreamModel, bedrockRegion) : entry.upstreamModel;
}
