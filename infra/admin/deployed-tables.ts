import type { CloudFormationClient, Stack } from '@aws-sdk/client-cloudformation';
import { shownUrl, type GatewayConfig, type TableNames } from '../../shared/config.js';
import { DEFAULT_STACK_NAME } from '../stack/stack-name.js';
import { awsAccessRefusal, isUnreadableAnswer, sdkCredentialsReason } from './aws-access.js';

/**
 * The CloudFormation output that names each table (infra/stack/data.ts `tableNameOutputId`,
 * spelled out here so that the CLI does not load aws-cdk-lib; a test keeps both equal).
 */
export const TABLE_OUTPUTS: Readonly<Record<keyof TableNames, string>> = {
  accounts: 'AccountsTableName',
  apiKeys: 'ApiKeysTableName',
  ledger: 'LedgerTableName',
  idempotency: 'IdempotencyTableName',
  promptLogs: 'PromptLogsTableName',
};

/**
 * Node's codes for a request that found no server to reach (no such name, nothing listening,
 * no route, no answer to the connection's opening: ETIMEDOUT, a mistyped address or a
 * firewall): not a connection that broke after it was made, which may pass.
 */
const NETWORK_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

/** The stack is missing, lacks an output, or could not be reached: the message says what to set or deploy. */
export class DeployedStackError extends Error {
  override name = 'DeployedStackError';
}

export interface DeployedTablesOptions {
  stackName: string;
  region: string;
  /** Where the region came from (`from profile ops`, `from AWS_REGION`), said when the stack is not found there. */
  regionFrom?: string;
  /** AWS_ENDPOINT_URL_CLOUDFORMATION or AWS_ENDPOINT_URL (LocalStack); by default the region's. */
  endpoint?: string;
  /** A client to use (tests); otherwise one is made for `region` and destroyed after the call. */
  client?: CloudFormationClient;
}

/** The deployed stack's table names, from its outputs (DescribeStacks). The SDK is loaded on first use. */
export async function deployedTableNames(options: DeployedTablesOptions): Promise<TableNames> {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const client = options.client ?? new CloudFormationClient({ region: options.region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) });
  const endpoint = options.endpoint === undefined ? undefined : shownUrl(options.endpoint);
  const where = `stack ${options.stackName} in ${options.region}${options.regionFrom ? ` (${options.regionFrom})` : ''}`;
  // Some other server at the endpoint (the gateway's API, the local store): its answer is no CloudFormation's.
  const notCloudFormation = (status: number | undefined, cause?: unknown) =>
    new DeployedStackError(
      `${endpoint ?? `The ${options.region} endpoint`} did not answer DescribeStacks of the ${where} as CloudFormation does${status ? ` (HTTP ${status})` : ''}: is AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_CLOUDFORMATION) a CloudFormation endpoint, a LocalStack? For a local store set DYNAMODB_ENDPOINT (npm start prints it)`,
      { cause },
    );
  try {
    let stacks: Stack[] | undefined;
    try {
      ({ Stacks: stacks } = await client.send(new DescribeStacksCommand({ StackName: options.stackName })));
    } catch (error) {
      // CloudFormation answers an unknown stack with a ValidationError "Stack with id X does not exist".
      if ((error as Error).name === 'ValidationError' && /does not exist/i.test((error as Error).message)) {
        throw new DeployedStackError(
          `No ${where}: deploy it (npx cdk deploy), or set GATEWAY_STACK_NAME and AWS_REGION, or the *_TABLE variables, or DYNAMODB_ENDPOINT for a local store`,
          { cause: error },
        );
      }
      // No credentials at all: most likely an operator who meant the local store.
      if ((error as Error).name === 'CredentialsProviderError') {
        throw new DeployedStackError(
          `No AWS credentials to read the ${where} with (${sdkCredentialsReason(error)}): set DYNAMODB_ENDPOINT for a local store (npm start prints it), or AWS credentials (a profile, SSO, the environment) for the deployed stack`,
          { cause: error },
        );
      }
      // CloudFormation not reached (no network, a LocalStack not running): said as where it was looked for.
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && NETWORK_CODES.has(code)) {
        throw new DeployedStackError(
          `CloudFormation could not be reached at ${endpoint ?? `its ${options.region} endpoint`} to read the ${where} (${code}): check the network, or AWS_ENDPOINT_URL (a LocalStack running), or set DYNAMODB_ENDPOINT for a local store, or the *_TABLE variables`,
          { cause: error },
        );
      }
      if (isUnreadableAnswer(error)) throw notCloudFormation(error.$metadata.httpStatusCode, error);
      throw awsAccessRefusal(error, `DescribeStacks of the ${where}`) ?? error;
    }
    // CloudFormation answers a stack it names, or the ValidationError above.
    const stack = stacks?.[0];
    if (stack === undefined) throw notCloudFormation(undefined);
    const outputs = new Map((stack.Outputs ?? []).map((output) => [output.OutputKey, output.OutputValue]));
    const tables = {} as TableNames;
    const missing: string[] = [];
    for (const [key, outputKey] of Object.entries(TABLE_OUTPUTS) as [keyof TableNames, string][]) {
      const name = outputs.get(outputKey);
      if (name) tables[key] = name;
      else missing.push(outputKey);
    }
    if (missing.length > 0) {
      throw new DeployedStackError(`The ${where} has no output ${missing.join(', ')} (status ${stack.StackStatus ?? 'unknown'}); is it the gateway stack, fully deployed?`);
    }
    return tables;
  } finally {
    if (!options.client) client.destroy();
  }
}

/**
 * The config the admin CLI runs with. A local store (DYNAMODB_ENDPOINT) or any explicit
 * `*_TABLE` variable keeps the tables as configured; otherwise they are the deployed
 * stack's (GATEWAY_STACK_NAME, default the app's stack name, in the region withProfileRegion
 * resolved: AWS_REGION, AWS_DEFAULT_REGION or the AWS profile's).
 */
export async function withDeployedTables(config: GatewayConfig & { regionFrom?: string }, options: Pick<DeployedTablesOptions, 'client'> = {}): Promise<GatewayConfig> {
  if (config.dynamodbEndpoint !== undefined || config.tablesFromEnv) return config;
  const tables = await deployedTableNames({
    stackName: config.stackName ?? DEFAULT_STACK_NAME,
    region: config.region,
    ...(config.regionFrom ? { regionFrom: config.regionFrom } : {}),
    endpoint: config.awsEndpoints.cloudformation,
    client: options.client,
  });
  return { ...config, tables };
}
