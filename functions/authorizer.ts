import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authenticate } from '../shared/auth/authenticate.js';
import { loadConfig } from '../shared/config.js';
import { UnauthorizedError } from '../shared/errors.js';
import { createRepositories, type Repositories } from '../shared/storage/store.js';
import { lazy } from '../shared/lazy.js';

/**
 * The Lambda (TOKEN) authorizer. Allows the whole stage so that API Gateway can cache
 * the decision per key; the account ID, its zero-data-retention default and its rate
 * limit travel to the handler in the context (saving the handler a read per request).
 * Throwing "Unauthorized" is how API Gateway is told to answer 401.
 */
export function createAuthorizer(store: () => Pick<Repositories, 'apiKeys' | 'accounts'>) {
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    try {
      const principal = await authenticate(event.authorizationToken, store());
      return {
        principalId: principal.accountId,
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageWildcard(event.methodArn) }],
        },
        context: { ...principal },
      };
    } catch (error) {
      if (error instanceof UnauthorizedError) throw refusal();
      throw error;
    }
  };
}

/**
 * How API Gateway is told to answer 401: an invocation failed with "Unauthorized". Its stack
 * is that line only: Lambda's runtime logs a failed invocation's stack, and a refused key,
 * which anyone can send, is no fault of the gateway's to trace.
 */
function refusal(): Error {
  const error = new Error('Unauthorized');
  error.stack = 'Error: Unauthorized';
  return error;
}

/** arn:aws:execute-api:region:account:api/stage/METHOD/path -> arn:aws:execute-api:region:account:api/stage/* */
export function stageWildcard(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}

export const handler = createAuthorizer(lazy(() => createRepositories(loadConfig())));
