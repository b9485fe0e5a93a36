import type { Attachment } from '../../contract/types.js';
import { breakpointsWarning } from '../cache-breakpoints.js';
import { schemaInstruction } from '../structured-output.js';
import type { ModelCall } from '../types.js';
import { MIN_OUTPUT_TOKENS, responsesOutputLimit } from './limits.js';
import { leastEffort, samplingSupport } from './sampling.js';
import { strictMode } from '../strict-schema.js';

export type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }
  | { type: 'input_file'; filename: string; file_data: string };

/**
 * `EasyInputMessage`: history turns keep their text as a string, which every role accepts. The
 * system prompt is the first, a `developer` message, not `instructions`: OpenAI repeats
 * `instructions` in every response object it sends (three times in a stream, each in one
 * event), which a system prompt of megabytes would take past the stream's event cap, and
 * never the input.
 */
export interface InputMessage {
  role: 'developer' | 'user' | 'assistant';
  content: string | InputPart[];
}

export type ReasoningEffort = 'none' | 'low' | 'medium' | 'high';

export interface ResponsesRequest {
  model: string;
  input: InputMessage[];
  max_output_tokens: number;
  temperature?: number;
  top_p?: number;
  reasoning?: { effort: ReasoningEffort };
  text?: { format: { type: 'json_schema'; name: 'response'; schema: Record<string, unknown>; strict: boolean } };
  /** Never stored for later retrieval: the gateway keeps no conversation state at OpenAI. */
  store: false;
  stream: boolean;
  /** The account the call is for (ModelCall.endUser): at most 64 characters. */
  safety_identifier?: string;
}

/** The gateway's call as a Responses API body, with a warning for every setting not sent as asked. */
export function toResponsesRequest(call: ModelCall): { body: ResponsesRequest; warnings: string[] } {
  const { entry } = call;
  const warnings: string[] = [];
  const native = call.responseSchema !== undefined && entry.capabilities.structuredOutput === 'native';

  const body: ResponsesRequest = {
    model: entry.upstreamModel,
    input: [...call.history.map(historyMessage), { role: 'user', content: promptParts(call.prompt, call.attachments) }],
    max_output_tokens: responsesOutputLimit(call),
    store: false,
    stream: false,
  };
  if (call.endUser !== undefined) body.safety_identifier = call.endUser;
  if (call.maxTokens < MIN_OUTPUT_TOKENS) {
    warnings.push(`maxTokens ${call.maxTokens} is below the OpenAI Responses minimum; ${MIN_OUTPUT_TOKENS} was sent`);
  }

  const instructions = call.system.map((block) => block.text);
  if (call.responseSchema && !native) instructions.push(schemaInstruction(call.responseSchema));
  if (instructions.length > 0) body.input.unshift({ role: 'developer', content: instructions.join('\n\n') });

  if (call.tuning.reasoningEffort !== undefined) body.reasoning = { effort: effortSent(call, call.tuning.reasoningEffort, warnings) };
  Object.assign(body, sampling(call, body.reasoning?.effort, warnings));
  if (native && call.responseSchema) {
    const { strict, warning } = strictMode(call.responseSchema, entry.id, 'OpenAI');
    if (warning) warnings.push(warning);
    body.text = { format: { type: 'json_schema', name: 'response', schema: call.responseSchema, strict } };
  }
  const cacheWarning = breakpointsWarning(call, 'OpenAI');
  if (cacheWarning) warnings.push(cacheWarning);
  return { body, warnings };
}

const EFFORTS: readonly ReasoningEffort[] = ['none', 'low', 'medium', 'high'];

/** The effort asked, or the least the model takes where that is more (the `-pro` variants), with a warning. */
function effortSent(call: ModelCall, asked: ReasoningEffort, warnings: string[]): ReasoningEffort {
  const least = leastEffort(call.entry.upstreamModel);
  if (least === undefined || EFFORTS.indexOf(asked) >= EFFORTS.indexOf(least)) return asked;
  warnings.push(`reasoningEffort ${asked} was sent as ${least}: OpenAI takes ${least} or more for ${call.entry.upstreamModel}`);
  return least;
}

/** temperature and top_p under OpenAI's rule for reasoning models (see sampling.ts); `effort`: the one sent, which for a -pro model may be more than the one asked. */
function sampling(call: ModelCall, effort: ReasoningEffort | undefined, warnings: string[]): Pick<ResponsesRequest, 'temperature' | 'top_p' | 'reasoning'> {
  const requested: [name: string, key: 'temperature' | 'top_p', value: number | undefined][] = [
    ['temperature', 'temperature', call.temperature],
    ['topP', 'top_p', call.topP],
  ];
  const present = requested.filter(([, , value]) => value !== undefined);
  if (present.length === 0) return {};
  const support = samplingSupport(call.entry, call.tuning);
  if (support === 'rejected') {
    const why = effort === undefined ? 'is a reasoning model' : `reasons at effort ${effort}`;
    for (const [name] of present) warnings.push(`${name} was not sent: ${call.entry.id} ${why}, and OpenAI rejects sampling settings then`);
    return {};
  }
  const out: Pick<ResponsesRequest, 'temperature' | 'top_p' | 'reasoning'> = {};
  for (const [, key, value] of present) out[key] = value;
  if (support === 'with-effort-none') out.reasoning = { effort: 'none' };
  return out;
}

function historyMessage(turn: ModelCall['history'][number]): InputMessage {
  return { role: turn.role, content: turn.content };
}

function promptParts(prompt: string, attachments: Attachment[]): InputPart[] {
  const parts: InputPart[] = [{ type: 'input_text', text: prompt }];
  for (const attachment of attachments) {
    const dataUrl = `data:${attachment.type};base64,${attachment.base64}`;
    parts.push(
      attachment.type === 'application/pdf' ? { type: 'input_file', filename: attachment.name, file_data: dataUrl } : { type: 'input_image', image_url: dataUrl, detail: 'auto' },
    );
  }
  return parts;
}
