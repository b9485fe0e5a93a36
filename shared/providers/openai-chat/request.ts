import { breakpointsWarning } from '../cache-breakpoints.js';
import { strictMode } from '../strict-schema.js';
import type { ModelCall } from '../types.js';
import { dialectFor } from './dialects.js';
import type { ChatDialect } from './dialects.js';
import { toMessages } from './messages.js';
import type { ChatMessage } from './messages.js';
import { toSamplingFields } from './sampling.js';
import type { SamplingFields } from './sampling.js';
import { PROVIDER_NAMES } from '../../catalog/types.js';

export type { ChatMessage, ContentPart } from './messages.js';

export interface ChatRequest extends SamplingFields {
  model: string;
  messages: ChatMessage[];
  response_format?: { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict: boolean } };
  stream: boolean;
  stream_options?: { include_usage: true };
  /** The account the call is for (ModelCall.endUser), where the dialect takes it (ChatDialect.endUserField). */
  user?: string;
}

/** The gateway's call as a chat completions body in the vendor's dialect, and what could not be sent as asked. */
export function toChatRequest(call: ModelCall, dialect: ChatDialect = dialectFor(call.entry.provider)): { body: ChatRequest; warnings: string[] } {
  const native = call.responseSchema !== undefined && call.entry.capabilities.structuredOutput === 'native';
  const { fields, warnings } = toSamplingFields(call, dialect);
  const body: ChatRequest = {
    model: call.entry.upstreamModel,
    messages: toMessages(call, dialect, !native),
    ...fields,
    stream: false,
  };
  if (native && call.responseSchema) {
    // Groq's strict form (gpt-oss) is constrained decoding and refuses a schema with an optional
    // property; such a schema goes in its best-effort form (strict false), with a warning.
    const { strict, warning } = strictMode(call.responseSchema, call.entry.id, PROVIDER_NAMES[dialect.id]);
    if (warning) warnings.push(warning);
    body.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: call.responseSchema, strict } };
  }
  if (call.endUser !== undefined && dialect.endUserField) body.user = call.endUser;
  const cacheWarning = breakpointsWarning(call, PROVIDER_NAMES[dialect.id]);
  if (cacheWarning) warnings.push(cacheWarning);
  return { body, warnings };
}
