import type { OutputLimits } from '../types.js';

/** maxOutputTokens bounds thoughts and answer together (thoughtsTokenCount is spent from it). */
export const generateContentLimits: OutputLimits = { billedOutputBound: (call) => call.maxTokens, sentOutputLimit: (call) => call.maxTokens };
