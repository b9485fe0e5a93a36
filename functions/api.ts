import { loadConfig } from '../shared/config.js';
import { createGateway } from '../shared/gateway.js';
import { withProviderSecret } from '../shared/secrets/provider-keys.js';
import { createApiHandler } from './api-handler.js';
import { lazyAsync } from '../shared/lazy.js';
import { logger } from './logger.js';
import { apiHooks, observability, traceCalls } from './observability.js';

export { createApiHandler } from './api-handler.js';

/** The provider keys come from the secret once per container; a failed read is retried on the next invocation. */
const lambdaGateway = lazyAsync(async () => {
  const config = await withProviderSecret(loadConfig(), { log: logger });
  const gateway = createGateway(config, { log: logger });
  gateway.documentClient.instrument(traceCalls(observability.tracer));
  return gateway;
});

export const handler = createApiHandler(lambdaGateway, logger, apiHooks(observability));
