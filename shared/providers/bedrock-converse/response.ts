import { unusableAnswer, vendorWord } from '../errors.js';
import type { ModelReply, Usage } from '../types.js';
import { RESPOND_TOOL } from './request.js';

interface ConverseUsage {
  inputTokens?: unknown;
  outputTokens?: unknown;
  totalTokens?: unknown;
  cacheReadInputTokens?: unknown;
  cacheWriteInputTokens?: unknown;
}

interface ConverseBlock {
  text?: unknown;
  toolUse?: { name?: unknown; input?: unknown } | null;
}

/** The Converse answer as the SDK returns it (the documented JSON body, plus `$metadata`). */
export interface ConverseAnswer {
  output?: { message?: { role?: unknown; content?: unknown } | null } | null;
  stopReason?: unknown;
  usage?: ConverseUsage | null;
}

/** Stop reasons where the vendor withheld the answer. */
const BLOCKED: ReadonlySet<string> = new Set(['guardrail_intervened', 'content_filtered']);
/** Stop reasons where what came back cannot be used as an answer. */
const MALFORMED: ReadonlySet<string> = new Set(['malformed_model_output', 'malformed_tool_use']);
/** Stop reasons of an answer cut short (max_tokens: cutAtMaxTokens); any other but those that end it is named in a warning. */
const CUT: ReadonlyMap<string, string> = new Map([['model_context_window_exceeded', "The output was cut at the model's context window"]]);
/** Stop reasons of an answer that ended as the model meant it to (tool_use: the forced `respond` tool). */
const ENDED: ReadonlySet<string> = new Set(['end_turn', 'stop_sequence', 'tool_use', 'max_tokens']);

/**
 * A Converse answer as the gateway's reply. With a forced `respond` tool the output is that
 * tool's input as JSON text; otherwise the text blocks joined. Usage is dropped when absent
 * or inconsistent.
 */
export function fromConverseResponse(body: unknown, forcedTool: boolean): ModelReply {
  const answer = (body ?? {}) as ConverseAnswer;
  const stopReason = vendorWord(answer.stopReason);
  // An answer with nothing to show, billed the usage reported with it.
  const unusable = (code: Parameters<typeof unusableAnswer>[0], message: string) => unusableAnswer(code, message, answer.usage, { usage: toUsage(answer.usage) });
  if (stopReason && BLOCKED.has(stopReason)) throw unusable('upstream_blocked', `The provider withheld the answer (${stopReason})`);
  if (stopReason && MALFORMED.has(stopReason)) throw unusable('upstream_malformed_response', `The model produced an answer the provider could not use (${stopReason})`);
  const content = answer.output?.message?.content;
  const blocks = Array.isArray(content) ? (content as ConverseBlock[]).filter((b) => typeof b === 'object' && b !== null) : [];
  const texts = blocks.filter((b) => typeof b.text === 'string').map((b) => b.text as string);
  const toolUse = blocks.find((b) => b.toolUse?.name === RESPOND_TOOL)?.toolUse ?? blocks.find((b) => b.toolUse)?.toolUse;
  // A message of no content that ends its turn, or that its limit cut (max_tokens, the context
  // window), is an answer of no text, as other vendors': billed, charged as any. Without one for
  // another stop reason: a failure, charged the usage reported with it.
  const ended = stopReason === 'end_turn' || stopReason === 'max_tokens' || (stopReason !== undefined && CUT.has(stopReason));
  if (texts.length === 0 && !toolUse && !(ended && Array.isArray(content))) {
    throw unusable('upstream_malformed_response', 'The provider answered without a message');
  }

  const warnings: string[] = [];
  let output: string;
  if (forcedTool && toolUse) {
    output = JSON.stringify(toolUse.input ?? {});
  } else {
    if (forcedTool) warnings.push(`The model answered in text instead of calling the ${RESPOND_TOOL} tool`);
    output = texts.join('');
  }
  const cut = stopReason === undefined || ENDED.has(stopReason) ? undefined : (CUT.get(stopReason) ?? `The provider ended the output with stopReason ${stopReason}`);
  if (cut) warnings.push(cut);
  const usage = toUsage(answer.usage);
  return { output, usage, finishReason: stopReason, ...(stopReason === 'max_tokens' ? { cutAtMaxTokens: true } : {}), ...(cut ? { cutShort: true as const } : {}), warnings };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** An optional count: 0 when absent, undefined when present but not a count. */
function optionalCount(value: unknown): number | undefined {
  return value === undefined || value === null ? 0 : count(value);
}

/**
 * Bedrock's `inputTokens` counts only the input neither read from nor written to the cache;
 * reads and writes come apart (Bedrock prompt caching: total input = inputTokens +
 * cacheReadInputTokens + cacheWriteInputTokens). The gateway's inputTokens counts all three.
 * Converse counts any reasoning inside outputTokens, never apart: no reasoningTokens.
 */
export function toUsage(usage: ConverseUsage | null | undefined): Usage | undefined {
  if (!usage) return undefined;
  const fresh = count(usage.inputTokens);
  const outputTokens = count(usage.outputTokens);
  const cachedInputTokens = optionalCount(usage.cacheReadInputTokens);
  const cacheWriteTokens = optionalCount(usage.cacheWriteInputTokens);
  if (fresh === undefined || outputTokens === undefined || cachedInputTokens === undefined || cacheWriteTokens === undefined) return undefined;
  // A total below the uncached input plus the output means the numbers cannot be priced.
  if (usage.totalTokens !== undefined && usage.totalTokens !== null) {
    const total = count(usage.totalTokens);
    if (total === undefined || total < fresh + outputTokens) return undefined;
  }
  return { inputTokens: fresh + cachedInputTokens + cacheWriteTokens, cachedInputTokens, cacheWriteTokens, outputTokens };
}
