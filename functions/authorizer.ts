import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authenticate } from '../shared/auth/authenticate.js';
import { loadConfig } from '../shared/config.js';
import { UnauthorizedError } from '../shared/errors.js';
import { createGateway, type Gateway } from '../shared/gateway.js';
import { lazy } from './lazy.js';

/**
 * The Lambda (TOKEN) authorizer. Allows the whole stage so that API Gateway can cache
 * the decision per key; the account ID travels to the handler in the context.
 * Throwing "Unauthorized" is how API Gateway is told to answer 401.
 */
export function createAuthorizer(gateway: () => Gateway) {
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    try {
      const { accountId } = await authenticate(event.authorizationToken, gateway().apiKeys);
      return {
        principalId: accountId,
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageWildcard(event.methodArn) }],
        },
        context: { accountId },
      };
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new Error('Unauthorized');
      throw error;
    }
  };
}

/** arn:aws:execute-api:region:account:api/stage/METHOD/path -> arn:aws:execute-api:region:account:api/stage/* */
export function stageWildcard(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}

export const handler = createAuthorizer(lazy(() => createGateway(loadConfig())));
