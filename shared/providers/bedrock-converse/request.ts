import type { ContentBlock, ConverseCommandInput, Message, SystemContentBlock, ToolConfiguration, ToolInputSchema } from '@aws-sdk/client-bedrock-runtime';
import { bedrockModelId } from '../../catalog/bedrock-profiles.js';
import type { AttachmentType } from '../../catalog/types.js';
import type { Attachment } from '../../contract/types.js';
import { schemaInstruction } from '../structured-output.js';
import { appendAlternating } from '../turns.js';
import type { ModelCall } from '../types.js';
import { documentName } from './document-name.js';

/** The forced tool whose input is the structured answer. */
export const RESPOND_TOOL = 'respond';

/** Nova takes at most 4 cache checkpoints a request (Bedrock prompt caching, supported models). */
const MAX_CACHE_POINTS = 4;
/** Nova's temperature range is 0 to 1 (Nova user guide, complete request schema); the contract allows up to 2. */
const MAX_TEMPERATURE = 1;

const IMAGE_FORMATS: Partial<Record<AttachmentType, 'png' | 'jpeg' | 'gif' | 'webp'>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

export interface ConverseRequest {
  input: ConverseCommandInput;
  /** Settings the vendor could not take as given. */
  warnings: string[];
}

/** The gateway's call as a Converse request: system blocks, alternating turns, the prompt last. */
/** `region` is where the call is made: it picks the cross-region inference profile the call names (catalog/bedrock-profiles.ts). */
export function toConverseRequest(call: ModelCall, region?: string): ConverseRequest {
  const warnings: string[] = [];
  const cachePoints = new CachePointBudget(warnings);
  const forcedTool = call.responseSchema !== undefined && call.entry.capabilities.structuredOutput === 'tool';

  const system: SystemContentBlock[] = [];
  for (const block of call.system) {
    system.push({ text: block.text });
    if (block.cache_control && cachePoints.take()) system.push(CACHE_POINT);
  }
  if (call.responseSchema && !forcedTool) system.push({ text: schemaInstruction(call.responseSchema) });

  const messages: Message[] = [];
  for (const turn of call.history) {
    const content: ContentBlock[] = [{ text: turn.content }];
    if (turn.cache_control && cachePoints.take()) content.push(CACHE_POINT);
    appendTurn(messages, turn.role, content);
  }
  appendTurn(messages, 'user', promptContent(call.attachments, call.prompt));

  const tuning = Object.keys(call.tuning).filter((key) => call.tuning[key as keyof ModelCall['tuning']] !== undefined);
  if (tuning.length > 0) warnings.push(`This model takes no model_tuning; ignored: ${tuning.join(', ')}`);

  const input: ConverseCommandInput = { modelId: bedrockModelId(call.entry.upstreamModel, region), messages, inferenceConfig: inferenceConfig(call, warnings) };
  if (system.length > 0) input.system = system;
  if (forcedTool && call.responseSchema) input.toolConfig = respondTool(call.responseSchema);
  return { input, warnings };
}

/** Converse wants user and assistant to alternate; consecutive turns of one role become one message. */
function appendTurn(messages: Message[], role: 'user' | 'assistant', content: ContentBlock[]): void {
  appendAlternating(messages, { role, content }, (last, next) => last.content?.push(...(next.content ?? [])));
}

/** Attachments first, then the prompt text: Nova's guide places media before the question. */
function promptContent(attachments: Attachment[], prompt: string): ContentBlock[] {
  const content: ContentBlock[] = [];
  const names = new Set<string>();
  attachments.forEach((attachment, i) => {
    const bytes = Buffer.from(attachment.base64, 'base64');
    const format = IMAGE_FORMATS[attachment.type];
    if (format) {
      content.push({ image: { format, source: { bytes } } });
      return;
    }
    const name = documentName(attachment.name, i + 1, names);
    names.add(name);
    content.push({ document: { format: 'pdf', name, source: { bytes } } });
  });
  content.push({ text: prompt });
  return content;
}

function inferenceConfig(call: ModelCall, warnings: string[]): NonNullable<ConverseCommandInput['inferenceConfig']> {
  const config: NonNullable<ConverseCommandInput['inferenceConfig']> = { maxTokens: call.maxTokens };
  if (call.temperature !== undefined) {
    if (call.temperature > MAX_TEMPERATURE) {
      warnings.push(`temperature ${call.temperature} is above this model's maximum of ${MAX_TEMPERATURE}; ${MAX_TEMPERATURE} was sent`);
    }
    config.temperature = Math.min(call.temperature, MAX_TEMPERATURE);
  }
  if (call.topP !== undefined) config.topP = call.topP;
  return config;
}

/** Structured output through one tool the model must call: its input is the answer. */
function respondTool(schema: Record<string, unknown>): ToolConfiguration {
  return {
    tools: [
      {
        toolSpec: {
          name: RESPOND_TOOL,
          description: 'Give your complete answer as the input of this tool. Its input schema is the required format of the answer.',
          inputSchema: { json: schema as ToolInputSchema.JsonMember['json'] },
        },
      },
    ],
    // Nova supports naming the tool (Nova user guide, "Choosing a tool": tool, any and auto).
    toolChoice: { tool: { name: RESPOND_TOOL } },
  };
}

/** Counts cache checkpoints; past Nova's maximum they are dropped with one warning. */
class CachePointBudget {
  private used = 0;
  private dropped = 0;
  constructor(private readonly warnings: string[]) {}
  take(): boolean {
    if (this.used < MAX_CACHE_POINTS) {
      this.used++;
      return true;
    }
    if (this.dropped++ === 0) this.warnings.push(`Only the first ${MAX_CACHE_POINTS} cache_control breakpoints were sent; the model takes no more`);
    return false;
  }
}
