import { schemaInstruction } from '../structured-output.js';
import type { ModelCall } from '../types.js';
import { toMessages, toSystemBlocks } from './content.js';
import type { MessageParam, TextBlock } from './content.js';
import { planSampling } from './sampling.js';
import { planThinking } from './thinking.js';
import type { Effort, ThinkingConfig } from './thinking.js';

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: MessageParam[];
  temperature?: number;
  top_p?: number;
  thinking?: ThinkingConfig;
  output_config?: { format?: { type: 'json_schema'; schema: Record<string, unknown> }; effort?: Effort };
  /** The account the call is for (ModelCall.endUser). */
  metadata?: { user_id: string };
}

/** The gateway's call as a Messages API body, with a warning for every setting changed or not sent. */
export function toMessagesRequest(call: ModelCall): { body: MessagesRequest; warnings: string[] } {
  const { entry } = call;
  const thinking = planThinking(call);
  const sampling = planSampling(call, thinking.thinking !== undefined);

  const system = toSystemBlocks(call.system);
  const native = entry.capabilities.structuredOutput === 'native';
  // After the caller's blocks, so their cache breakpoints keep covering the same prefix.
  if (call.responseSchema && !native) system.push({ type: 'text', text: schemaInstruction(call.responseSchema) });

  const body: MessagesRequest = {
    model: entry.upstreamModel,
    max_tokens: thinking.maxTokens,
    ...(system.length > 0 ? { system } : {}),
    messages: toMessages(call),
  };
  if (sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling.top_p !== undefined) body.top_p = sampling.top_p;
  if (thinking.thinking) body.thinking = thinking.thinking;
  if (call.responseSchema && native) body.output_config = { format: { type: 'json_schema', schema: call.responseSchema } };
  if (thinking.effort) body.output_config = { ...body.output_config, effort: thinking.effort };
  if (call.endUser !== undefined) body.metadata = { user_id: call.endUser };
  return { body, warnings: [...thinking.warnings, ...sampling.warnings] };
}
