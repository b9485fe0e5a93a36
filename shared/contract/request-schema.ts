import { ATTACHMENT_TYPES } from '../catalog/types.js';
import { LIMITS } from './limits.js';

/**
 * The request body of POST /api/v1/prompt (spec 2.1 to 2.9) as one JSON Schema (2020-12).
 * Compiled once by the validator; the OpenAPI document uses the same object. Every object
 * is closed: an unknown field is an error, never ignored (spec 1.8).
 */
const cacheControl = {
  type: 'object',
  description: 'Marks a cache breakpoint (spec 2.7, 2.8).',
  properties: { type: { const: 'ephemeral' } },
  required: ['type'],
  additionalProperties: false,
} as const;

const modelId = { type: 'string', minLength: 1, maxLength: LIMITS.modelIdChars } as const;

export const promptRequestSchema = {
  $id: 'https://gateway.local/schemas/prompt-request.json',
  title: 'PromptRequest',
  type: 'object',
  properties: {
    prompt: {
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.promptChars,
      description: 'Prompt text sent to the models; it must contain non-whitespace text.',
    },
    models: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.models,
      items: modelId,
      description: 'Model IDs to generate responses from, each once (an ID and its vendor spelling name the same model).',
    },
    judges: { type: 'array', maxItems: LIMITS.judges, items: modelId, description: 'Model IDs used as judges, each once.' },
    judge_prompt: { type: 'string', minLength: 1, maxLength: LIMITS.judgePromptChars },
    judge_weights: {
      type: 'object',
      properties: {
        accuracy: { type: 'number', minimum: 0, maximum: 1 },
        speed: { type: 'number', minimum: 0, maximum: 1 },
        cost: { type: 'number', minimum: 0, maximum: 1 },
      },
      additionalProperties: false,
    },
    attachments: {
      type: 'array',
      maxItems: LIMITS.attachments,
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: LIMITS.attachmentNameChars },
          type: { enum: [...ATTACHMENT_TYPES] },
          base64: { type: 'string', minLength: 1 },
        },
        required: ['name', 'type', 'base64'],
        additionalProperties: false,
      },
    },
    system_prompt: {
      // A string, or an array of system blocks (string and array keywords each apply to their own type).
      type: ['string', 'array'],
      maxLength: LIMITS.systemChars,
      minItems: 1,
      maxItems: LIMITS.systemBlocks,
      items: {
        type: 'object',
        properties: {
          type: { const: 'text' },
          text: { type: 'string', minLength: 1, maxLength: LIMITS.systemChars },
          cache_control: cacheControl,
        },
        required: ['type', 'text'],
        additionalProperties: false,
      },
    },
    history: {
      type: 'array',
      maxItems: LIMITS.historyTurns,
      description:
        'Earlier turns, oldest first; each content must contain non-whitespace text. A history that starts with an assistant turn is refused for models whose vendor refuses it (Bedrock Nova, Anthropic, DeepSeek).',
      items: {
        type: 'object',
        properties: {
          role: { enum: ['user', 'assistant'] },
          content: { type: 'string', maxLength: LIMITS.historyTurnChars },
          cache_control: cacheControl,
        },
        required: ['role', 'content'],
        additionalProperties: false,
      },
    },
    generation_settings: {
      type: 'object',
      properties: {
        temperature: { type: 'number', minimum: 0, maximum: 2 },
        maxTokens: { type: 'integer', minimum: 1, maximum: LIMITS.maxTokens },
        topP: { type: 'number', minimum: 0, maximum: 1 },
      },
      additionalProperties: false,
    },
    response_schema: {
      type: 'object',
      description: 'A JSON schema whose root is `type: "object"`; every object level must set additionalProperties: false (spec 2.5).',
    },
    model_tuning: {
      type: 'object',
      propertyNames: modelId,
      additionalProperties: {
        type: 'object',
        properties: {
          thinkingBudget: { type: 'integer', minimum: 0 },
          reasoningEffort: { enum: ['none', 'low', 'medium', 'high'] },
          webSearch: { type: 'boolean' },
          cachedContent: { type: 'string', pattern: '^cachedContents/[A-Za-z0-9_-]{1,128}$' },
        },
        additionalProperties: false,
      },
    },
    zero_data_retention: { type: 'boolean' },
  },
  required: ['prompt', 'models'],
  additionalProperties: false,
} as const;
