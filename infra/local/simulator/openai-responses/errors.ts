/** The error bodies of the simulated Responses API: OpenAI's documented ones per status. */
import type { Json } from '../json.js';

const RATE_LIMITED: Json = {
  message: 'Rate limit reached for requests per min (RPM): Limit 10000, Used 10000, Requested 1. Please try again in 6ms.',
  type: 'requests',
  code: 'rate_limit_exceeded',
};
const BAD_KEY: Json = {
  message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
  type: 'invalid_request_error',
  code: 'invalid_api_key',
};
const OVERLOADED: Json = { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null };
const SERVER_ERROR: Json = { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null };

/** OpenAI's documented error body for a status: `{"error":{"message","type","param","code"}}`. */
export function responsesErrorBody(status: number): Json {
  const known = status === 429 ? RATE_LIMITED : status === 401 ? BAD_KEY : status === 503 ? OVERLOADED : status >= 500 ? SERVER_ERROR : undefined;
  const { message, type, code } = known ?? { message: `Simulated upstream error ${status}`, type: 'invalid_request_error', code: null };
  return { error: { message, type, param: null, code } };
}
