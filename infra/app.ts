import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { settingsFromContext } from './stack/context.js';
import { GatewayStack } from './stack/gateway-stack.js';
import { DEFAULT_STACK_NAME } from './stack/stack-name.js';

/**
 * The CDK app (`cdk synth`, `cdk deploy`). Settings come from context (see
 * infra/stack/context.ts), defaults from the stack. cdk-nag's AWS Solutions pack runs on
 * every synth; an unacknowledged error stops it.
 */
const app = new App();

new GatewayStack(app, DEFAULT_STACK_NAME, {
  description: 'Model comparison gateway: POST /api/v1/prompt on API Gateway, Lambda and DynamoDB',
  ...settingsFromContext(app.node),
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
