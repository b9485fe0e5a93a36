import type { WireProtocol } from '../catalog/types.js';
import { openaiChat } from './openai-chat/index.js';
import type { ProtocolAdapter } from './types.js';

/** The protocols that have their own adapter; one entry per folder under shared/providers/. */
export const ADAPTERS: Partial<Record<WireProtocol, ProtocolAdapter>> = {
  'openai-chat': openaiChat,
};
