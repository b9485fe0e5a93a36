import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import {
  creditRateProblem,
  DECIMAL,
  DEFAULT_CREDITS_PER_USD,
  DEFAULT_MARKUP,
  DIGITS,
  MAX_AUTHORIZER_CACHE_SECONDS,
  MAX_CREDIT_RATE,
  MAX_RATE_LIMIT_RPM,
  MAX_REQUESTS_IN_FLIGHT,
} from '../../shared/config.js';
import { MIN_REQUEST_DEADLINE_MS } from '../../shared/deadlines.js';
import { editDistance } from '../../shared/text/closest.js';
import { SettingsError } from './settings-error.js';
import { MIN_INTEGRATION_TIMEOUT, STREAM_IDLE_LIMIT, type GatewaySettings } from './gateway-stack.js';

/**
 * The CDK context keys the app reads (`cdk synth -c gateway:throttlingRateLimit=20`, or
 * "context" in cdk.json). Anything unset keeps the stack's default (DEFAULT_SETTINGS); any
 * other `gateway:` key is refused.
 */
export const CONTEXT_KEYS = {
  authorizerCacheTtlSeconds: 'gateway:authorizerCacheTtlSeconds',
  integrationTimeoutSeconds: 'gateway:integrationTimeoutSeconds',
  responseStreaming: 'gateway:responseStreaming',
  throttlingRateLimit: 'gateway:throttlingRateLimit',
  throttlingBurstLimit: 'gateway:throttlingBurstLimit',
  logRetentionDays: 'gateway:logRetentionDays',
  stageName: 'gateway:stageName',
  apiGatewayCloudWatchRole: 'gateway:apiGatewayCloudWatchRole',
  rateLimitRpm: 'gateway:rateLimitRpm',
  maxRequestsInFlight: 'gateway:maxRequestsInFlight',
  creditsPerUsd: 'gateway:creditsPerUsd',
  markup: 'gateway:markup',
  alarmEmail: 'gateway:alarmEmail',
} as const;

/** A context value (`-c gateway:…`) the app cannot read. */
export class ContextError extends SettingsError {
  override name = 'ContextError';
}

