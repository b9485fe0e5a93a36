import { Logger } from '@aws-lambda-powertools/logger';

/** JSON logs with the request ID; callers log metadata only (see shared/log.ts). */
export const logger = new Logger({ serviceName: 'model-compare-gateway' });
