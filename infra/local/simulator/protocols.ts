import { simulatedAnthropicMessages } from './anthropic-messages/index.js';
import { simulatedBedrockConverse } from './bedrock-converse/index.js';
import { simulatedGeminiGenerateContent } from './gemini-generate-content/index.js';
import { simulatedOpenAiChat } from './openai-chat/index.js';
import { simulatedOpenAiResponses } from './openai-responses/index.js';
import type { ProtocolHandler } from './types.js';

/** Every wire protocol the simulator speaks; one module each. */
export const PROTOCOLS: readonly ProtocolHandler[] = [
  simulatedOpenAiChat,
  simulatedOpenAiResponses,
  simulatedAnthropicMessages,
  simulatedGeminiGenerateContent,
  simulatedBedrockConverse,
];
