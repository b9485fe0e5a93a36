import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Logger } from '@aws-lambda-powertools/logger';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';

/**
 * The cold-start floor (benchmark 5): a Lambda entry that only imports and constructs
 * what the `api` function's dependencies are (the same SDK clients and commands, Middy
 * and its parsers, Powertools' logger, metrics and tracer), bundled as the functions are.
 * Its import time is what the gateway's own code adds to, not something it could remove.
 * The Secrets Manager client is left out: the api loads it with its first secret read, not
 * at a cold start.
 */
const logger = new Logger({ serviceName: 'floor' });
const metrics = new Metrics({ serviceName: 'floor' });
const tracer = new Tracer({ serviceName: 'floor' });
const store = DynamoDBDocumentClient.from(new DynamoDBClient({ region: process.env.AWS_REGION ?? 'us-east-1' }), { marshallOptions: { removeUndefinedValues: true } });
const commands = [GetCommand, PutCommand, UpdateCommand];

export const handler = middy(async () => ({ statusCode: 200, body: String(commands.length + Number(Boolean(store))) }))
  .use(injectLambdaContext(logger))
  .use(captureLambdaHandler(tracer))
  .use(logMetrics(metrics))
  .use(httpHeaderNormalizer())
  .use(httpJsonBodyParser());
