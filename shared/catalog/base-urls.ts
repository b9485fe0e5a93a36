import type { ProviderId } from './types.js';

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
  // Bedrock: the SDK derives the endpoint from BEDROCK_REGION unless BEDROCK_BASE_URL is set.
  bedrock: '',
};

/** What a provider's base URL looks like, for the error that refuses one. */
export function exampleBaseUrl(provider: ProviderId): string {
  return provider === 'bedrock' ? 'https://bedrock-runtime.us-east-1.amazonaws.com' : DEFAULT_BASE_URLS[provider];
}
