import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { loadConfig } from '../shared/config.js';
import { createWorkflowTasks } from '../shared/workflow-tasks.js';
import { withProviderSecret } from '../shared/secrets/provider-keys.js';
import { lazyAsync } from '../shared/lazy.js';
import { logger } from './logger.js';
import { tracer } from './observability.js';
import { createGenerateHandler } from './workflow-handlers.js';

export { createGenerateHandler };

/** Provider keys from the secret, once per container (as for the `api` function). */
const lambdaTasks = lazyAsync(async () => createWorkflowTasks(await withProviderSecret(loadConfig(), { log: logger }), { log: logger }));

export const handler = createGenerateHandler(lambdaTasks)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(captureLambdaHandler(tracer, { captureResponse: false }));
