import type { ModelEntry, ProviderId, WireProtocol } from '../catalog/types.js';
import type { GatewayConfig } from '../config.js';
import { UpstreamError } from './errors.js';
import { openaiChat } from './openai-chat/index.js';
import { ADAPTERS } from './adapters.js';
import type { Endpoint, ProtocolAdapter } from './types.js';

/** Vendor base URLs, version segment included, as the vendors document them. */
export const DEFAULT_BASE_URLS: Record<ProviderId, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
  xai: 'https://api.x.ai/v1',
  cerebras: 'https://api.cerebras.ai/v1',
  deepseek: 'https://api.deepseek.com/v1',
  mistral: 'https://api.mistral.ai/v1',
  groq: 'https://api.groq.com/openai/v1',
  bedrock: 'https://bedrock-runtime.us-east-1.amazonaws.com',
};


export interface Route {
  adapter: ProtocolAdapter;
  endpoint: Endpoint;
}

export type Router = (entry: ModelEntry) => Route;

export interface RouterOptions {
  /** Base URL of the provider simulator for a provider; only in local mode. */
  simulatorBaseUrl?: (provider: ProviderId) => string;
}

/** Whether a provider is answered by the simulator in this configuration. */
export function isSimulated(config: GatewayConfig, provider: ProviderId, protocol: WireProtocol, options: RouterOptions): boolean {
  if (!options.simulatorBaseUrl) return false;
  return config.simulateProviders || !config.providers[provider].apiKey || !ADAPTERS[protocol];
}

/**
 * Routing by model alone (spec 1.2): the catalog names the provider and protocol, the
 * configuration names the key and base URL. In local mode a provider without a key (or
 * every provider, with SIMULATE_PROVIDERS=1) is answered by the simulator; a protocol
 * without its adapter yet is served there through chat completions.
 */
export function createRouter(config: GatewayConfig, options: RouterOptions = {}): Router {
  return (entry) => {
    const { provider, protocol } = entry;
    if (options.simulatorBaseUrl && isSimulated(config, provider, protocol, options)) {
      return {
        adapter: ADAPTERS[protocol] ?? openaiChat,
        endpoint: { baseUrl: options.simulatorBaseUrl(provider), simulated: true },
      };
    }
    const adapter = ADAPTERS[protocol];
    if (!adapter) {
      throw new UpstreamError('protocol_not_available', `The ${protocol} protocol of ${entry.id} is not available in this deployment yet`);
    }
    const settings = config.providers[provider];
    if (!settings.apiKey) {
      throw new UpstreamError('provider_not_configured', `No API key is configured for ${provider}`);
    }
    return {
      adapter,
      endpoint: { baseUrl: settings.baseUrl ?? DEFAULT_BASE_URLS[provider], apiKey: settings.apiKey, simulated: false },
    };
  };
}
