import { loadConfig, responseStreaming, type GatewayConfig } from '../shared/config.js';
import { createGateway, type Gateway } from '../shared/gateway.js';
import type { Log } from '../shared/log.js';
import { withProviderSecret } from '../shared/secrets/provider-keys.js';
import { instrumentStore } from '../shared/storage/dynamodb.js';
import { createApiHandler } from './api-handler.js';
import { lazy } from '../shared/lazy.js';
import { logger } from './logger.js';
import { apiHooks, observability, traceCalls } from './observability.js';
import { bufferAnswers, streamAnswers } from './stream-answer.js';

export { createApiHandler } from './api-handler.js';

/**
 * The function's gateway, built once per container. The provider keys come from the
 * secret, read by the first request without judges while its reserve is in flight,
 * instead of before it: a cold start waits for one of the two round trips, not both. A
 * failed read is a 503, retried by the next request.
 */
export function createLambdaGateway(config: GatewayConfig, log: Log = logger): Gateway {
  return createGateway(config, { log, withKeys: (unkeyed) => withProviderSecret(unkeyed, { log }) });
}

const lambdaGateway = lazy(() => {
  const gateway = createLambdaGateway(loadConfig());
  instrumentStore(gateway.storeClient, traceCalls(observability.tracer));
  return gateway;
});

const api = createApiHandler(lambdaGateway, logger, apiHooks(observability));

/**
 * Streamed (API Gateway's STREAM transfer mode): the answer leaves before the settle and
 * the logs are written. Buffered when the stack says so (RESPONSE_STREAMING=false, for
 * emulators that cannot stream): the answer is returned once they are written.
 */
export const handler = responseStreaming() ? streamAnswers(api, logger) : bufferAnswers(api, logger);
