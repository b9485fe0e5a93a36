import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { settingsFromContext } from './stack/context.js';
import { SettingsError } from './stack/settings-error.js';
import { GatewayStack } from './stack/gateway-stack.js';
import { DEFAULT_STACK_NAME } from './stack/stack-name.js';

/**
 * The CDK app (`cdk synth`, `cdk deploy`). Settings come from context (see
 * infra/stack/context.ts), defaults from the stack. cdk-nag's AWS Solutions pack runs on
 * every synth; an unacknowledged error stops it.
 */
const app = new App();

try {
  new GatewayStack(app, DEFAULT_STACK_NAME, {
    description: 'Model comparison gateway: POST /api/v1/prompt on API Gateway, Lambda and DynamoDB',
    ...settingsFromContext(app.node),
  });
} catch (error) {
  if (!(error instanceof SettingsError)) throw error;
  // A value the operator gave: its one line is the whole story.
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
