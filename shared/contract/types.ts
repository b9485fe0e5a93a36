import type { AttachmentType, ModelEntry } from '../catalog/types.js';

/** The request body as the contract spells it (spec 2.1). */
export interface CacheControl {
  type: 'ephemeral';
}
export interface SystemBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}
export interface HistoryTurn {
  role: 'user' | 'assistant';
  content: string;
  cache_control?: CacheControl;
}
export interface Attachment {
  name: string;
  type: AttachmentType;
  base64: string;
}
export interface GenerationSettings {
  temperature?: number;
  maxTokens?: number;
  topP?: number;
}
export interface JudgeWeights {
  accuracy: number;
  speed: number;
  cost: number;
}
export interface ModelTuning {
  thinkingBudget?: number;
  reasoningEffort?: 'none' | 'low' | 'medium' | 'high';
  webSearch?: boolean;
  cachedContent?: string;
}
export interface PromptRequestBody {
  prompt: string;
  models: string[];
  judges?: string[];
  judge_prompt?: string;
  judge_weights?: Partial<JudgeWeights>;
  attachments?: Attachment[];
  system_prompt?: string | SystemBlock[];
  history?: HistoryTurn[];
  generation_settings?: GenerationSettings;
  response_schema?: Record<string, unknown>;
  model_tuning?: Record<string, ModelTuning>;
  zero_data_retention?: boolean;
}

/** A model as requested: the ID the caller sent (echoed in results) and its catalog entry. */
export interface RequestedModel {
  requestedId: string;
  entry: ModelEntry;
  tuning: ModelTuning;
}

/** The request after the schema and the semantic checks: what the comparison runs on. */
export interface PromptRequest {
  body: PromptRequestBody;
  models: RequestedModel[];
  judges: RequestedModel[];
  judgeWeights: JudgeWeights;
  /** The system prompt as blocks (a string becomes one block). */
  system: SystemBlock[];
  /**
   * The `response_schema`'s JSON, when the request has one: what the schema thread compiles
   * and checks outputs against (schema-checker.ts), and keeps compiled validators by.
   */
  outputSchema?: string;
  /** The instant (epoch ms) the catalog was read at: which model answers a retired ID (shared/catalog). */
  catalogAt: number;
}
