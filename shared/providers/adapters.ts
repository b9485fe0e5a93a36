import type { WireProtocol } from '../catalog/types.js';
import { lazyAsyncAtHand } from '../lazy.js';
import { anthropicLimits } from './anthropic-messages/limits.js';
import { converseLimits } from './bedrock-converse/limits.js';
import { generateContentLimits } from './gemini-generate-content/limits.js';
import { chatLimits } from './openai-chat/limits.js';
import { responsesLimits } from './openai-responses/limits.js';
import type { OutputLimits, PreparedCall, ProtocolAdapter } from './types.js';

/** The protocols' mapping and readers (shared/providers/protocols.ts), loaded once, with the first call of any protocol. */
const protocols = lazyAsyncAtHand(() => import('./protocols.js'));

type Protocols = Awaited<ReturnType<typeof protocols>>;

/**
 * The protocols whose bodies the gateway serialises itself (http.ts's jsonRequest), sending a
 * prompt's shared pieces (ModelCall.promptPieces) without a copy of their own; Bedrock's body
 * the AWS SDK serialises, from the whole prompt.
 */
export const SHARES_PROMPT_PIECES: ReadonlySet<WireProtocol> = new Set<WireProtocol>(['openai-chat', 'openai-responses', 'gemini-generate-content', 'anthropic-messages']);

/**
 * Every wire protocol's adapter; one folder each under shared/providers/. Its output limits
 * load with the gateway (the plan reads them before anything runs); the rest of it (request
 * mapping, answer and stream readers) loads with the first call, while that call's reserve
 * is in flight, so that a cold start compiles no protocol's mapping.
 */
export const ADAPTERS: Record<WireProtocol, ProtocolAdapter> = {
  'openai-chat': loadedOnFirstCall('openaiChat', chatLimits),
  'openai-responses': loadedOnFirstCall('openaiResponses', responsesLimits),
  'gemini-generate-content': loadedOnFirstCall('geminiGenerateContent', generateContentLimits),
  'anthropic-messages': loadedOnFirstCall('anthropicMessages', anthropicLimits),
  'bedrock-converse': loadedOnFirstCall('bedrockConverse', converseLimits),
};

/** The adapter `name` of protocols.ts, whose `prepare` loads that module on first use; once loaded, calls are prepared at once. */
function loadedOnFirstCall(name: keyof Protocols, limits: OutputLimits): ProtocolAdapter {
  return {
    ...limits,
    loading() {
      const module = protocols();
      return module instanceof Promise ? module : undefined;
    },
    prepare(call, endpoint, onDelta) {
      const module = protocols();
      if (!(module instanceof Promise)) return module[name].prepare(call, endpoint, onDelta);
      const prepared: Promise<PreparedCall> = module.then((loaded) => loaded[name].prepare(call, endpoint, onDelta));
      // Heard at once, so that a call never sent leaves no unhandled rejection; `send` rethrows it.
      prepared.catch(() => undefined);
      return { send: async (signal) => (await prepared).send(signal) };
    },
  };
}
