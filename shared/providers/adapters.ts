import type { WireProtocol } from '../catalog/types.js';
import { anthropicMessages } from './anthropic-messages/index.js';
import { bedrockConverse } from './bedrock-converse/index.js';
import { geminiGenerateContent } from './gemini-generate-content/index.js';
import { openaiChat } from './openai-chat/index.js';
import { openaiResponses } from './openai-responses/index.js';
import type { ProtocolAdapter } from './types.js';

/** Every wire protocol's adapter; one folder each under shared/providers/. */
export const ADAPTERS: Record<WireProtocol, ProtocolAdapter> = {
  'openai-chat': openaiChat,
  'openai-responses': openaiResponses,
  'gemini-generate-content': geminiGenerateContent,
  'anthropic-messages': anthropicMessages,
  'bedrock-converse': bedrockConverse,
};
