import { getProfileName, loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } from '@smithy/core/config';
import type { GatewayConfig } from '../../shared/config.js';

/**
 * The admin CLI's config with its region resolved as the AWS SDK and CLI resolve it: AWS_REGION
 * (or AWS_DEFAULT_REGION), else the `region` of the selected profile (AWS_PROFILE, else
 * `default`) in the shared config and credentials files (~/.aws/config, AWS_CONFIG_FILE), read
 * by the SDK's own loader; else us-east-1, as before. Without this an operator whose profile
 * names eu-west-1 would be pointed at us-east-1, and at a stack of the same name there.
 * A local store (DYNAMODB_ENDPOINT) needs no region: nothing is read then.
 */
export async function withProfileRegion(config: GatewayConfig): Promise<GatewayConfig & { regionFrom: string }> {
  if (config.regionSource !== 'default' || config.dynamodbEndpoint !== undefined) {
    return { ...config, regionFrom: config.regionSource === 'default' ? 'the default' : `from ${config.regionSource}` };
  }
  const profile = getProfileName({});
  // The SDK's loader and its selector of the profile's region (the variables were read by
  // loadConfig already, empty ones as unset), without its last resort, the EC2 instance
  // metadata service: an operator's machine is seldom an instance, and its 1 s timeout would
  // delay every command.
  const fromProfile = loadConfig<string | undefined>(
    { environmentVariableSelector: () => undefined, configFileSelector: NODE_REGION_CONFIG_OPTIONS.configFileSelector, default: () => undefined },
    NODE_REGION_CONFIG_FILE_OPTIONS,
  );
  const region = await fromProfile().catch(() => undefined);
  if (typeof region !== 'string' || region === '') {
    return { ...config, regionFrom: `the default: no AWS_REGION, AWS_DEFAULT_REGION or region in profile ${profile}` };
  }
  return { ...config, region, regionFrom: `from profile ${profile}` };
}
