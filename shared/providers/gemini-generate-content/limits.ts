import type { OutputLimits } from '../types.js';
import { thinks } from './thinking.js';

/**
 * maxOutputTokens bounds thoughts and answer together (thoughtsTokenCount is spent from it).
 * Thoughts are billed and shown only as that count.
 */
export const generateContentLimits: OutputLimits = {
  billedOutputBound: (call) => call.maxTokens,
  sentOutputLimit: (call) => call.maxTokens,
  hidesReasoning: (call) => thinks(call.entry.upstreamModel),
};
