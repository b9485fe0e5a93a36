import type { ModelEntry, ProviderId } from '../catalog/types.js';
import type { GatewayConfig } from '../config.js';
import { UpstreamError } from './errors.js';
import { ADAPTERS } from './adapters.js';
import { DEFAULT_BASE_URLS } from '../catalog/base-urls.js';
import type { Endpoint, ProtocolAdapter } from './types.js';

export interface Route {
  adapter: Pick<ProtocolAdapter, 'prepare' | 'loading'>;
  endpoint: Endpoint;
}

export type Router = (entry: ModelEntry) => Route;

export interface RouterOptions {
  /** Base URL of the provider simulator for a provider; only in local mode. */
  simulatorBaseUrl?: (provider: ProviderId) => string;
}

/** Bedrock signs with the AWS credential chain; every other vendor needs its API key. */
function hasCredentials(config: GatewayConfig, provider: ProviderId): boolean {
  return provider === 'bedrock' ? config.awsCredentials || config.providers.bedrock.baseUrl !== undefined : config.providers[provider].apiKey !== undefined;
}

/** Whether a provider is answered by the simulator in this configuration. */
export function isSimulated(config: GatewayConfig, provider: ProviderId, options: RouterOptions): boolean {
  if (!options.simulatorBaseUrl) return false;
  return config.simulateProviders || !hasCredentials(config, provider);
}

/**
 * Routing by model alone (spec 1.2): the catalog names the provider and protocol, the
 * configuration names the key and base URL. In local mode a provider without a key (or
 * every provider, with SIMULATE_PROVIDERS=1) is answered by the simulator, through the
 * same adapter.
 */
export function createRouter(config: GatewayConfig, options: RouterOptions = {}): Router {
  return (entry) => {
    const { provider } = entry;
    const adapter = ADAPTERS[entry.protocol];
    if (options.simulatorBaseUrl && isSimulated(config, provider, options)) {
      return {
        adapter,
        endpoint: { baseUrl: options.simulatorBaseUrl(provider), region: config.bedrockRegion, simulated: true },
      };
    }
    const settings = config.providers[provider];
    if (provider !== 'bedrock' && !settings.apiKey) {
      throw new UpstreamError('provider_not_configured', `No API key is configured for ${provider}`);
    }
    return {
      adapter,
      endpoint: {
        baseUrl: settings.baseUrl ?? DEFAULT_BASE_URLS[provider],
        apiKey: settings.apiKey,
        ...(provider === 'bedrock' ? { region: config.bedrockRegion } : {}),
        simulated: false,
      },
    };
  };
}
