import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/** Balances are integer micro-credits in storage (1 credit = 1,000,000). */
export interface Account {
  accountId: string;
  balanceMicro: number;
  /** Default for `zero_data_retention` when a request does not set it. */
  zeroDataRetention: boolean;
  /** Requests per minute; unset means the gateway default (RATE_LIMIT_RPM). */
  rateLimitRpm?: number;
  createdAt: string;
}

export class AccountMissingError extends Error {
  override name = 'AccountMissingError';
  constructor(readonly accountId: string) {
    super(`Account ${accountId} does not exist`);
  }
}

export class BalanceTooLowError extends Error {
  override name = 'BalanceTooLowError';
  constructor(readonly accountId: string, readonly requestedMicro: number, options?: { cause?: unknown }) {
    super(`Balance of ${accountId} is below ${requestedMicro} micro-credits`, options);
  }
}

export class AccountsRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(input: { balanceMicro: number; zeroDataRetention?: boolean; rateLimitRpm?: number; accountId?: string }): Promise<Account> {
    const account: Account = {
      accountId: input.accountId ?? `acct_${randomUUID().replaceAll('-', '')}`,
      balanceMicro: input.balanceMicro,
      zeroDataRetention: input.zeroDataRetention ?? false,
      rateLimitRpm: input.rateLimitRpm,
      createdAt: new Date().toISOString(),
    };
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: account,
        // Never overwrite an account (and its balance) by reusing an ID.
        ConditionExpression: 'attribute_not_exists(accountId)',
      }),
    );
    return account;
  }

  async get(accountId: string): Promise<Account | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { accountId }, ConsistentRead: true }),
    );
    return Item as Account | undefined;
  }

  /** Adds credits; returns the new balance. */
  async topUp(accountId: string, amountMicro: number): Promise<number> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { accountId },
          UpdateExpression: 'ADD balanceMicro :amount',
          // Top-ups go to existing accounts only; ADD would otherwise create one.
          ConditionExpression: 'attribute_exists(accountId)',
          ExpressionAttributeValues: { ':amount': amountMicro },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.balanceMicro);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new AccountMissingError(accountId);
      throw error;
    }
  }

  /**
   * Takes `amountMicro` from the balance in one conditional write; returns the new balance.
   * Throws BalanceTooLowError when the balance does not cover it (nothing changes then).
   */
  async deduct(accountId: string, amountMicro: number): Promise<number> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { accountId },
          UpdateExpression: 'SET balanceMicro = balanceMicro - :amount',
          // The balance never goes below zero: concurrent deductions cannot overspend it.
          ConditionExpression: 'attribute_exists(accountId) AND balanceMicro >= :amount',
          ExpressionAttributeValues: { ':amount': amountMicro },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.balanceMicro);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new BalanceTooLowError(accountId, amountMicro, { cause: error });
      throw error;
    }
  }

  async setRateLimit(accountId: string, rateLimitRpm: number): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { accountId },
        UpdateExpression: 'SET rateLimitRpm = :rpm',
        ConditionExpression: 'attribute_exists(accountId)',
        ExpressionAttributeValues: { ':rpm': rateLimitRpm },
      }),
    );
  }
}
