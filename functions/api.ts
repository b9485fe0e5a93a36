import { loadConfig, responseStreaming } from '../shared/config.js';
import { createGateway } from '../shared/gateway.js';
import { withProviderSecret } from '../shared/secrets/provider-keys.js';
import { instrumentStore } from '../shared/storage/dynamodb.js';
import { createApiHandler } from './api-handler.js';
import { lazyAsync } from '../shared/lazy.js';
import { logger } from './logger.js';
import { apiHooks, observability, traceCalls } from './observability.js';
import { bufferAnswers, streamAnswers } from './stream-answer.js';

export { createApiHandler } from './api-handler.js';

/** The provider keys come from the secret once per container; a failed read is retried on the next invocation. */
const lambdaGateway = lazyAsync(async () => {
  const config = await withProviderSecret(loadConfig(), { log: logger });
  const gateway = createGateway(config, { log: logger });
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
