import type { OutputLimits } from '../types.js';
import { anthropicOutputBound } from './thinking.js';

/** max_tokens bounds thinking and answer together: it is both the limit sent and what may be billed. */
export const anthropicLimits: OutputLimits = { billedOutputBound: anthropicOutputBound, sentOutputLimit: anthropicOutputBound };
