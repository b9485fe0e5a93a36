import { CloudFormationClient, CloudFormationServiceException, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeployedStackError, TABLE_OUTPUTS, deployedTableNames, withDeployedTables } from '../../infra/admin/deployed-tables.js';
import { tableNameOutputId } from '../../infra/stack/data.js';
import { DEFAULT_STACK_NAME } from '../../infra/stack/stack-name.js';
import { loadConfig, type TableNames } from '../../shared/config.js';
import { TABLES } from '../../shared/storage/tables.js';
import { AwsAccessError } from '../../infra/admin/aws-access.js';

const cloudFormation = mockClient(CloudFormationClient);

const DEPLOYED: TableNames = {
  accounts: 'ModelCompareGateway-Dataaccounts8C353CD3-1A2B3C',
  apiKeys: 'ModelCompareGateway-DataapiKeysF790ECC1-4D5E6F',
  ledger: 'ModelCompareGateway-DataledgerA066B167-7G8H9I',
  idempotency: 'ModelCompareGateway-DataidempotencyF4D089FD-J1K2L3',
  promptLogs: 'ModelCompareGateway-DatapromptLogs017E57BE-P7Q8R9',
};

/** DescribeStacks as CloudFormation answers it for the deployed gateway (outputs of other kinds included). */
function describeStacksOutput(tables: Partial<TableNames> = DEPLOYED, stackName = DEFAULT_STACK_NAME) {
  return {
    Stacks: [
      {
        StackName: stackName,
        StackId: `arn:aws:cloudformation:eu-west-1:123456789012:stack/${stackName}/0f1e2d3c`,
        CreationTime: new Date('2026-11-01T00:00:00Z'),
        StackStatus: 'UPDATE_COMPLETE' as const,
        Outputs: [
          { OutputKey: 'ApiUrl', OutputValue: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/' },
          { OutputKey: 'ProviderSecretArn', OutputValue: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ProviderKeys-AbC' },
          ...Object.entries(tables).map(([key, name]) => ({ OutputKey: TABLE_OUTPUTS[key as keyof TableNames], OutputValue: name })),
        ],
      },
    ],
  };
}

beforeEach(() => cloudFormation.reset());
afterEach(() => cloudFormation.reset());

describe('Constant: TABLE_OUTPUTS', () => {
  it('names the outputs the stack declares for every table', () => {
    expect(Object.keys(TABLE_OUTPUTS).sort()).toEqual(TABLES.map((t) => t.key).sort());
    for (const { key } of TABLES) expect(TABLE_OUTPUTS[key]).toBe(tableNameOutputId(key));
  });
});

describe('Function: deployedTableNames', () => {
  it('reads every table name from the stack outputs with one DescribeStacks', async () => {
    // Prepare
    cloudFormation.on(DescribeStacksCommand, { StackName: 'GatewayStaging' }).resolves(describeStacksOutput(DEPLOYED, 'GatewayStaging'));

    // Act
    const tables = await deployedTableNames({ stackName: 'GatewayStaging', region: 'eu-west-1', client: new CloudFormationClient({ region: 'eu-west-1' }) });

    // Assess
    expect(tables).toEqual(DEPLOYED);
    expect(cloudFormation.commandCalls(DescribeStacksCommand).map((call) => call.args[0].input)).toEqual([{ StackName: 'GatewayStaging' }]);
  });

  it('says which stack and region it looked in when the stack does not exist', async () => {
    cloudFormation
      .on(DescribeStacksCommand)
      .rejects(new CloudFormationServiceException({ name: 'ValidationError', $fault: 'client', $metadata: {}, message: 'Stack with id Nope does not exist' }));
    const lookup = deployedTableNames({ stackName: 'Nope', region: 'eu-west-1' });
    await expect(lookup).rejects.toBeInstanceOf(DeployedStackError);
    await expect(lookup).rejects.toThrow(/No stack Nope in eu-west-1: deploy it .*GATEWAY_STACK_NAME/);
  });

  it('says where to point it when there are no AWS credentials at all: a local store, or credentials', async () => {
    cloudFormation.on(DescribeStacksCommand).rejects(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }));
    const lookup = deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1' });
    await expect(lookup).rejects.toBeInstanceOf(DeployedStackError);
    await expect(lookup).rejects.toThrow(
      /No AWS credentials to read the stack .* in eu-west-1 with \(the SDK: Could not load credentials from any providers\): set DYNAMODB_ENDPOINT for a local store/,
    );
  });

  it("repeats the SDK's reason: an SSO session that expired, and the command that renews it", async () => {
    const reason =
      'The SSO session associated with this profile has expired or is otherwise invalid. To refresh this SSO session run aws sso login with the corresponding profile.';
    cloudFormation.on(DescribeStacksCommand).rejects(Object.assign(new Error(reason), { name: 'CredentialsProviderError' }));
    await expect(deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1' })).rejects.toThrow(`(the SDK: ${reason})`);
  });

  it.each([
    ['ENOTFOUND', undefined, /CloudFormation could not be reached at its eu-west-1 endpoint to read the stack .* \(ENOTFOUND\): check the network/],
    ['ECONNREFUSED', 'http://127.0.0.1:4566', /CloudFormation could not be reached at http:\/\/127\.0\.0\.1:4566 .* \(ECONNREFUSED\): .*AWS_ENDPOINT_URL \(a LocalStack running\)/],
    ['ETIMEDOUT', 'http://10.255.255.1:4566', /CloudFormation could not be reached at http:\/\/10\.255\.255\.1:4566 .* \(ETIMEDOUT\)/],
  ])('says where it looked for CloudFormation when it cannot be reached (%s), as the stack error', async (code, endpoint, message) => {
    cloudFormation.on(DescribeStacksCommand).rejects(Object.assign(new Error(`connect ${code}`), { code }));
    const lookup = deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1', ...(endpoint ? { endpoint } : {}) });
    await expect(lookup).rejects.toBeInstanceOf(DeployedStackError);
    await expect(lookup).rejects.toThrow(message);
  });

  it("names credentials AWS refused as the CLI's access error, and rethrows any other failure as it is (throttling)", async () => {
    const denied = Object.assign(new Error('not authorized to perform: cloudformation:DescribeStacks'), { name: 'AccessDenied' });
    cloudFormation.on(DescribeStacksCommand).rejects(denied);
    await expect(deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1' })).rejects.toBeInstanceOf(AwsAccessError);
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'Throttling' });
    cloudFormation.on(DescribeStacksCommand).rejects(throttled);
    await expect(deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1' })).rejects.toBe(throttled);
    // A connection that broke may pass: not "no stack".
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    cloudFormation.on(DescribeStacksCommand).rejects(reset);
    await expect(deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1' })).rejects.toBe(reset);
  });

  it('names the outputs a stack lacks (another stack, or one not fully deployed)', async () => {
    const { ledger: _ledger, promptLogs: _logs, ...partial } = DEPLOYED;
    cloudFormation.on(DescribeStacksCommand).resolves(describeStacksOutput(partial));
    await expect(deployedTableNames({ stackName: DEFAULT_STACK_NAME, region: 'eu-west-1' })).rejects.toThrow(
      /no output LedgerTableName, PromptLogsTableName \(status UPDATE_COMPLETE\)/,
    );
  });
});

describe('Function: withDeployedTables', () => {
  it('uses the stack infra/app.ts deploys, in AWS_REGION, when nothing else names the tables', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves(describeStacksOutput());
    const config = await withDeployedTables(loadConfig({ AWS_REGION: 'eu-west-1' }));
    expect(config.tables).toEqual(DEPLOYED);
    expect(cloudFormation.commandCalls(DescribeStacksCommand)[0]!.args[0].input).toEqual({ StackName: 'ModelCompareGateway' });
  });

  it('uses GATEWAY_STACK_NAME when set', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves(describeStacksOutput(DEPLOYED, 'GatewayStaging'));
    await withDeployedTables(loadConfig({ GATEWAY_STACK_NAME: 'GatewayStaging' }));
    expect(cloudFormation.commandCalls(DescribeStacksCommand)[0]!.args[0].input).toEqual({ StackName: 'GatewayStaging' });
  });

  it.each([
    ['DYNAMODB_ENDPOINT (a local store)', { DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }],
    ['an explicit *_TABLE variable', { ACCOUNTS_TABLE: 'my-accounts' }],
  ])('asks CloudFormation nothing with %s', async (_, env) => {
    const config = loadConfig(env);
    expect(await withDeployedTables(config)).toBe(config);
    expect(cloudFormation.commandCalls(DescribeStacksCommand)).toHaveLength(0);
  });
});
