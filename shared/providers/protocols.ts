/**
 * Every protocol's adapter past its output limits, as one module that loads with the first
 * call of any protocol (shared/providers/adapters.ts). Loaded one by one, the five made
 * esbuild split the code they share with the rest of the gateway by which of them uses it:
 * five more chunks at every cold start, about 1-2 ms of the api's import. A container's
 * first request usually calls several protocols anyway.
 */
export { anthropicMessages } from './anthropic-messages/index.js';
export { bedrockConverse } from './bedrock-converse/index.js';
export { geminiGenerateContent } from './gemini-generate-content/index.js';
export { openaiChat } from './openai-chat/index.js';
export { openaiResponses } from './openai-responses/index.js';
