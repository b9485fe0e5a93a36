import { ConditionalCheckFailed, type DocumentClient } from './dynamodb.js';

const WINDOW_MS = 60_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Requests per minute per account: a fixed one-minute window counter, incremented with
 * one conditional write. Windows expire through TTL an hour after they end.
 */
export class RateLimitsRepository {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  async take(accountId: string, limitPerMinute: number, now = Date.now()): Promise<RateDecision> {
    const windowStart = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: { windowKey: `${accountId}#${windowStart}` },
        UpdateExpression: 'ADD requests :one SET expiresAt = :expiresAt',
        // The window admits at most `limit` requests, however many arrive at once.
        ConditionExpression: 'attribute_not_exists(requests) OR requests < :limit',
        ExpressionAttributeValues: { ':one': 1, ':limit': limitPerMinute, ':expiresAt': Math.ceil((windowStart + WINDOW_MS) / 1000) + 3600 },
      });
      return { allowed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailed)) throw error;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)) };
    }
  }
}
