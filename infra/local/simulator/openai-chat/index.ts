/**
 * The simulated OpenAI-compatible chat completions protocol:
 * `POST /{provider}/v1/chat/completions`. Validates the OpenAI request shape in the
 * dialect of the model's vendor (validate.ts, dialects.ts), answers in the exact
 * `chat.completion` shape with deterministic content (answer.ts) or its stream
 * (stream.ts), and shapes errors like the vendor does (errors.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bodyText, servedAt } from '../handler-parts.js';
import type { Prepared, ProtocolHandler, Reply } from '../types.js';
import { chatVendorOf, VENDORS } from './dialects.js';
import { openAiHeaders, simulatedOpenAiError } from './errors.js';
import { simulatedChatStream } from './stream.js';
import { validateChat } from './validate.js';

export { THINKING_OPENING } from './answer.js';

/** The protocol module registered by the simulator server. */
export const simulatedOpenAiChat: ProtocolHandler = {
  ...servedAt('openai-chat', '/v1/chat/completions', simulatedChatStream),

  authorize(headers: IncomingHttpHeaders): Reply | undefined {
    const auth = headers.authorization;
    if (auth === undefined || /^Bearer +\S/.test(auth)) return undefined;
    return simulatedOpenAiError(401, 'Invalid authorization header: expected "Bearer <api key>".', 'invalid_request_error', null, 'invalid_api_key');
  },

  prepare(body: unknown, _rest: string, provider?: string): Prepared {
    return validateChat(body, provider);
  },

  shutDown: (model, provider) => VENDORS[chatVendorOf(model, provider)].shutDown?.(model),

  invalidJson(): Reply {
    return simulatedOpenAiError(
      400,
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload.)",
      'invalid_request_error',
    );
  },

  vendorError(status: number, retryAfter: string | undefined, body: unknown, target?: { provider: string; model: string }): Reply {
    const reply = body === undefined ? VENDORS[chatVendorOf(target?.model ?? '', target?.provider)].fault(status) : { status, headers: openAiHeaders(0), body: bodyText(body) };
    if (retryAfter !== undefined) reply.headers['retry-after'] = retryAfter;
    return reply;
  },
};
