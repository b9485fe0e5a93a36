import type { ProviderId } from './types.js';

/**
 * Vendors that refuse a conversation whose first message is the assistant's, with where
 * that rule was read (docs/providers.md). The gateway cannot turn such a history into one
 * of theirs without writing a user turn the caller never wrote, so it refuses it (400 on
 * `/history/0/role`) when one of these vendors' models is requested.
 */
const USER_FIRST: Readonly<Partial<Record<ProviderId, string>>> = {
  // Nova user guide, "Messages API overview": "The first message must always use the user role."
  bedrock: 'Amazon Bedrock (Nova)',
  // Messages API: 400 "messages: first message must use the \"user\" role".
  anthropic: 'Anthropic',
  // Thinking mode (the default of its V4 models): 400 "The first message (except the system message) ... must be a user message".
  deepseek: 'DeepSeek',
};

/** The vendor's name when it refuses a history that starts with an assistant turn, else undefined. */
export function requiresUserFirst(provider: ProviderId): string | undefined {
  return USER_FIRST[provider];
}
