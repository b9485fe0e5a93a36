/**
 * The name `cdk deploy` gives the stack (infra/app.ts); the admin CLI looks its outputs up
 * under this name unless GATEWAY_STACK_NAME says otherwise. A module of its own so that
 * the CLI can read it without loading aws-cdk-lib.
 */
export const DEFAULT_STACK_NAME = 'ModelCompareGateway';
