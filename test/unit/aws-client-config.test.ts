import { setFlagsFromString } from 'node:v8';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { HttpResponse, type HttpRequest } from '@smithy/core/protocols';
import { describe, expect, it } from 'vitest';
import { withFastConfig } from '../../shared/aws-client-config.js';
import { S3ClaimCheck } from '../../shared/claim-check/s3.js';
import { StepFunctionsWorkflow } from '../../shared/judging/step-functions.js';
import { createStoreClient } from '../../shared/storage/dynamodb.js';

// V8's own test of an object's mode, in a function compiled once the flag is set.
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;

const LOCAL = { region: 'local', endpoint: 'http://127.0.0.1:1', local: true };

/** The client a lazily loading class makes on its first use. */
async function loadedClient(owner: object, load: string): Promise<{ config: object }> {
  return (await (owner as Record<string, () => Promise<{ client: { config: object } }>>)[load]!()).client;
}

describe('Function: withFastConfig', () => {
  it('gives an SDK client the configuration it had, same object and members, in fast mode (the SDK leaves it in dictionary mode)', () => {
    // Prepare
    const client = new DynamoDBClient({ region: 'eu-west-1' });
    const config = client.config;
    const members = Object.entries(config);
    expect(hasFastProperties(config)).toBe(false);

    // Act
    const returned = withFastConfig(client);

    // Assert
    expect(returned).toBe(client);
    expect(client.config).toBe(config);
    expect(Object.entries(config)).toEqual(members);
    expect(Object.getPrototypeOf(config)).toBe(Object.prototype);
    expect(hasFastProperties(config)).toBe(true);
    client.destroy();
  });

  it('keeps both store clients fast through their calls', async () => {
    // Prepare: a store that answers every call with an empty item.
    const answers: string[] = [];
    const requestHandler = {
      handle: async (request: HttpRequest) => {
        answers.push(String(request.headers['x-amz-target']));
        return { response: new HttpResponse({ statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from('{}') }) };
      },
      updateHttpClientConfig: () => undefined,
      httpHandlerConfigs: () => ({}),
    };
    const store = createStoreClient({ ...LOCAL, requestHandler });

    // Act
    for (let call = 0; call < 3; call++) {
      await store.items.send(new GetItemCommand({ TableName: 'gateway-accounts', Key: { accountId: { S: 'acct_1' } } }));
      await store.documents.send(new GetCommand({ TableName: 'gateway-accounts', Key: { accountId: 'acct_1' } }));
    }

    // Assert: the document client sends through its own DynamoDBClient's configuration.
    expect(answers).toEqual(Array(6).fill('DynamoDB_20120810.GetItem'));
    expect(hasFastProperties(store.items.config)).toBe(true);
    expect(hasFastProperties(store.documents.config)).toBe(true);
    store.destroy();
  });

  it('is given to the clients the judging workflow and the claim-check store make', async () => {
    // Prepare
    const workflow = new StepFunctionsWorkflow({ stateMachineArn: 'arn:aws:states:eu-west-1:1:stateMachine:Judge', region: 'eu-west-1' });
    const claims = new S3ClaimCheck('claims', { region: 'eu-west-1' });

    // Act
    const clients = [await loadedClient(workflow, 'sfn'), await loadedClient(claims, 's3')];

    // Assert
    for (const client of clients) expect(hasFastProperties(client.config)).toBe(true);
  });
});
