import { shownUrl, TABLE_VARIABLES, type GatewayConfig, type TableNames } from '../../shared/config.js';
import type { StoreClient } from '../../shared/storage/dynamodb.js';
import { awsAccessRefusal, isUnreadableAnswer, sdkCredentialsReason } from './aws-access.js';
import { TABLE_OUTPUTS } from './deployed-tables.js';

/**
 * What the admin CLI tells an operator whose configuration sends its store calls astray,
 * rather than the SDK's error (`ResourceNotFoundException: Requested resource not found`,
 * which reads like a missing account; `Unknown: UnknownError`; CredentialsProviderError),
 * each an internal_error before. cli.ts gives each its code and exit status.
 */

/** A table the store does not hold: the name is the configuration's (a usage error). */
export class TableNotFoundError extends Error {
  override name = 'TableNotFoundError';
}

/** The endpoint answered, but not as DynamoDB does (another server, such as the gateway's own API): the store is not there. */
export class NotAStoreError extends Error {
  override name = 'NotAStoreError';
}

/** The AWS credential chain found nothing to sign the store calls with. */
export class NoCredentialsError extends Error {
  override name = 'NoCredentialsError';
}

export type StoreErrorConfig = Pick<GatewayConfig, 'tables' | 'tablesFromEnv' | 'dynamodbEndpoint' | 'awsEndpoints' | 'region'>;

/** Where the store calls go, as the operator set it. */
export function describeStore(config: StoreErrorConfig): string {
  if (config.dynamodbEndpoint !== undefined) return `the store at ${shownUrl(config.dynamodbEndpoint)} (DYNAMODB_ENDPOINT)`;
  if (config.awsEndpoints.dynamodb !== undefined) return `the store at ${shownUrl(config.awsEndpoints.dynamodb)} (AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL)`;
  return `DynamoDB in ${config.region}`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The error the CLI reports for `error`, a store call's on `table`; `error` itself when it is none of these. */
export function explainStoreError(error: unknown, command: string, table: string | undefined, config: StoreErrorConfig): unknown {
  const e = error as { name?: string; message?: string };
  if (e?.name === 'ResourceNotFoundException' && table !== undefined) {
    const key = (Object.keys(config.tables) as (keyof TableNames)[]).find((k) => config.tables[k] === table);
    const variable = key ? TABLE_VARIABLES[key] : 'a *_TABLE variable';
    const output = key ? TABLE_OUTPUTS[key] : '<Table>TableName';
    const fix = config.tablesFromEnv
      ? config.dynamodbEndpoint !== undefined
        ? `set ${variable} to a table this store holds, or unset the *_TABLE variables for the tables npm start makes`
        : `set ${variable} to the table's name (the stack's ${output} output), or unset every *_TABLE variable to read the names from the deployed stack`
      : config.dynamodbEndpoint !== undefined
        ? 'is DYNAMODB_ENDPOINT the store npm start prints?'
        : `the deployed stack's ${output} output names it: was the table deleted outside the stack?`;
    return new TableNotFoundError(`No table "${table}" (${variable}) in ${describeStore(config)}: ${fix}`, { cause: error });
  }
  if (isUnreadableAnswer(error)) {
    const status = error.$metadata.httpStatusCode;
    return new NotAStoreError(
      `${capitalized(describeStore(config))} did not answer ${command.replace(/Command$/, '')} as DynamoDB does${status ? ` (HTTP ${status})` : ''}: is it a DynamoDB endpoint${config.dynamodbEndpoint !== undefined ? ' (the store npm start prints, not the API)' : ''}?`,
      { cause: error },
    );
  }
  const refused = awsAccessRefusal(error, `${command.replace(/Command$/, '')}${table !== undefined ? ` on table "${table}"` : ''} in ${describeStore(config)}`);
  if (refused) return refused;
  if (e?.name === 'CredentialsProviderError') {
    return new NoCredentialsError(
      `No AWS credentials to call ${describeStore(config)} with (${sdkCredentialsReason(error)}): set AWS credentials (a profile, SSO, the environment) for the deployed tables, or DYNAMODB_ENDPOINT for a local store (npm start prints it)`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Every later call of `client` has its error explained (explainStoreError): a step of the
 * SDK's own middleware stack, outside its retries, which sees each command's input and name.
 */
export function explainStoreErrors(client: StoreClient, config: StoreErrorConfig): void {
  for (const sdk of [client.items, client.documents]) {
    sdk.middlewareStack.add(
      (next, context) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          throw explainStoreError(error, String(context.commandName ?? ''), (args.input as { TableName?: string }).TableName, config);
        }
      },
      { step: 'initialize', name: 'adminStoreErrors', override: true },
    );
  }
}
