import type { WireProtocol } from '../catalog/types.js';
import { lazyAsync } from '../lazy.js';
import { anthropicLimits } from './anthropic-messages/limits.js';
import { converseLimits } from './bedrock-converse/limits.js';
import { generateContentLimits } from './gemini-generate-content/limits.js';
import { chatLimits } from './openai-chat/limits.js';
import { responsesLimits } from './openai-responses/limits.js';
import type { OutputLimits, PreparedCall, ProtocolAdapter } from './types.js';

/** The protocols' mapping and readers (shared/providers/protocols.ts), loaded once, with the first call of any protocol. */
const protocols = lazyAsync(() => import('./protocols.js'));

/**
 * Every wire protocol's adapter; one folder each under shared/providers/. Its output limits
 * load with the gateway (the plan reads them before anything runs); the rest of it (request
 * mapping, answer and stream readers) loads with the first call, while that call's reserve
 * is in flight, so that a cold start compiles no protocol's mapping.
 */
export const ADAPTERS: Record<WireProtocol, ProtocolAdapter> = {
  'openai-chat': loadedOnFirstCall(async () => (await protocols()).openaiChat, chatLimits),
  'openai-responses': loadedOnFirstCall(async () => (await protocols()).openaiResponses, responsesLimits),
  'gemini-generate-content': loadedOnFirstCall(async () => (await protocols()).geminiGenerateContent, generateContentLimits),
  'anthropic-messages': loadedOnFirstCall(async () => (await protocols()).anthropicMessages, anthropicLimits),
  'bedrock-converse': loadedOnFirstCall(async () => (await protocols()).bedrockConverse, converseLimits),
};

/** An adapter whose `prepare` loads its module on first use; once loaded, calls are prepared at once. */
function loadedOnFirstCall(load: () => Promise<ProtocolAdapter>, limits: OutputLimits): ProtocolAdapter {
  let loaded: ProtocolAdapter | undefined;
  const loading = lazyAsync(async () => {
    loaded = await load();
    return loaded;
  });
  return {
    ...limits,
    prepare(call, endpoint, onDelta) {
      if (loaded) return loaded.prepare(call, endpoint, onDelta);
      const prepared: Promise<PreparedCall> = loading().then((adapter) => adapter.prepare(call, endpoint, onDelta));
      // Heard at once, so that a call never sent leaves no unhandled rejection; `send` rethrows it.
      prepared.catch(() => undefined);
      return { send: async (signal) => (await prepared).send(signal) };
    },
  };
}