const RETENTION_VALUES = new Set<number>(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

/**
 * Refuses a `gateway:` key the app does not read, naming the known key nearest to it: a
 * mistyped key (`gateway:integrationTimeoutSecond`) would otherwise be ignored, and the stack
 * deployed with the default the operator meant to change.
 */
function refuseUnknownKeys(node: Node): void {
  const known: string[] = Object.values(CONTEXT_KEYS);
  for (const key of Object.keys(node.getAllContext() as Record<string, unknown>)) {
    if (!key.startsWith('gateway:') || known.includes(key)) continue;
    const nearest = known.reduce((best, candidate) =>
      editDistance(key.toLowerCase(), candidate.toLowerCase()) < editDistance(key.toLowerCase(), best.toLowerCase()) ? candidate : best,
    );
    throw new ContextError(`Unknown context key ${key}: did you mean ${nearest}? The app reads ${known.join(', ')}`);
  }
}

/** Settings from context; values from `-c` arrive as strings, values from cdk.json as JSON. */
export function settingsFromContext(node: Node): Partial<GatewaySettings> {
  refuseUnknownKeys(node);
  const read = (key: string): unknown => node.tryGetContext(key);
  const settings: Partial<GatewaySettings> = {};

  const ttl = integer(read(CONTEXT_KEYS.authorizerCacheTtlSeconds), CONTEXT_KEYS.authorizerCacheTtlSeconds, 0, MAX_AUTHORIZER_CACHE_SECONDS);
  if (ttl !== undefined) settings.authorizerCacheTtl = Duration.seconds(ttl);
  const timeout = integer(
    read(CONTEXT_KEYS.integrationTimeoutSeconds),
    CONTEXT_KEYS.integrationTimeoutSeconds,
    MIN_INTEGRATION_TIMEOUT.toSeconds(),
    STREAM_IDLE_LIMIT.toSeconds(),
    `REQUEST_DEADLINE_MS is 4 s less, and below ${MIN_REQUEST_DEADLINE_MS} ms it could leave the models no time after the reserve`,
  );
  if (timeout !== undefined) settings.integrationTimeout = Duration.seconds(timeout);
  settings.responseStreaming = boolean(read(CONTEXT_KEYS.responseStreaming), CONTEXT_KEYS.responseStreaming);
  settings.throttlingRateLimit = number(read(CONTEXT_KEYS.throttlingRateLimit), CONTEXT_KEYS.throttlingRateLimit);
  settings.throttlingBurstLimit = integer(
    read(CONTEXT_KEYS.throttlingBurstLimit),
    CONTEXT_KEYS.throttlingBurstLimit,
    1,
    Number.MAX_SAFE_INTEGER,
    'a burst of 0 has API Gateway throttle every request',
  );

  const retention = integer(read(CONTEXT_KEYS.logRetentionDays), CONTEXT_KEYS.logRetentionDays, 1);
  if (retention !== undefined) {
    if (!RETENTION_VALUES.has(retention)) {
      throw new ContextError(`${CONTEXT_KEYS.logRetentionDays} must be one of ${[...RETENTION_VALUES].join(', ')}, got ${retention}`);
    }
    settings.logRetention = retention as RetentionDays;
  }

  const stageName = read(CONTEXT_KEYS.stageName);
  if (stageName !== undefined) {
    if (typeof stageName !== 'string' || !/^[A-Za-z0-9_]{1,128}$/.test(stageName)) {
      throw new ContextError(`${CONTEXT_KEYS.stageName} must be letters, digits or underscores, got ${JSON.stringify(stageName)}`);
    }
    settings.stageName = stageName;
  }
  settings.apiGatewayCloudWatchRole = boolean(read(CONTEXT_KEYS.apiGatewayCloudWatchRole), CONTEXT_KEYS.apiGatewayCloudWatchRole);

  settings.rateLimitRpm = integer(read(CONTEXT_KEYS.rateLimitRpm), CONTEXT_KEYS.rateLimitRpm, 1, MAX_RATE_LIMIT_RPM);
  settings.maxRequestsInFlight = integer(read(CONTEXT_KEYS.maxRequestsInFlight), CONTEXT_KEYS.maxRequestsInFlight, 1, MAX_REQUESTS_IN_FLIGHT);
  // Their product bounded as CREDITS_PER_USD x MARKUP are (shared/config.ts MAX_CREDIT_RATE), refused here rather than by every cold start.
  settings.creditsPerUsd = number(read(CONTEXT_KEYS.creditsPerUsd), CONTEXT_KEYS.creditsPerUsd, MAX_CREDIT_RATE);
  settings.markup = number(read(CONTEXT_KEYS.markup), CONTEXT_KEYS.markup, MAX_CREDIT_RATE);
  const rateProblem = creditRateProblem(settings.creditsPerUsd ?? DEFAULT_CREDITS_PER_USD, settings.markup ?? DEFAULT_MARKUP, CONTEXT_KEYS);
  if (rateProblem) throw new ContextError(rateProblem);

  const email = read(CONTEXT_KEYS.alarmEmail);
  if (email !== undefined && email !== '') {
    if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
      throw new ContextError(`${CONTEXT_KEYS.alarmEmail} must be an email address, got ${JSON.stringify(email)}`);
    }
    settings.alarmEmail = email;
  }
  return settings;
}

function number(raw: unknown, key: string, max = Number.MAX_VALUE): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  // A `-c` value is a string: a decimal number only, as the environment's (not 0x10).
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw new ContextError(`${key} must be a positive number${max < Number.MAX_VALUE ? ` of at most ${max}` : ''}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function integer(raw: unknown, key: string, min: number, max = Number.MAX_SAFE_INTEGER, why?: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  // A `-c` value is a string: decimal digits only, as the environment's (not 0x10 or 1e3).
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && DIGITS.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ContextError(`${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}${why && Number.isInteger(value) && value < min ? `: ${why}` : ''}`);
  }
  return value;
}

function boolean(raw: unknown, key: string): boolean | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new ContextError(`${key} must be true or false, got ${JSON.stringify(raw)}`);
}
