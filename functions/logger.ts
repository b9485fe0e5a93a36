import { Logger } from '@aws-lambda-powertools/logger';

/** POWERTOOLS_SERVICE_NAME as the stack sets it; also the `service` dimension of the metrics. */
export const SERVICE_NAME = 'model-compare-gateway';

/** JSON logs with the request ID; callers log metadata only (see shared/log.ts). */
export const logger = new Logger({ serviceName: SERVICE_NAME });
