import type { OutputLimits } from '../types.js';

/** inferenceConfig.maxTokens bounds the output; the Nova models of the catalog do not reason. */
export const converseLimits: OutputLimits = { billedOutputBound: (call) => call.maxTokens, sentOutputLimit: (call) => call.maxTokens };
