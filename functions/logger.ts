import { Logger } from '@aws-lambda-powertools/logger';

/**
 * POWERTOOLS_SERVICE_NAME as the stack sets it (its `serviceName`, this by default); also the
 * `service` dimension of the metrics, which the VendorFailures alarm reads by it. Given to
 * Powertools, it would win over the variable: read from it, a stack that names another service
 * alarms on the metrics its functions publish.
 */
export const SERVICE_NAME = process.env.POWERTOOLS_SERVICE_NAME || 'model-compare-gateway';

/** JSON logs with the request ID; callers log metadata only (see shared/log.ts). */
export const logger = new Logger({ serviceName: SERVICE_NAME });
