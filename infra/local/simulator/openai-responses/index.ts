/**
 * The simulated OpenAI Responses API: `POST /{provider}/v1/responses`. Validates the request
 * like OpenAI (validate.ts: the message input items, content parts, sampling and reasoning
 * settings per model family, strict json_schema formats), answers in the exact Responses
 * object shape with deterministic content (answer.ts) or its stream (stream.ts), and reports
 * usage as OpenAI does: reasoning tokens inside output_tokens, automatic prefix caching
 * inside input_tokens.
 */
import { bodyText, servedAt } from '../handler-parts.js';
import { openAiHeaders, simulatedOpenAiError } from '../openai-chat/errors.js';
import { simulatedOpenAiChat } from '../openai-chat/index.js';
import type { ProtocolHandler, Reply } from '../types.js';
import { seenPrefixes } from './answer.js';
import { responsesErrorBody } from './errors.js';
import { simulatedResponsesStream } from './stream.js';
import { validateResponses } from './validate.js';

export { familyOf } from './family.js';

/** The protocol module registered by the simulator server. */
export const simulatedOpenAiResponses: ProtocolHandler = {
  // reset(): a cold prompt cache again.
  ...servedAt('openai-responses', '/v1/responses', simulatedResponsesStream, () => seenPrefixes.clear()),
  authorize: (headers) => simulatedOpenAiChat.authorize(headers),
  prepare: (body) => validateResponses(body),
  // OpenAI's 404 for a model it no longer serves (as for gpt-4-turbo-preview, pinkpixel-dev/comfyui-llm-prompt-enhancer#1).
  shutDown: (model) => simulatedOpenAiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found'),
  invalidJson: () => simulatedOpenAiChat.invalidJson(),

  vendorError(status: number, retryAfter: string | undefined, body: unknown): Reply {
    const headers = openAiHeaders(0);
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    return { status, headers, body: body === undefined ? JSON.stringify(responsesErrorBody(status)) : bodyText(body) };
  },
};
