import { openAiChat } from './openai-chat.js';
import type { ProtocolHandler } from './server.js';

/** Every wire protocol the simulator speaks; one module each. */
export const PROTOCOLS: readonly ProtocolHandler[] = [openAiChat];
